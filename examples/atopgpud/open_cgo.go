//go:build cgo

package main

import (
	"fmt"
	"log/slog"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// open returns the system's NVML, or a fake fleet for --simulate together
// with the clock that keeps the fleet in step with real time (nil for the
// system's NVML).
func open(simulate string, log *slog.Logger) (*nvgo.Library, nvgo.Clock, error) {
	if simulate == "" {
		lib, err := nvgo.Open(nvgo.WithLogger(log))
		return lib, nil, err
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, nil, fmt.Errorf("--simulate: %w", err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	// Each tick then finds fresh samples, as on a real GPU.
	return lib, fleetclock.RealTime(fleet), nil
}

// simulatePresets returns the fleets --simulate knows by name.
func simulatePresets() []string { return fakegpu.PresetNames() }
