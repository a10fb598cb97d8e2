//go:build unix

package libnvml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The build cache is never the user's home unless asked, and a directory
// in the shared temporary directory that another could have planted (or
// may write to) is refused.
func TestCacheDir(t *testing.T) {
	t.Run("$NVGO_LIBNVML_CACHE wins", func(t *testing.T) {
		want := t.TempDir()
		t.Setenv(CacheVariable, want)
		if got, err := CacheDir(); err != nil || got != want {
			t.Errorf("CacheDir() = %q, %v; want %q", got, err, want)
		}
	})
	t.Run("default: private, in the temporary directory", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv(CacheVariable, "")
		t.Setenv("TMPDIR", tmp)
		got, err := CacheDir()
		if err != nil || filepath.Dir(got) != tmp {
			t.Fatalf("CacheDir() = %q, %v; want a directory in %s", got, err, tmp)
		}
		if fi, err := os.Stat(got); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("the cache directory's mode is %v (%v); want 0700", fi.Mode().Perm(), err)
		}
		if again, err := CacheDir(); err != nil || again != got {
			t.Errorf("a second CacheDir() = %q, %v; want %q again", again, err, got)
		}
	})
	for _, tt := range []struct {
		name  string
		plant func(path string) error
		want  string
	}{
		{"a world-writable directory", func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chmod(p, 0o777)
		}, "others may write"},
		{"a symbolic link", func(p string) error { return os.Symlink(os.TempDir(), p) }, "not a directory"},
		{"a file", func(p string) error { return os.WriteFile(p, nil, 0o600) }, "not a directory"},
	} {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv(CacheVariable, "")
			t.Setenv("TMPDIR", tmp)
			dir, _ := CacheDir()
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := tt.plant(dir); err != nil {
				t.Fatal(err)
			}
			if got, err := CacheDir(); err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), CacheVariable) {
				t.Errorf("CacheDir() over %s = %q, %v; want an error saying %q and naming $%s", tt.name, got, err, tt.want, CacheVariable)
			}
		})
	}
}
