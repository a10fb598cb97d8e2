//go:build cgo

package nvgo

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// WithNVML makes Open use lib instead of the system's NVML: a go-nvml
// nvml.Interface such as nvml.New(nvml.WithLibraryPath(…)) or the fake fleet
// of package fakegpu. Libraries opened on the same lib share one refcounted
// NVML initialisation.
func WithNVML(lib nvml.Interface) Option {
	return func(o *options) { o.backend = nvmlx.Open(lib) }
}
