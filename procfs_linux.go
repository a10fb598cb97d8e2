package nvgo

import (
	"strconv"
	"syscall"
	"unsafe"
)

// readProcFile reads a small procfs file, <root>/<pid>/<name> (or
// <root>/<name> for pid 0), into buf with one open, one read and one close,
// allocating nothing: procfs hands such a file over whole in one read when
// the buffer holds it. It returns what was read, or an error: a file that
// fills buf is one it could not hold.
func readProcFile(buf []byte, pid int32, name string) ([]byte, error) {
	var path [256]byte
	n := copy(path[:], procRoot())
	if pid != 0 {
		n += copy(path[n:], "/")
		n += len(strconv.AppendInt(path[n:n], int64(pid), 10))
	}
	n += copy(path[n:], "/")
	n += copy(path[n:], name)
	if n >= len(path) {
		return nil, syscall.ENAMETOOLONG
	}
	path[n] = 0
	dirfd := -100 // AT_FDCWD: relative to the working directory
	fd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
		uintptr(syscall.O_RDONLY|syscall.O_CLOEXEC), 0, 0, 0)
	if e != 0 {
		return nil, &procError{op: "open", path: string(path[:n]), err: e}
	}
	var got int
	for {
		r, _, e := syscall.Syscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&buf[got])), uintptr(len(buf)-got))
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			syscall.Close(int(fd))
			return nil, &procError{op: "read", path: string(path[:n]), err: e}
		}
		got += int(r)
		if r == 0 || got < len(buf) {
			break
		}
		syscall.Close(int(fd))
		return nil, &procError{op: "read", path: string(path[:n]), err: syscall.EFBIG}
	}
	syscall.Close(int(fd))
	return buf[:got], nil
}
