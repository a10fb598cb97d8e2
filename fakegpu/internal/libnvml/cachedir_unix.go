//go:build unix

package libnvml

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// checkPrivateDir returns an error unless dir is a directory (not a link
// to one) that this user owns and no one else may write to.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return errors.New("not a directory")
	case !ok:
		return errors.New("its owner cannot be read")
	case int(st.Uid) != os.Getuid():
		return fmt.Errorf("owned by user %d, not by this user (%d)", st.Uid, os.Getuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("others may write to it (mode %v)", fi.Mode().Perm())
	}
	return nil
}
