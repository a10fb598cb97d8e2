//go:build cgo

package tool

import (
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fakehost"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// Open returns the system's NVML with opts, or for a simulate argument (a
// preset name or a scenario file) a fake fleet whose processes are
// believable host processes (package fakehost). With live the fleet's clock
// follows real time (fleetclock.RealTime, as the Library's clock): samplers
// then find fresh driver samples at every tick, as on a real GPU. A
// one-shot tool leaves the fleet as loaded.
func Open(simulate string, live bool, opts ...nvgo.Option) (*nvgo.Library, error) {
	if simulate == "" {
		return nvgo.Open(opts...)
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, fmt.Errorf("--simulate: %w", err)
	}
	opts = append(opts, nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))
	if live {
		opts = append(opts, nvgo.WithClock(fleetclock.RealTime(fleet)))
	}
	return nvgo.Open(opts...)
}

// PresetNames returns the fleets --simulate knows by name.
func PresetNames() []string { return fakegpu.PresetNames() }
