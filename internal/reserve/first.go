package reserve

import "errors"

// TryLockFirst takes the first n free reservations among keys, in order,
// without waiting. Busy keys are skipped, and so are keys whose lock file
// cannot be locked (ErrUnusableFile: a FIFO or a symbolic link planted at
// its path, say), after calling unusable(key, err) if unusable is not nil.
// After taking each lock it calls accept(key), if accept is not nil, so the
// caller can re-check under the lock that the GPU still qualifies; a
// rejected key is unlocked and skipped.
//
// If fewer than n locks could be taken, TryLockFirst releases those it took
// and returns a *ShortError (matching ErrNotEnough) that counts the free,
// busy, rejected and unusable keys. Any other failure (a bad key) also
// releases everything and is returned as is. n <= 0 takes nothing and
// returns nil, nil.
func TryLockFirst(dir string, keys []string, n int, accept func(key string) bool, unusable func(key string, err error)) ([]*Lock, error) {
	if n <= 0 {
		return nil, nil
	}
	locks := make([]*Lock, 0, n)
	var busy, rejected, unusableKeys int
	for _, key := range keys {
		l, err := TryLock(dir, key)
		if errors.Is(err, ErrBusy) {
			busy++
			continue
		}
		if errors.Is(err, ErrUnusableFile) {
			unusableKeys++
			if unusable != nil {
				unusable(key, err)
			}
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
	return nil, &ShortError{Want: n, Keys: len(keys), Free: free, Busy: busy, Rejected: rejected, Unusable: unusableKeys}
}

// unlockAll releases locks; closing a lock file cannot fail in a way that
// keeps the lock, so errors are ignored.
func unlockAll(locks []*Lock) {
	for _, l := range locks {
		_ = l.Unlock()
	}
}
