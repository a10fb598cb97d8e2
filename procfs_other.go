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
