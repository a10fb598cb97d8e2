//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reserve

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const testKey = "GPU-5f7d3a2c-1b4e-4c8a-9d6f-0e1a2b3c4d5e"

// mustLock takes key in dir or fails the test; the lock is released at
// cleanup.
func mustLock(t *testing.T, dir, key string) *Lock {
	t.Helper()
	l, err := TryLock(dir, key)
	if err != nil {
		t.Fatalf("TryLock(%q): %v", key, err)
	}
	t.Cleanup(func() { _ = l.Unlock() })
	return l
}

// wantBusy fails the test unless key in dir is reported busy.
func wantBusy(t *testing.T, dir, key string) {
	t.Helper()
	l, err := TryLock(dir, key)
	if err == nil {
		_ = l.Unlock()
		t.Fatalf("TryLock(%q) succeeded, want ErrBusy", key)
	}
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), key) {
		t.Fatalf("TryLock(%q) = %v, want ErrBusy naming the key", key, err)
	}
}

func TestTryLockTwiceInOneProcessIsBusy(t *testing.T) {
	dir := t.TempDir()
	l := mustLock(t, dir, testKey)
	if l.Key() != testKey || l.Path() != filepath.Join(dir, testKey+".lock") {
		t.Fatalf("Key, Path = %q, %q", l.Key(), l.Path())
	}
	wantBusy(t, dir, testKey)
	mustLock(t, dir, "GPU-other") // other keys are unaffected
}

func TestUnlockedKeyCanBeLockedAgain(t *testing.T) {
	dir := t.TempDir()
	l := mustLock(t, dir, testKey)
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	mustLock(t, dir, testKey)
}

func TestUnlockIsIdempotent(t *testing.T) {
	l := mustLock(t, t.TempDir(), testKey)
	for i := range 3 {
		if err := l.Unlock(); err != nil {
			t.Fatalf("Unlock #%d: %v", i+1, err)
		}
	}
	if l.File() != nil {
		t.Fatal("File() after Unlock is not nil")
	}
	if files := ExtraFiles([]*Lock{l}); len(files) != 1 || files[0] != nil {
		t.Fatalf("ExtraFiles of an unlocked Lock = %v, want [nil]", files)
	}
}

// Unlocks racing on one Lock close its file once: each returns nil (a second
// close would say "file already closed"), and the key is free after.
func TestConcurrentUnlockIsSafe(t *testing.T) {
	dir := t.TempDir()
	l := mustLock(t, dir, testKey)
	const racers = 8
	errs := make(chan error, racers)
	start := make(chan struct{})
	for range racers {
		go func() {
			<-start
			_ = l.File()
			errs <- l.Unlock()
		}()
	}
	close(start)
	for range racers {
		if err := <-errs; err != nil {
			t.Errorf("a concurrent Unlock: %v", err)
		}
	}
	if l.File() != nil {
		t.Error("File() after the Unlocks is not nil")
	}
	mustLock(t, dir, testKey) // released, so free to take again
}

// A lock file replaced between TryLock's open and its flock guards nothing
// (the next launcher opens the new file): TryLock starts over on the file
// now at the path, so a second TryLock finds the key busy.
func TestTryLockRetriesWhenTheFileIsReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, testKey+lockSuffix)
	replaced := 0
	testHookAfterOpen = func() {
		if replaced == 0 {
			replaced++
			if err := os.Remove(path); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(path, nil, 0o666); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { testHookAfterOpen = nil })
	l := mustLock(t, dir, testKey)
	testHookAfterOpen = nil
	if replaced != 1 {
		t.Fatalf("the hook replaced the file %d times; want 1", replaced)
	}
	if ok, err := stillLinked(l.File(), path); err != nil || !ok {
		t.Errorf("the lock is on a file no longer at %s (linked %v, %v)", path, ok, err)
	}
	wantBusy(t, dir, testKey)
}

// A lock file that keeps being replaced is an error, not a loop forever.
func TestTryLockGivesUpOnAFileThatKeepsBeingReplaced(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, testKey+lockSuffix)
	testHookAfterOpen = func() {
		_ = os.Remove(path)
	}
	t.Cleanup(func() { testHookAfterOpen = nil })
	if l, err := TryLock(dir, testKey); err == nil || !strings.Contains(err.Error(), "keeps being replaced") {
		if l != nil {
			_ = l.Unlock()
		}
		t.Fatalf("TryLock = %v; want an error saying the file keeps being replaced", err)
	}
}

func TestLockFilesAreOpenToEveryUser(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	l := mustLock(t, t.TempDir(), testKey)
	fi, err := os.Stat(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o666 {
		t.Fatalf("lock file mode = %v, want 0666 despite the umask", got)
	}
}

func TestTryLockRefusesPlantedFiles(t *testing.T) {
	tests := []struct {
		name  string
		plant func(path string) error
	}{
		{"a symbolic link", func(path string) error {
			return os.Symlink(filepath.Join(filepath.Dir(path), "victim"), path)
		}},
		{"a FIFO", func(path string) error { return syscall.Mkfifo(path, 0o666) }},
		{"a directory", func(path string) error { return os.Mkdir(path, 0o777) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.plant(filepath.Join(dir, testKey+".lock")); err != nil {
				t.Fatal(err)
			}
			if l, err := TryLock(dir, testKey); err == nil {
				_ = l.Unlock()
				t.Fatal("TryLock succeeded")
			}
			if _, err := os.Lstat(filepath.Join(dir, "victim")); !os.IsNotExist(err) {
				t.Fatalf("the link was followed: %v", err)
			}
		})
	}
}

func TestTryLockWorksOnAReadOnlyLockFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write to any file")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, testKey+".lock"), nil, 0o444); err != nil {
		t.Fatal(err)
	}
	mustLock(t, dir, testKey)
	wantBusy(t, dir, testKey)
	if pid, _, held, err := Holder(dir, testKey); !held || err != nil || pid != 0 {
		t.Fatalf("Holder = %d, %v, %v; want held with no information", pid, held, err)
	}
}

func TestTryLockRejectsBadKeys(t *testing.T) {
	dir := t.TempDir()
	for _, key := range []string{"", "../x", ".x"} {
		if _, err := TryLock(dir, key); !errors.Is(err, ErrBadKey) {
			t.Errorf("TryLock(%q) = %v, want ErrBadKey", key, err)
		}
		if _, _, _, err := Holder(dir, key); !errors.Is(err, ErrBadKey) {
			t.Errorf("Holder(%q) = %v, want ErrBadKey", key, err)
		}
	}
}

func TestHolderReportsTheLockingProcess(t *testing.T) {
	dir := t.TempDir()
	wantHeld := func(want bool) {
		t.Helper()
		pid, since, held, err := Holder(dir, testKey)
		if err != nil || held != want {
			t.Fatalf("Holder = held %v, err %v; want held %v", held, err, want)
		}
		if !want {
			if pid != 0 || !since.IsZero() {
				t.Fatalf("Holder of a free key = %d, %v; want zeros", pid, since)
			}
			return
		}
		if pid != os.Getpid() || time.Since(since) > time.Minute || time.Since(since) < 0 {
			t.Fatalf("Holder = %d, %v; want %d, now", pid, since, os.Getpid())
		}
	}

	wantHeld(false) // no lock file yet
	l := mustLock(t, dir, testKey)
	wantHeld(true)
	wantBusy(t, dir, testKey) // Holder's probe left nothing behind but the real lock
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	wantHeld(false) // the file remains, stale information is not reported
	mustLock(t, dir, testKey)
}

func TestParseHolderToleratesGarbage(t *testing.T) {
	tests := []struct {
		name, text string
		pid        int
		since      bool
	}{
		{"well formed", "42 2024-05-01T10:00:00.5Z\n", 42, true},
		{"empty", "", 0, false},
		{"pid only", "42", 0, false},
		{"bad time", "42 yesterday", 42, false},
		{"bad pid", "-1 2024-05-01T10:00:00Z", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, since := parseHolder(strings.NewReader(tt.text))
			if pid != tt.pid || since.IsZero() == tt.since {
				t.Fatalf("parseHolder(%q) = %d, %v", tt.text, pid, since)
			}
		})
	}
}

func TestExtraFilesKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	a, b := mustLock(t, dir, "GPU-a"), mustLock(t, dir, "GPU-b")
	files := ExtraFiles([]*Lock{a, b})
	if len(files) != 2 || files[0] != a.File() || files[1] != b.File() {
		t.Fatalf("ExtraFiles = %v", files)
	}
}
