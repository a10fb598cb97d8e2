package reserve

import "errors"

// TryLockFirst takes the first n free reservations among keys, in order,
// without waiting. Busy keys are skipped. After taking each lock it calls
// accept(key), if accept is not nil, so the caller can re-check under the
// lock that the GPU still qualifies; a rejected key is unlocked and skipped.
//
// If fewer than n locks could be taken, TryLockFirst releases those it took
// and returns a *ShortError (matching ErrNotEnough) that counts the free,
// busy and rejected keys. Any other failure (a bad key, an unusable directory) also
// releases everything and is returned as is. n <= 0 takes nothing and
// returns nil, nil.
func TryLockFirst(dir string, keys []string, n int, accept func(key string) bool) ([]*Lock, error) {
	if n <= 0 {
		return nil, nil
	}
	locks := make([]*Lock, 0, n)
	var busy, rejected int
	for _, key := range keys {
		l, err := TryLock(dir, key)
		if errors.Is(err, ErrBusy) {
			busy++
			continue
		}
		if err != nil {
			unlockAll(locks)
			return nil, err
		}
		if accept != nil && !accept(key) {
			_ = l.Unlock()
			rejected++
			continue
		}
		locks = append(locks, l)
		if len(locks) == n {
			return locks, nil
		}
	}
	free := len(locks)
	unlockAll(locks)
	return nil, &ShortError{Want: n, Keys: len(keys), Free: free, Busy: busy, Rejected: rejected}
}

// unlockAll releases locks; closing a lock file cannot fail in a way that
// keeps the lock, so errors are ignored.
func unlockAll(locks []*Lock) {
	for _, l := range locks {
		_ = l.Unlock()
	}
}
