package reserve

import (
	"errors"
	"strings"
	"testing"
)

func TestKeysMustBeSafeFileNames(t *testing.T) {
	tests := []struct {
		name string
		key  string
		ok   bool
	}{
		{"a GPU UUID is fine", "GPU-5f7d3a2c-1b4e-4c8a-9d6f-0e1a2b3c4d5e", true},
		{"a MIG UUID is fine", "MIG-0d2b9c3e-7f1a-5b6c-8d9e-0f1a2b3c4d5e", true},
		{"an old-style MIG UUID with slashes is not", "MIG-GPU-5f7d/1/0", false},
		{"a dot inside is fine", "gpu.0", true},
		{"the longest name is fine", strings.Repeat("a", maxKeyLen), true},
		{"empty is rejected", "", false},
		{"a slash is rejected", "a/b", false},
		{"a lone slash is rejected", "/", false},
		{"dot-dot is rejected", "..", false},
		{"dot-dot inside is rejected", "a..b", false},
		{"a leading dot is rejected", ".hidden", false},
		{"a NUL is rejected", "GPU-\x00", false},
		{"a name over NAME_MAX is rejected", strings.Repeat("a", maxKeyLen+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkKey(tt.key)
			if tt.ok && err != nil {
				t.Fatalf("checkKey(%q) = %v, want nil", tt.key, err)
			}
			if !tt.ok && !errors.Is(err, ErrBadKey) {
				t.Fatalf("checkKey(%q) = %v, want ErrBadKey", tt.key, err)
			}
		})
	}
}
