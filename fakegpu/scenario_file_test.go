//go:build cgo

package fakegpu_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
)

// scenarioFileLimit is the size limit the package documentation promises.
const scenarioFileLimit = 16 << 20

// loadWithin calls fakegpu.Load(path) and fails the test if it does not
// return within a few seconds: what it must never do is wait on a pipe or
// read an endless device.
func loadWithin(t *testing.T, path string) (*fakegpu.Fleet, error) {
	t.Helper()
	type result struct {
		fleet *fakegpu.Fleet
		err   error
	}
	done := make(chan result, 1)
	go func() {
		f, err := fakegpu.Load(path)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.fleet, r.err
	case <-time.After(10 * time.Second):
		t.Fatalf("Load(%q) has not returned after 10s", path)
		return nil, nil
	}
}

// paddedScenario returns the scenario `{"gpus": [{}]}` padded with
// whitespace to size bytes.
func paddedScenario(size int) []byte {
	doc := `{"gpus": [{}]}`
	return []byte(doc + strings.Repeat(" ", size-len(doc)))
}

func TestLoadScenarioRefusesFilesOverTheSizeLimit(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		problem string // "" when the file loads
	}{
		{"a file of exactly the limit loads", scenarioFileLimit, ""},
		{"a file one byte over the limit is refused", scenarioFileLimit + 1, "larger than the 16 MiB limit"},
		{"a file far over the limit is refused", 2 * scenarioFileLimit, "larger than the 16 MiB limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big.json")
			if err := os.WriteFile(path, paddedScenario(tt.size), 0o600); err != nil {
				t.Fatal(err)
			}
			f, err := loadWithin(t, path)
			if tt.problem == "" {
				if err != nil || f.Count() != 1 {
					t.Fatalf("Load = %v, %v; want a fleet of 1 GPU", f, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; fleet has %d GPUs", f.Count())
			}
			if !errors.Is(err, fakegpu.ErrBadScenario) {
				t.Errorf("error %v does not wrap ErrBadScenario", err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not name %s and say %q", err, path, tt.problem)
			}
		})
	}
}

func TestLoadScenarioRefusesWhatIsNotARegularFile(t *testing.T) {
	tests := []struct {
		name    string
		make    func(t *testing.T, dir string) string // returns the path to load
		problem string                                // "" when the file loads
	}{
		{"a named pipe is refused without waiting for a writer", func(t *testing.T, dir string) string {
			return mkfifo(t, filepath.Join(dir, "pipe.json"))
		}, "is a named pipe, not a regular file"},
		{"a symlink to a named pipe is refused", func(t *testing.T, dir string) string {
			return symlink(t, mkfifo(t, filepath.Join(dir, "pipe")), filepath.Join(dir, "link.json"))
		}, "is a named pipe, not a regular file"},
		{"a character device is refused", func(t *testing.T, dir string) string {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero here")
			}
			return "/dev/zero"
		}, "is a character device, not a regular file"},
		{"a directory is refused", func(t *testing.T, dir string) string {
			return dir
		}, "is a directory, not a regular file"},
		{"a symlink to a regular file loads", func(t *testing.T, dir string) string {
			target := filepath.Join(dir, "one.json")
			if err := os.WriteFile(target, []byte(`{"gpus": [{}]}`), 0o600); err != nil {
				t.Fatal(err)
			}
			return symlink(t, target, filepath.Join(dir, "link.json"))
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.make(t, t.TempDir())
			f, err := loadWithin(t, path)
			if tt.problem == "" {
				if err != nil || f.Count() != 1 {
					t.Fatalf("Load = %v, %v; want a fleet of 1 GPU", f, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; fleet has %d GPUs", f.Count())
			}
			if !errors.Is(err, fakegpu.ErrBadScenario) {
				t.Errorf("error %v does not wrap ErrBadScenario", err)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not name %s and say %q", err, path, tt.problem)
			}
		})
	}
}

func TestDuplicateKeyCheckAllowsTheSameKeyInDifferentObjects(t *testing.T) {
	tests := []struct {
		name string
		json string
	}{
		{"the same key in two GPUs", `{"gpus": [{"gpu_util": 10}, {"gpu_util": 90}]}`},
		{"a GPU key repeated in its processes", `{"gpus": [{"mem_util": 3, "processes": [{"pid": 1, "mem_util": 2}, {"pid": 2, "mem_util": 4}]}]}`},
		{"the same clock in clocks and max_clocks", `{"gpus": [{"clocks": {"sm": 100}, "max_clocks": {"sm": 200}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := fakegpu.ParseScenario([]byte(tt.json)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func mkfifo(t *testing.T, path string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a named pipe: %v", err)
	}
	return path
}

func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symlink: %v", err)
	}
	return link
}
