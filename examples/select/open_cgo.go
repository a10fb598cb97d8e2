//go:build cgo

package main

import (
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fakehost"
)

// open returns the system's NVML, or a fake fleet for --simulate, whose
// processes are believable host processes (package fakehost).
func open(simulate string, opts ...nvgo.Option) (*nvgo.Library, error) {
	if simulate == "" {
		return nvgo.Open(opts...)
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, fmt.Errorf("--simulate: %w", err)
	}
	return nvgo.Open(append(opts, nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))...)
}
