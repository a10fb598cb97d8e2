package reserve

import "errors"

var (
	// ErrBusy: another open file description, in this process or another,
	// holds the lock.
	ErrBusy = errors.New("reservation busy")
	// ErrNotEnough: TryLockFirst could not take as many locks as asked for.
	ErrNotEnough = errors.New("not enough free reservations")
	// ErrBadKey: the key cannot be used as a lock file name.
	ErrBadKey = errors.New("bad reservation key")
)
