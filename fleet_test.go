//go:build cgo

package nvgo_test

import (
	"testing"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// openFleet opens a Library over a fresh preset fleet and closes it at the end
// of the test, failing the test if the fleet saw a call that would have
// killed a real process.
func openFleet(t testing.TB, preset string) (*nvgo.Library, *fakegpu.Fleet) {
	t.Helper()
	fleet, err := fakegpu.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	return openOn(t, fleet), fleet
}

func openOn(t testing.TB, fleet *fakegpu.Fleet, opts ...nvgo.Option) *nvgo.Library {
	t.Helper()
	lib, err := nvgo.Open(append([]nvgo.Option{nvgo.WithNVML(fleet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		lib.Close()
		if v := fleet.Violations(); len(v) > 0 {
			t.Errorf("calls that would kill a real process: %q", v)
		}
	})
	return lib
}

// idle removes the preset's processes so a test controls every process.
func idle(fleet *fakegpu.Fleet) {
	for i := 0; i < fleet.Count(); i++ {
		g := fleet.GPU(i)
		for _, p := range g.Processes() {
			g.StopProcess(p.PID)
		}
	}
}
