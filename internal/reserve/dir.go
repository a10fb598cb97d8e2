package reserve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnvLockDir is the environment variable that, when set, names the lock
// directory DefaultDir returns.
const EnvLockDir = "NVGO_LOCK_DIR"

// sharedMode is the mode of a lock directory DefaultDir creates: writable by
// every user, with the sticky bit so that users cannot delete each other's
// lock files (the same as /tmp).
const sharedMode = 0o777 | fs.ModeSticky

// defaultDirs are DefaultDir's candidates when EnvLockDir is unset, best
// first.
func defaultDirs() []string {
	return []string{
		"/run/lock/nvgo",
		filepath.Join(os.TempDir(), "nvgo-locks"),
	}
}

// DefaultDir returns the directory where launchers on this machine keep
// their reservations, creating it if needed.
//
// Every launcher on the machine, whichever user runs it, must use the same
// directory, or two of them could take the same GPU. DefaultDir therefore
// chooses, in order:
//
//  1. $NVGO_LOCK_DIR if set. Missing directories are created; the last one
//     is made shared (mode 1777). If it is unusable DefaultDir fails rather
//     than fall back, since the setting was explicit.
//  2. /run/lock/nvgo, created with mode 1777 (world-writable, sticky, like
//     /tmp) if missing. /run/lock is a tmpfs that every user may write on
//     most Linux systems.
//  3. nvgo-locks under os.TempDir, created the same way; it too is shared by
//     all users of the machine (unless TMPDIR differs between them, as on
//     macOS).
//
// A candidate is used only if this process can create a file in it; an
// existing directory's mode is never changed. If an administrator created
// /run/lock/nvgo with a mode that lets only some users write, the others
// fall back to the next candidate and no longer see those users'
// reservations: create it with mode 1777, or set NVGO_LOCK_DIR for everyone.
// See the package documentation for the security implications.
func DefaultDir() (string, error) {
	if dir := os.Getenv(EnvLockDir); dir != "" {
		if err := prepareDir(dir, true); err != nil {
			return "", fmt.Errorf("reserve: %s=%s: %w", EnvLockDir, dir, err)
		}
		return dir, nil
	}
	return firstUsableDir(defaultDirs())
}

// Dir returns the lock directory to use: dir when it is not empty, else
// DefaultDir. A named directory gets the rule $NVGO_LOCK_DIR gets, however
// it was named: missing directories are created (the last one shared, mode
// 1777), symbolic links are followed, and it must let this process create
// files; there is no fallback from an explicit choice.
func Dir(dir string) (string, error) {
	if dir == "" {
		return DefaultDir()
	}
	if err := prepareDir(dir, true); err != nil {
		return "", fmt.Errorf("reserve: lock directory: %w", err)
	}
	return dir, nil
}

// firstUsableDir returns the first of candidates that prepareDir accepts.
func firstUsableDir(candidates []string) (string, error) {
	var errs []error
	for _, dir := range candidates {
		err := prepareDir(dir, false)
		if err == nil {
			return dir, nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("reserve: no usable lock directory (set %s): %w", EnvLockDir, errors.Join(errs...))
}

// prepareDir creates dir if it is missing and checks that this process can
// create files in it. A chosen (explicit) dir may be reached through
// symbolic links and have its parents created; a default one must already
// have its parent and must not be a symbolic link, which anyone could plant
// in /tmp.
func prepareDir(dir string, chosen bool) error {
	stat := os.Lstat
	if chosen {
		stat = os.Stat
	}
	fi, err := stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := makeSharedDir(dir, chosen); err != nil {
			return err
		}
		fi, err = stat(dir)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is %s, not a directory", dir, kindOf(fi.Mode()))
	}
	probe, err := os.CreateTemp(dir, ".probe-")
	if err != nil {
		return err
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// kindOf names the kind of file a mode describes, for messages.
func kindOf(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// makeSharedDir creates dir with sharedMode. It builds the directory under a
// temporary name and renames it into place, so that no concurrent launcher
// sees it before chmod has undone the umask and falls back elsewhere.
func makeSharedDir(dir string, parents bool) error {
	parent := filepath.Dir(dir)
	if parents {
		if err := os.MkdirAll(parent, 0o777); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp, sharedMode); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.Remove(tmp)
		if _, serr := os.Lstat(dir); serr == nil {
			return nil // another launcher created it first
		}
		return err
	}
	return nil
}
