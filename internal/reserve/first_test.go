//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reserve

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestTryLockFirst(t *testing.T) {
	keys := []string{"GPU-0", "GPU-1", "GPU-2", "GPU-3"}
	tests := []struct {
		name    string
		busy    []string // held by someone else beforehand
		reject  []string // refused by accept
		n       int
		want    []string
		wantErr string // substring of an ErrNotEnough error
	}{
		{name: "takes the first n in order", n: 2, want: []string{"GPU-0", "GPU-1"}},
		{name: "skips busy keys", busy: []string{"GPU-0", "GPU-2"}, n: 2, want: []string{"GPU-1", "GPU-3"}},
		{name: "skips keys accept refuses", reject: []string{"GPU-1"}, n: 2, want: []string{"GPU-0", "GPU-2"}},
		{name: "takes all when n is the count", n: 4, want: keys},
		{name: "n of zero takes nothing", n: 0},
		{name: "negative n takes nothing", n: -1},
		{
			name: "too few free fails and says why", busy: []string{"GPU-0"}, reject: []string{"GPU-3"}, n: 3,
			wantErr: "want 3 of 4 keys, 2 free, 1 busy, 1 rejected",
		},
		{name: "n above the key count fails", n: 5, wantErr: "want 5 of 4 keys, 4 free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, k := range tt.busy {
				mustLock(t, dir, k)
			}
			var asked []string
			accept := func(key string) bool {
				asked = append(asked, key)
				// accept runs under the lock.
				wantBusy(t, dir, key)
				return !slices.Contains(tt.reject, key)
			}
			locks, err := TryLockFirst(dir, keys, tt.n, accept, nil)
			t.Cleanup(func() { unlockAll(locks) })
			if tt.wantErr != "" {
				if !errors.Is(err, ErrNotEnough) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want ErrNotEnough with %q", err, tt.wantErr)
				}
				if locks != nil {
					t.Fatalf("locks = %v on failure", locks)
				}
				// Everything taken was given back.
				for _, k := range keys {
					if !slices.Contains(tt.busy, k) {
						mustLock(t, dir, k)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range locks {
				got = append(got, l.Key())
				wantBusy(t, dir, l.Key())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for _, k := range asked {
				if !slices.Contains(got, k) {
					mustLock(t, dir, k) // a rejected key was released
				}
			}
		})
	}
}

func TestTryLockFirstWithoutAcceptTakesAnyFree(t *testing.T) {
	dir := t.TempDir()
	mustLock(t, dir, "GPU-0")
	locks, err := TryLockFirst(dir, []string{"GPU-0", "GPU-1"}, 1, nil, nil)
	if err != nil || len(locks) != 1 || locks[0].Key() != "GPU-1" {
		t.Fatalf("TryLockFirst = %v, %v", locks, err)
	}
	unlockAll(locks)
}

func TestTryLockFirstStopsAtOtherErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := TryLockFirst(dir, []string{"GPU-0", "../escape", "GPU-1"}, 3, nil, nil)
	if !errors.Is(err, ErrBadKey) {
		t.Fatalf("err = %v, want ErrBadKey", err)
	}
	mustLock(t, dir, "GPU-0") // released
}

// Junk planted at one key's lock path (a FIFO, a symbolic link, a
// directory) skips that key, reported to the caller; the others are taken.
func TestTryLockFirstSkipsUnusableLockFiles(t *testing.T) {
	dir := t.TempDir()
	plant := map[string]func(path string) error{
		"GPU-0": func(p string) error { return syscall.Mkfifo(p, 0o666) },
		"GPU-1": func(p string) error { return os.Symlink("/etc/passwd", p) },
		"GPU-2": func(p string) error { return os.Mkdir(p, 0o755) },
	}
	for key, f := range plant {
		if err := f(filepath.Join(dir, key+lockSuffix)); err != nil {
			t.Fatal(err)
		}
	}
	var skipped []string
	locks, err := TryLockFirst(dir, []string{"GPU-0", "GPU-1", "GPU-2", "GPU-3", "GPU-4"}, 2, nil, func(key string, err error) {
		if !errors.Is(err, ErrUnusableFile) {
			t.Errorf("%s: error %v does not match ErrUnusableFile", key, err)
		}
		skipped = append(skipped, key)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unlockAll(locks)
	var got []string
	for _, l := range locks {
		got = append(got, l.Key())
	}
	if !slices.Equal(got, []string{"GPU-3", "GPU-4"}) || !slices.Equal(skipped, []string{"GPU-0", "GPU-1", "GPU-2"}) {
		t.Errorf("took %v, skipped %v; want GPU-3 and GPU-4, skipping 0, 1 and 2", got, skipped)
	}
	_, err = TryLockFirst(dir, []string{"GPU-0", "GPU-5"}, 2, nil, nil)
	var short *ShortError
	if !errors.As(err, &short) || short.Unusable != 1 || !strings.Contains(err.Error(), "1 with an unusable lock file") {
		t.Errorf("error %v; want a ShortError counting one unusable lock file", err)
	}
}
