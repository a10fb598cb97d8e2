package nvgo

import (
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// readProcFile reads a small procfs file, <root>/<pid>/<name> (or
// <root>/<name> for pid 0), into buf with one open, one read and one close,
// allocating nothing: procfs hands such a file over whole in one read when
// the buffer holds it. It returns what was read, or an error: a file that
// fills buf is one it could not hold.
func readProcFile(buf []byte, pid int32, name string) ([]byte, error) {
	fd, err := openProcFile(pid, name)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return preadProcFile(fd, buf, pid, name)
}

// procFilePath names <root>/<pid>/<name> (<root>/<name> for pid 0) in
// errors.
func procFilePath(pid int32, name string) string {
	if pid == 0 {
		return procPath(name)
	}
	return procPath(strconv.Itoa(int(pid)), name)
}

// openProcFile opens <root>/<pid>/<name> (or <root>/<name> for pid 0) for
// reading, close-on-exec.
func openProcFile(pid int32, name string) (int, error) {
	var p [256]byte
	n := copy(p[:], procRoot())
	if pid != 0 {
		n += copy(p[n:], "/")
		n += len(strconv.AppendInt(p[n:n], int64(pid), 10))
	}
	n += copy(p[n:], "/")
	n += copy(p[n:], name)
	if n >= len(p) {
		return -1, syscall.ENAMETOOLONG
	}
	p[n] = 0
	dirfd := -100 // AT_FDCWD: relative to the working directory
	r, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&p[0])),
		uintptr(syscall.O_RDONLY|syscall.O_CLOEXEC), 0, 0, 0)
	if e != 0 {
		return -1, &procError{op: "open", path: procFilePath(pid, name), err: e}
	}
	return int(r), nil
}

// preadProcFile reads the whole of an open procfs file into buf from its
// start: procfs builds the file afresh for a read at offset 0, so one
// pread is one fresh reading. A file that fills buf is one buf cannot hold.
func preadProcFile(fd int, buf []byte, pid int32, name string) ([]byte, error) {
	var got int
	for {
		r, _, e := syscall.Syscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&buf[got])), uintptr(len(buf)-got), uintptr(got), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return nil, &procError{op: "read", path: procFilePath(pid, name), err: e}
		}
		got += int(r)
		if r == 0 || got < len(buf) {
			return buf[:got], nil
		}
		return nil, &procError{op: "read", path: procFilePath(pid, name), err: syscall.EFBIG}
	}
}

// maxStatFiles bounds the stat files kept open by every table of the
// process together, so that a machine with very many GPU processes does not
// run the process out of file descriptors: past it, a process's stat is
// read by path (three system calls instead of one).
const maxStatFiles = 4096

// openStatFiles counts the stat files open now.
var openStatFiles atomic.Int64

// statFile is a process's /proc/<pid>/stat kept open, so that reading it
// again costs one pread instead of an open, a read and a close. The
// descriptor stays bound to the process it was opened for: once that
// process has gone, a read fails (ESRCH) even when its PID has been given
// to another, so a kept file never reads a newcomer as the old process.
// It is safe for concurrent use.
type statFile struct {
	mu  sync.RWMutex
	fd  int // -1 once closed
	pid int32
}

// openStatFile opens pid's stat file to be kept, or returns nil when the
// limit of kept files is reached or it cannot be opened (the caller then
// reads by path, which says why).
func openStatFile(pid int32) *statFile {
	if openStatFiles.Add(1) > maxStatFiles {
		openStatFiles.Add(-1)
		return nil
	}
	fd, err := openProcFile(pid, "stat")
	if err != nil {
		openStatFiles.Add(-1)
		return nil
	}
	return &statFile{fd: fd, pid: pid}
}

// read reads the file afresh into buf.
func (f *statFile) read(buf []byte) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.fd < 0 {
		return nil, syscall.EBADF
	}
	return preadProcFile(f.fd, buf, f.pid, "stat")
}

// close closes the file; reads then fail. It may be called more than once,
// and on nil.
func (f *statFile) close() {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fd >= 0 {
		syscall.Close(f.fd)
		f.fd = -1
		openStatFiles.Add(-1)
	}
}
