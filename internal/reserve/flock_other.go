//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package reserve

import (
	"errors"
	"os"
)

const openFlags = 0

// tryFlock fails: this platform has no flock(2).
func tryFlock(f *os.File, exclusive bool) (busy bool, err error) {
	return false, &os.PathError{Op: "flock", Path: f.Name(), Err: errors.ErrUnsupported}
}
