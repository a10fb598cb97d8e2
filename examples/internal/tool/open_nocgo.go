//go:build !cgo

package tool

import (
	"fmt"

	"github.com/nvgo/nvgo"
)

// Open returns the system's NVML; without cgo there is neither NVML nor a
// fake fleet.
func Open(simulate string, live bool, opts ...nvgo.Option) (*nvgo.Library, error) {
	if simulate != "" {
		return nil, fmt.Errorf("--simulate needs a binary built with cgo: %w", nvgo.ErrBuiltWithoutCGO)
	}
	return nvgo.Open(opts...)
}

// PresetNames returns nil: without cgo there is no fake fleet.
func PresetNames() []string { return nil }
