package cudaprobe

import (
	"errors"
	"fmt"

	"github.com/nvgo/nvgo/internal/nverr"
)

// Errors returned by Probe, wrapped with context; test them with errors.Is.
var (
	// ErrNoLibCUDA: the child could not load libcuda (no NVIDIA driver, or
	// NVGO_LIBCUDA names a missing file). The message carries dlerror's text.
	ErrNoLibCUDA = errors.New("cudaprobe: cannot load the CUDA driver library")

	// ErrSymbolMissing: libcuda lacks a function the probe needs.
	ErrSymbolMissing = errors.New("cudaprobe: CUDA driver library lacks a required function")

	// ErrCUDA: a driver call returned a CUresult other than success. The
	// error is a *CUDAError; use errors.As for the call and code.
	ErrCUDA = errors.New("cudaprobe: CUDA driver call failed")

	// ErrBuiltWithoutCGO: this binary was built with CGO_ENABLED=0 and so
	// cannot load libcuda. It is the same value as nvgo.ErrBuiltWithoutCGO.
	ErrBuiltWithoutCGO = nverr.ErrBuiltWithoutCGO

	// ErrChild: the child process could not be started, crashed, was killed
	// (also by the context; the context's error is wrapped too), or printed
	// no reply that could be read. The message ends with its stderr tail.
	ErrChild = errors.New("cudaprobe: probe child failed")
)

// CUDAError is a failed CUDA driver call in the child. errors.Is(err, ErrCUDA)
// holds for it.
type CUDAError struct {
	Op   string // driver function, e.g. "cuInit"
	Code int    // CUresult value, e.g. 999
	Name string // cuGetErrorName's text, e.g. "CUDA_ERROR_UNKNOWN"; "" when unavailable
}

func (e *CUDAError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%v: %s returned CUresult %d", ErrCUDA, e.Op, e.Code)
	}
	return fmt.Sprintf("%v: %s returned %s (%d)", ErrCUDA, e.Op, e.Name, e.Code)
}

// Unwrap makes errors.Is(e, ErrCUDA) true.
func (e *CUDAError) Unwrap() error { return ErrCUDA }
