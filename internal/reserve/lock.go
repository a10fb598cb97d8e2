package reserve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Lock is a held reservation: an exclusive flock on <dir>/<key>.lock.
//
// A Lock is safe for concurrent use by multiple goroutines.
type Lock struct {
	key  string
	path string

	mu sync.Mutex
	f  *os.File // nil once unlocked
}

// Key returns the key the Lock was taken for.
func (l *Lock) Key() string { return l.key }

// Path returns the lock file's path.
func (l *Lock) Path() string { return l.path }

// File returns the open lock file, or nil after Unlock. It is meant for
// exec.Cmd.ExtraFiles: a child that inherits it shares the open file
// description and therefore the lock (see the package documentation). Do not
// close it; call Unlock, and only after cmd.Start has returned.
func (l *Lock) File() *os.File {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f
}

// Unlock closes this Lock's descriptor. Calling it again does nothing.
//
// The kernel releases the lock when the last descriptor referring to the
// same open file description is closed. Unlock releases the reservation at
// once only if no other descriptor exists: when a child process inherited the
// file through File, the reservation lasts until the child (and whatever it
// passed the descriptor on to) closes it or exits. Unlock deliberately does
// not call flock(LOCK_UN), which would drop the lock for the child as well.
func (l *Lock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	if err != nil {
		return fmt.Errorf("reserve: unlock %s: %w", l.key, err)
	}
	return nil
}

// ExtraFiles returns the locks' files in order, for exec.Cmd.ExtraFiles:
// locks[i] becomes descriptor 3+i in the child when the slice is used as is.
// An unlocked Lock gives nil, which leaves that descriptor closed in the child.
func ExtraFiles(locks []*Lock) []*os.File {
	files := make([]*os.File, len(locks))
	for i, l := range locks {
		files[i] = l.File()
	}
	return files
}

// testHookAfterOpen, when set by a test, runs between TryLock's open and its
// flock: where another process may replace the file.
var testHookAfterOpen func()

// maxReopen bounds how often TryLock starts over when the lock file is
// replaced between its open and its flock.
const maxReopen = 8

// TryLock takes the reservation for key in dir without waiting: it creates
// <dir>/<key>.lock if needed and takes an exclusive flock on it. The error
// matches ErrBusy if any other open file description holds the lock, in
// another process or in this one; ErrBadKey if key is not a safe file name
// (empty, starting with a dot, containing "..", "/" or NUL). GPU and MIG
// UUIDs are good keys.
//
// After locking, TryLock writes this process's PID and the time into the
// file, for Holder; that is informational and its failure is ignored.
func TryLock(dir, key string) (*Lock, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, key+lockSuffix)
	// The cause names the file; callers name the key or the device.
	unusable := func(err error) error { return fmt.Errorf("%w: %w", ErrUnusableFile, err) }
	for range maxReopen {
		f, writable, err := openLockFile(path)
		if err != nil {
			return nil, unusable(err)
		}
		if testHookAfterOpen != nil {
			testHookAfterOpen()
		}
		busy, err := tryFlock(f, true)
		if busy {
			f.Close()
			return nil, fmt.Errorf("reserve: %s: %w", key, ErrBusy)
		}
		if err != nil {
			f.Close()
			return nil, unusable(err)
		}
		// A lock on a file that was unlinked or replaced since the open
		// guards nothing: the next launcher would lock the new file.
		linked, err := stillLinked(f, path)
		if err != nil {
			f.Close()
			return nil, unusable(err)
		}
		if !linked {
			f.Close()
			continue
		}
		if writable {
			writeHolder(f)
		}
		return &Lock{key: key, path: path, f: f}, nil
	}
	return nil, fmt.Errorf("reserve: %s: lock file keeps being replaced", path)
}

// openLockFile opens path for locking, creating it if missing, and reports
// whether it is open for writing.
func openLockFile(path string) (f *os.File, writable bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|openFlags, 0o666)
	if err == nil {
		if err := checkRegular(f); err != nil {
			return nil, false, err
		}
		// Undo the umask so that other users can open the file too. This
		// fails harmlessly when the file belongs to another user.
		_ = f.Chmod(0o666)
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrPermission) {
		return nil, false, err
	}
	// The file exists and belongs to another user: a sticky directory may
	// refuse O_CREAT on it (Linux fs.protected_regular), or its mode may deny
	// writing. flock works on a read-only descriptor.
	for _, flag := range []int{os.O_RDWR, os.O_RDONLY} {
		f, err2 := os.OpenFile(path, flag|openFlags, 0)
		if err2 == nil {
			if err := checkRegular(f); err != nil {
				return nil, false, err
			}
			return f, flag == os.O_RDWR, nil
		}
		if !errors.Is(err2, fs.ErrPermission) {
			break
		}
	}
	return nil, false, err
}

// checkRegular closes f and fails unless it is a regular file.
func checkRegular(f *os.File) error {
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is %s, not a regular file", f.Name(), kindOf(fi.Mode()))
	}
	if err != nil {
		f.Close()
	}
	return err
}

// stillLinked reports whether path still names the file open as f.
func stillLinked(f *os.File, path string) (bool, error) {
	open, err := f.Stat()
	if err != nil {
		return false, err
	}
	named, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(open, named), nil
}

// writeHolder records this process and the time in the lock file, best
// effort. The file offset is shared with any child the file is handed to, so
// it writes at an explicit offset.
func writeHolder(f *os.File) {
	info := fmt.Sprintf("%d %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))
	if f.Truncate(0) == nil {
		_, _ = f.WriteAt([]byte(info), 0)
	}
}
