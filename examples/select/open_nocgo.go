//go:build !cgo

package main

import (
	"fmt"

	"github.com/nvgo/nvgo"
)

// open returns the system's NVML; without cgo there is neither NVML nor a fake fleet.
func open(simulate string, opts ...nvgo.Option) (*nvgo.Library, error) {
	if simulate != "" {
		return nil, fmt.Errorf("--simulate needs a binary built with cgo: %w", nvgo.ErrBuiltWithoutCGO)
	}
	return nvgo.Open(opts...)
}
