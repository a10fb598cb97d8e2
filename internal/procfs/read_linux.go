package procfs

import (
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// ReadFile reads a small procfs file, process pid's file name (the
// machine's for pid 0), into buf with one open, one read and one close,
// allocating nothing: procfs hands such a file over whole in one read when
// the buffer holds it. A file that fills buf is one it could not hold: the
// error is then TooBig.
func (fs FS) ReadFile(pid int, name string, buf []byte) ([]byte, error) {
	fd, err := fs.open(pid, name)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	return fs.pread(fd, buf, pid, name)
}

// open opens process pid's file name for reading, close-on-exec.
func (fs FS) open(pid int, name string) (int, error) {
	var p [256]byte
	n := copy(p[:], fs.root())
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
		return -1, &Error{Op: "open", Path: fs.Path(pid, name), Err: e}
	}
	return int(r), nil
}

// pread reads the whole of an open procfs file into buf from its start:
// procfs builds the file afresh for a read at offset 0, so one pread is
// one fresh reading. A file that fills buf is one buf cannot hold.
func (fs FS) pread(fd int, buf []byte, pid int, name string) ([]byte, error) {
	var got int
	for {
		if len(buf) == 0 {
			return nil, &Error{Op: "read", Path: fs.Path(pid, name), Err: syscall.EFBIG}
		}
		r, _, e := syscall.Syscall6(syscall.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&buf[got])), uintptr(len(buf)-got), uintptr(got), 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return nil, &Error{Op: "read", Path: fs.Path(pid, name), Err: e}
		}
		got += int(r)
		if r == 0 || got < len(buf) {
			return buf[:got], nil
		}
		return nil, &Error{Op: "read", Path: fs.Path(pid, name), Err: syscall.EFBIG}
	}
}

// MaxStatFiles bounds the stat files kept open by the whole process, so
// that a machine with very many GPU processes does not run the process out
// of file descriptors: past it, a process's stat is read by path (three
// system calls instead of one).
const MaxStatFiles = 4096

// openStatFiles counts the stat files open now.
var openStatFiles atomic.Int64

// OpenStatFiles returns how many stat files are kept open now.
func OpenStatFiles() int64 { return openStatFiles.Load() }

// StatFile is a process's /proc/PID/stat kept open, so that reading it
// again costs one pread instead of an open, a read and a close. The
// descriptor stays bound to the process it was opened for: once that
// process has gone, a read fails (ESRCH) even when its PID has been given
// to another, so a kept file never reads a newcomer as the old process.
// It is safe for concurrent use.
type StatFile struct {
	mu  sync.RWMutex
	fs  FS
	fd  int // -1 once closed
	pid int
}

// OpenStat opens pid's stat file to be kept, or returns nil when
// MaxStatFiles are open or it cannot be opened (the caller then reads by
// path, which says why).
func (fs FS) OpenStat(pid int) *StatFile {
	if openStatFiles.Add(1) > MaxStatFiles {
		openStatFiles.Add(-1)
		return nil
	}
	fd, err := fs.open(pid, "stat")
	if err != nil {
		openStatFiles.Add(-1)
		return nil
	}
	return &StatFile{fs: fs, fd: fd, pid: pid}
}

// Read reads the file afresh into buf.
func (f *StatFile) Read(buf []byte) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.fd < 0 {
		return nil, syscall.EBADF
	}
	return f.fs.pread(f.fd, buf, f.pid, "stat")
}

// Close closes the file; reads then fail. It may be called more than once,
// and on nil.
func (f *StatFile) Close() {
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
