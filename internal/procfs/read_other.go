//go:build !linux

package procfs

import (
	"os"
	"syscall"
)

// ReadFile reads a procfs file into buf (see the Linux version).
func (fs FS) ReadFile(pid int, name string, buf []byte) ([]byte, error) {
	b, err := os.ReadFile(fs.Path(pid, name))
	if err != nil {
		return nil, err
	}
	if len(b) >= len(buf) {
		return nil, &Error{Op: "read", Path: fs.Path(pid, name), Err: syscall.EFBIG}
	}
	return buf[:copy(buf, b)], nil
}

// MaxStatFiles is how many stat files are kept open: none here.
const MaxStatFiles = 0

// OpenStatFiles returns how many stat files are kept open: none here.
func OpenStatFiles() int64 { return 0 }

// StatFile is a kept-open stat file (see the Linux version); elsewhere none
// is kept and every stat is read by path.
type StatFile struct{}

// OpenStat keeps no file open here.
func (fs FS) OpenStat(pid int) *StatFile { return nil }

// Read is never called: OpenStat returns nil.
func (f *StatFile) Read(buf []byte) ([]byte, error) { return nil, syscall.EBADF }

// Close does nothing.
func (f *StatFile) Close() {}
