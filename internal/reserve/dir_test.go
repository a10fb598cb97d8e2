//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reserve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// wantShared fails the test unless dir is a directory with mode 1777.
func wantShared(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() &^ os.ModeDir; got != sharedMode {
		t.Fatalf("%s has mode %v, want %v", dir, got, sharedMode)
	}
}

func TestDefaultDirHonoursTheEnvironment(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "a", "b", "locks")
	t.Setenv(EnvLockDir, dir)
	got, err := DefaultDir()
	if err != nil || got != dir {
		t.Fatalf("DefaultDir = %q, %v; want %q", got, err, dir)
	}
	wantShared(t, dir)
	mustLock(t, got, testKey)

	// A second call finds it in place.
	if got, err := DefaultDir(); err != nil || got != dir {
		t.Fatalf("DefaultDir again = %q, %v", got, err)
	}
}

func TestDefaultDirDoesNotFallBackFromAnExplicitChoice(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvLockDir, file)
	if got, err := DefaultDir(); err == nil || !strings.Contains(err.Error(), EnvLockDir) {
		t.Fatalf("DefaultDir = %q, %v; want an error naming %s", got, err, EnvLockDir)
	}
}

func TestFirstUsableDir(t *testing.T) {
	unusable := func(t *testing.T) string {
		// A path under a regular file cannot be created, even by root.
		file := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(file, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(file, "locks")
	}
	tests := []struct {
		name       string
		candidates func(t *testing.T) []string
		pick       int // index into candidates; -1 for an error
	}{
		{"the first usable one wins", func(t *testing.T) []string {
			return []string{filepath.Join(t.TempDir(), "locks"), filepath.Join(t.TempDir(), "other")}
		}, 0},
		{"an unusable first falls back", func(t *testing.T) []string {
			return []string{unusable(t), filepath.Join(t.TempDir(), "locks")}
		}, 1},
		{"a missing parent falls back", func(t *testing.T) []string {
			return []string{filepath.Join(t.TempDir(), "missing", "locks"), filepath.Join(t.TempDir(), "locks")}
		}, 1},
		{"a symbolic link falls back", func(t *testing.T) []string {
			link := filepath.Join(t.TempDir(), "locks")
			if err := os.Symlink(t.TempDir(), link); err != nil {
				t.Fatal(err)
			}
			return []string{link, filepath.Join(t.TempDir(), "locks")}
		}, 1},
		{"an existing directory is used as it is", func(t *testing.T) []string {
			return []string{t.TempDir()}
		}, 0},
		{"none usable is an error", func(t *testing.T) []string {
			return []string{unusable(t), unusable(t)}
		}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := syscall.Umask(0o022)
			defer syscall.Umask(old)
			candidates := tt.candidates(t)
			before, _ := os.Stat(candidates[0])
			got, err := firstUsableDir(candidates)
			if tt.pick < 0 {
				if err == nil || !strings.Contains(err.Error(), EnvLockDir) {
					t.Fatalf("firstUsableDir = %q, %v; want an error suggesting %s", got, err, EnvLockDir)
				}
				return
			}
			if err != nil || got != candidates[tt.pick] {
				t.Fatalf("firstUsableDir = %q, %v; want %q", got, err, candidates[tt.pick])
			}
			if before != nil && tt.pick == 0 {
				after, _ := os.Stat(got)
				if after.Mode() != before.Mode() {
					t.Fatalf("mode of an existing directory changed from %v to %v", before.Mode(), after.Mode())
				}
			} else {
				wantShared(t, got)
			}
			entries, _ := os.ReadDir(filepath.Dir(got))
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), ".") {
					t.Fatalf("left %s behind", e.Name())
				}
			}
		})
	}
}

func TestFirstUsableDirSkipsAReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write to any directory")
	}
	ro := t.TempDir()
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	fallback := filepath.Join(t.TempDir(), "locks")
	if got, err := firstUsableDir([]string{ro, fallback}); err != nil || got != fallback {
		t.Fatalf("firstUsableDir = %q, %v; want %q", got, err, fallback)
	}
}

// Dir gives a directory named in code the rule $NVGO_LOCK_DIR gets: created
// with its parents and shared, or a clear error; "" is DefaultDir.
func TestDirNamedInCodeGetsTheEnvironmentsRule(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "missing", "locks")
	if got, err := Dir(dir); err != nil || got != dir {
		t.Fatalf("Dir(%s) = %q, %v; want it created", dir, got, err)
	}
	wantShared(t, dir)
	mustLock(t, dir, testKey)

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{file: "is a regular file, not a directory", fifo: "is a named pipe, not a directory"} {
		if _, err := Dir(path); err == nil || !strings.Contains(err.Error(), kind) {
			t.Errorf("Dir(%s) error %v; want one saying it %s", path, err, kind)
		}
	}

	env := filepath.Join(t.TempDir(), "env")
	t.Setenv(EnvLockDir, env)
	if got, err := Dir(""); err != nil || got != env {
		t.Errorf(`Dir("") = %q, %v; want $%s`, got, err, EnvLockDir)
	}
}
