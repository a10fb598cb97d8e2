package reserve

import (
	"errors"
	"fmt"
)

var (
	// ErrBusy: another open file description, in this process or another,
	// holds the lock.
	ErrBusy = errors.New("reservation busy")
	// ErrNotEnough: TryLockFirst could not take as many locks as asked for.
	ErrNotEnough = errors.New("not enough free reservations")
	// ErrBadKey: the key cannot be used as a lock file name.
	ErrBadKey = errors.New("bad reservation key")
	// ErrUnusableFile: the key's lock file cannot be locked, though the
	// directory can (something else planted at its path: a FIFO, a
	// symbolic link, a directory, a file this user may not open).
	ErrUnusableFile = errors.New("unusable lock file")
)

// ShortError is TryLockFirst's error when it could not take as many locks
// as asked for; it matches ErrNotEnough. Busy keys were held by others, so
// a caller racing other launchers may try again once they let go.
type ShortError struct {
	Want, Keys           int // locks asked for, keys offered
	Free, Busy, Rejected int // keys taken (then released), held by others, refused by accept
	Unusable             int // keys whose lock file could not be locked (ErrUnusableFile)
}

func (e *ShortError) Error() string {
	s := fmt.Sprintf("reserve: %v: want %d of %d keys, %d free, %d busy, %d rejected",
		ErrNotEnough, e.Want, e.Keys, e.Free, e.Busy, e.Rejected)
	if e.Unusable > 0 {
		s += fmt.Sprintf(", %d with an unusable lock file", e.Unusable)
	}
	return s
}

// Is makes the error match ErrNotEnough.
func (e *ShortError) Is(target error) bool { return target == ErrNotEnough }
