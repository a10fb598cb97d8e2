//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reserve

import (
	"errors"
	"os"
	"syscall"
)

// openFlags are added to every open of a lock file: O_NOFOLLOW so a planted
// symbolic link cannot redirect the informational write, O_NONBLOCK so a
// planted FIFO cannot hang the open (it has no effect on regular files).
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK | syscall.O_CLOEXEC

// tryFlock takes an exclusive or shared flock on f without waiting. It
// reports busy when another open file description holds a conflicting lock.
func tryFlock(f *os.File, exclusive bool) (busy bool, err error) {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false, err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return false, err
	}
	if errors.Is(ferr, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if ferr != nil {
		return false, &os.PathError{Op: "flock", Path: f.Name(), Err: ferr}
	}
	return false, nil
}
