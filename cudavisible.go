package nvgo

import (
	"fmt"
	"strings"
)

// matchUUIDPrefix returns the position in uuids of the one UUID that is
// prefix or starts with it, by CUDA's rule for CUDA_VISIBLE_DEVICES: the
// "GPU-" (or "MIG-") prefix is part of the match and comparison is
// case-sensitive. An exact match wins over longer matches.
func matchUUIDPrefix(prefix string, uuids []string) (int, error) {
	p := strings.TrimSpace(prefix)
	if !strings.HasPrefix(p, "GPU-") && !strings.HasPrefix(p, "MIG-") || len(p) == 4 {
		return -1, fmt.Errorf("nvgo: %q is not a GPU UUID (want \"GPU-\" and at least one hex digit): %w", prefix, ErrNotFound)
	}
	found := -1
	for i, u := range uuids {
		if u == p {
			return i, nil
		}
		if strings.HasPrefix(u, p) {
			if found >= 0 {
				return -1, fmt.Errorf("nvgo: UUID prefix %q matches %s and %s: %w", prefix, uuids[found], u, ErrAmbiguous)
			}
			found = i
		}
	}
	if found < 0 {
		return -1, fmt.Errorf("nvgo: no GPU with UUID %q: %w", prefix, ErrNotFound)
	}
	return found, nil
}
