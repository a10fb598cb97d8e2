//go:build cgo

package main

import (
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// open returns the system's NVML, or a fake fleet for --simulate.
func open(simulate string, opts ...nvgo.Option) (*nvgo.Library, error) {
	if simulate == "" {
		return nvgo.Open(opts...)
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, fmt.Errorf("--simulate: %w", err)
	}
	return nvgo.Open(append(opts, nvgo.WithNVML(fleet))...)
}
