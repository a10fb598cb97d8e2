//go:build cgo

package fakegpu_test

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// initFleet calls Init and registers the matching Shutdown, then checks at
// the end that the test made no call a real process would have died of.
func initFleet(t *testing.T, f *fakegpu.Fleet) {
	t.Helper()
	if ret := f.Init(); ret != nvml.SUCCESS {
		t.Fatalf("Init() = %v, want SUCCESS", ret)
	}
	t.Cleanup(func() {
		if ret := f.Shutdown(); ret != nvml.SUCCESS {
			t.Errorf("Shutdown() = %v, want SUCCESS", ret)
		}
		if v := f.Violations(); len(v) > 0 {
			t.Errorf("violations: %q", v)
		}
	})
}

// preset returns an initialised preset fleet.
func preset(t *testing.T, name string) *fakegpu.Fleet {
	t.Helper()
	f, err := fakegpu.Preset(name)
	if err != nil {
		t.Fatalf("Preset(%q): %v", name, err)
	}
	initFleet(t, f)
	return f
}

// handle returns the device handle of GPU i, failing the test on error.
func handle(t *testing.T, f *fakegpu.Fleet, i int) nvml.Device {
	t.Helper()
	d, ret := f.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		t.Fatalf("DeviceGetHandleByIndex(%d) = %v", i, ret)
	}
	return d
}

// must returns v; the returned function fails the test unless ret is
// SUCCESS. Use it as must(d.GetName())(t, "GetName").
func must[T any](v T, ret nvml.Return) func(t *testing.T, what string) T {
	return func(t *testing.T, what string) T {
		t.Helper()
		if ret != nvml.SUCCESS {
			t.Fatalf("%s = %v, want SUCCESS", what, ret)
		}
		return v
	}
}

// cString converts a NUL-terminated C char array.
func cString(b []int8) string {
	var s []byte
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}
