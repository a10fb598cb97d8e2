//go:build !linux

package nvgo

import (
	"os"
	"strconv"
	"syscall"
)

// readProcFile reads a procfs file into buf (see the Linux version).
func readProcFile(buf []byte, pid int32, name string) ([]byte, error) {
	path := procPath(name)
	if pid != 0 {
		path = procPath(strconv.Itoa(int(pid)), name)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) > len(buf) {
		return nil, &procError{op: "read", path: path, err: syscall.EFBIG}
	}
	return buf[:copy(buf, b)], nil
}

// statFile is a kept-open stat file (see the Linux version); elsewhere none
// is kept and every stat is read by path.
type statFile struct{}

// openStatFile keeps no file open here.
func openStatFile(pid int32) *statFile { return nil }

// read is never called: openStatFile returns nil.
func (f *statFile) read(buf []byte) ([]byte, error) { return nil, syscall.EBADF }

// close does nothing.
func (f *statFile) close() {}
