//go:build !cgo

package main

import (
	"fmt"
	"log/slog"

	"github.com/nvgo/nvgo"
)

// open returns the system's NVML; without cgo there is neither NVML nor a
// fake fleet.
func open(simulate string, log *slog.Logger) (*nvgo.Library, nvgo.Clock, error) {
	if simulate != "" {
		return nil, nil, fmt.Errorf("--simulate needs a binary built with cgo: %w", nvgo.ErrBuiltWithoutCGO)
	}
	lib, err := nvgo.Open(nvgo.WithLogger(log))
	return lib, nil, err
}

// simulatePresets returns nil: without cgo there is no fake fleet.
func simulatePresets() []string { return nil }
