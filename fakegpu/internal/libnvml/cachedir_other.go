//go:build !unix

package libnvml

import (
	"errors"
	"os"
)

// checkPrivateDir returns an error unless dir is a directory (not a link
// to one).
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a directory")
	}
	return nil
}
