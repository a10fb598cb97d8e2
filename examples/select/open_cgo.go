//go:build cgo

package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// open returns the system's NVML, or a fake fleet for --simulate.
func open(simulate string) (*nvgo.Library, error) {
	if simulate == "" {
		return nvgo.Open()
	}
	if slices.Contains(fakegpu.PresetNames(), simulate) {
		fleet, err := fakegpu.Preset(simulate)
		if err != nil {
			return nil, err
		}
		return nvgo.Open(nvgo.WithNVML(fleet))
	}
	if _, err := os.Stat(simulate); err != nil {
		return nil, fmt.Errorf("--simulate %q: not a preset (%v) and not a readable file: %w", simulate, fakegpu.PresetNames(), err)
	}
	fleet, err := fakegpu.LoadScenario(simulate)
	if err != nil {
		return nil, err
	}
	return nvgo.Open(nvgo.WithNVML(fleet))
}
