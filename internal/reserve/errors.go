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
)

// ShortError is TryLockFirst's error when it could not take as many locks
// as asked for; it matches ErrNotEnough. Busy keys were held by others, so
// a caller racing other launchers may try again once they let go.
type ShortError struct {
	Want, Keys           int // locks asked for, keys offered
	Free, Busy, Rejected int // keys taken (then released), held by others, refused by accept
}

func (e *ShortError) Error() string {
	return fmt.Sprintf("reserve: %v: want %d of %d keys, %d free, %d busy, %d rejected",
		ErrNotEnough, e.Want, e.Keys, e.Free, e.Busy, e.Rejected)
}

// Is makes the error match ErrNotEnough.
func (e *ShortError) Is(target error) bool { return target == ErrNotEnough }
