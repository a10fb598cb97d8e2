package reserve

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// maxHolderInfo bounds how much of a lock file Holder reads.
const maxHolderInfo = 256

// Holder reports whether the reservation for key in dir is held, and if so
// the PID of the process that took it and when, as that process wrote them
// into the lock file. pid and since are informational and zero when unknown;
// after a handoff to a child (see the package documentation) pid names the
// process that took the lock, which may since have exited while the child
// still holds it. held comes from the kernel and is authoritative.
//
// Holder probes with a shared flock on a fresh descriptor and releases it at
// once, so a lock held by this very process through its Lock also counts as
// held. During that brief probe a concurrent TryLock on the same key reports
// ErrBusy; do not poll Holder in a tight loop beside launchers.
//
// A missing lock file means the reservation is not held.
func Holder(dir, key string) (pid int, since time.Time, held bool, err error) {
	if err := checkKey(key); err != nil {
		return 0, time.Time{}, false, err
	}
	path := filepath.Join(dir, key+lockSuffix)
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, time.Time{}, false, nil
	}
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("reserve: %w", err)
	}
	if err := checkRegular(f); err != nil {
		return 0, time.Time{}, false, fmt.Errorf("reserve: %w", err)
	}
	defer f.Close()
	busy, err := tryFlock(f, false)
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("reserve: %w", err)
	}
	if !busy {
		return 0, time.Time{}, false, nil
	}
	pid, since = parseHolder(io.NewSectionReader(f, 0, maxHolderInfo))
	return pid, since, true, nil
}

// parseHolder reads what writeHolder wrote: "<pid> <RFC 3339 time>\n".
// Anything unreadable is reported as zero.
func parseHolder(r io.Reader) (pid int, since time.Time) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, time.Time{}
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 0, time.Time{}
	}
	pid, err = strconv.Atoi(fields[0])
	if err != nil || pid <= 0 {
		return 0, time.Time{}
	}
	since, err = time.Parse(time.RFC3339Nano, fields[1])
	if err != nil {
		return pid, time.Time{}
	}
	return pid, since
}
