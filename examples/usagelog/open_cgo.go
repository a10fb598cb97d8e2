//go:build cgo

package main

import (
	"fmt"
	"log/slog"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// open returns the system's NVML and clock, or for --simulate a fake fleet
// and a clock that moves the fleet's clock up to real time whenever one of
// its timers fires.
func open(simulate string, log *slog.Logger) (*nvgo.Library, nvgo.Clock, error) {
	if simulate == "" {
		lib, err := nvgo.Open(nvgo.WithLogger(log))
		return lib, nvgo.SystemClock(), err
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, nil, fmt.Errorf("--simulate: %w", err)
	}
	// Each tick then finds fresh samples, as on a real GPU.
	clock := fleetclock.RealTime(fleet)
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	return lib, clock, nil
}
