// Package reserve gives cross-process GPU reservations built on flock(2).
//
// A reservation is an exclusive flock on one file per GPU, named
// <dir>/<key>.lock where key is the GPU (or MIG) UUID. Locks are only ever
// tried, never waited for: a launcher walks its candidate GPUs in order and
// takes the first free ones ([TryLockFirst]), so concurrent launchers in
// other processes never get the same GPU.
//
// # Lifetime
//
// flock locks belong to an open file description, not to a process or a
// path. Three consequences shape this package:
//
//   - The kernel drops the lock when the last descriptor for that file
//     description is closed, which includes the holder dying for any reason
//     (SIGKILL and the OOM killer included). There are no stale locks to
//     clean up, and lock files are never deleted: deleting a lock file while
//     someone holds it would let the next launcher lock a fresh file of the
//     same name and get the same GPU.
//   - A lock can be handed to a child process. Put the files from
//     [ExtraFiles] into exec.Cmd.ExtraFiles; entry i becomes descriptor 3+i in
//     the child, which then shares the same open file description and so the
//     same lock. Once cmd.Start has returned, the parent may call
//     [Lock.Unlock]: the reservation then lasts as long as the child, or any
//     process it passes the descriptor on to, keeps it open.
//     Programs that close inherited descriptors (sudo, for instance) end the
//     reservation early.
//   - Two open file descriptions of the same file conflict even within one
//     process, so [TryLock] twice on one key in one process reports the
//     second as busy, exactly as it would across processes.
//
// A [Lock] is also released if it becomes unreachable and the garbage
// collector finalizes its file; keep it referenced for as long as the
// reservation should last.
//
// # The shared directory
//
// Reservations work only if every launcher on the machine, whoever runs it,
// looks in the same directory; [DefaultDir] therefore picks a directory
// shared by all users (world-writable with the sticky bit, like /tmp), and
// lock files are created with mode 0666 so that any user can lock a file
// another user created.
//
// Security: lock files hold no secrets, only the PID and start time of the
// process that took the lock, for [Holder]. Advisory locking is cooperative:
// a hostile local user can hold locks to deny GPUs to others, or delete lock
// files they own to let two launchers share one GPU. Nothing here can stop
// that; a machine whose users do not trust each other needs a real scheduler.
// Lock files are opened with O_NOFOLLOW and must be regular files, so a
// planted symbolic link or FIFO cannot redirect the informational write or
// hang a launcher.
//
// The package needs flock(2): on platforms without it (Windows, Solaris)
// TryLock and Holder fail with an error matching [errors.ErrUnsupported].
package reserve
