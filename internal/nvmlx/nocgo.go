//go:build !cgo

package nvmlx

import "github.com/nvgo/nvgo/internal/nverr"

// Default reports that NVML cannot be used: this binary was built without cgo.
func Default() (Backend, error) { return nil, nverr.ErrBuiltWithoutCGO }
