package reserve

import (
	"fmt"
	"strings"
)

// lockSuffix is appended to a key to name its lock file.
const lockSuffix = ".lock"

// maxKeyLen keeps <key>.lock within NAME_MAX (255 bytes).
const maxKeyLen = 255 - len(lockSuffix)

// checkKey reports whether key is a safe single file name: a GPU UUID such as
// "GPU-5f7d…" or "MIG-…" passes; anything that could leave the directory,
// hide the file or truncate the name does not.
func checkKey(key string) error {
	var why string
	switch {
	case key == "":
		why = "empty"
	case strings.HasPrefix(key, "."):
		why = "starts with a dot"
	case strings.Contains(key, ".."):
		why = `contains ".."`
	case strings.ContainsRune(key, '/'):
		why = "contains a slash"
	case strings.ContainsRune(key, 0):
		why = "contains a NUL byte"
	case len(key) > maxKeyLen:
		why = fmt.Sprintf("longer than %d bytes", maxKeyLen)
	default:
		return nil
	}
	return fmt.Errorf("reserve: %w %q: %s", ErrBadKey, key, why)
}
