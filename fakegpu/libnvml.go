//go:build cgo

package fakegpu

import (
	"context"
	"os"

	"github.com/nvgo/nvgo/fakegpu/internal/libnvml"
)

// The environment of the drop-in libnvidia-ml.so.1 (see "The C door" in
// the package documentation).
const (
	// EnvFleet names the fleet the library serves: a preset, a scenario
	// file or a Mirror's state file (default: dgx-h100).
	EnvFleet = "NVGO_FAKE_FLEET"
	// EnvInitError makes every nvmlInit fail with this return code, by
	// name (DRIVER_NOT_LOADED, NVML_ERROR_NO_PERMISSION) or number.
	EnvInitError = "NVGO_FAKE_INIT_ERROR"
	// EnvCalls names a file the library writes its call counts to (JSON,
	// see ReadLibNVMLCalls) at the last nvmlShutdown and at exit.
	EnvCalls = "NVGO_FAKE_CALLS"
	// EnvHelper overrides where the library finds nvgo-fake-fleet, the
	// helper that serves presets and scenario files (default: beside it).
	EnvHelper = "NVGO_FAKE_FLEET_HELPER"
)

// LibNVMLFile is the drop-in library's file name.
const LibNVMLFile = libnvml.FileName

// LibNVMLOptions say how to compile the drop-in library.
type LibNVMLOptions struct {
	// Driver is the driver branch to imitate: "current" (the default),
	// "r470" or "r418", which leave out the functions those branches
	// lacked (LibNVMLDrivers says which).
	Driver string
	// CC is the C compiler ($CC, else gcc).
	CC string
	// HeaderDir holds the nvml.h to compile against (default: go-nvml's,
	// found with `go list` from the current directory's module).
	HeaderDir string
}

func (o LibNVMLOptions) build() (libnvml.BuildOptions, error) {
	d, err := libnvml.DriverNamed(o.Driver)
	return libnvml.BuildOptions{Driver: d, CC: o.CC, HeaderDir: o.HeaderDir}, err
}

// LibNVMLDrivers returns the driver branches the library can imitate and
// what each lacks.
func LibNVMLDrivers() map[string]string {
	out := make(map[string]string, len(libnvml.Drivers))
	for _, d := range libnvml.Drivers {
		out[d.Name] = d.Lacks
	}
	return out
}

// BuildLibNVML compiles the drop-in libnvidia-ml.so.1 into dir and returns
// its path. It needs a C compiler, and go-nvml's nvml.h (found with `go
// list`, so run it inside a module that requires go-nvml, or give
// HeaderDir). Presets and scenario files also need the fleet helper beside
// the library, which the command fakegpu/cmd/libnvml writes; a test that
// serves its fleet with a Mirror does not.
func BuildLibNVML(ctx context.Context, dir string, o LibNVMLOptions) (string, error) {
	bo, err := o.build()
	if err != nil {
		return "", err
	}
	return libnvml.Build(ctx, dir, bo)
}

// CachedLibNVML is BuildLibNVML into a cache shared by the tests and
// benchmarks of every package, once per version of the library's sources
// and options: $NVGO_LIBNVML_CACHE when set, else a directory private to
// the user in the temporary directory (never the user's home). It returns
// the directory that holds the library, for LD_LIBRARY_PATH or
// nvml.WithLibraryPath(filepath.Join(dir, LibNVMLFile)).
func CachedLibNVML(ctx context.Context, o LibNVMLOptions) (string, error) {
	bo, err := o.build()
	if err != nil {
		return "", err
	}
	return libnvml.Cached(ctx, bo)
}

// LibNVMLCalls is what the drop-in library counted: calls per NVML
// function (by symbol, e.g. "nvmlDeviceGetComputeRunningProcesses_v3")
// and in all, since it was loaded or last reset. Calls refused for a
// missing Init count too.
type LibNVMLCalls struct {
	Total uint64
	Calls map[string]uint64
}

func callsOf(c libnvml.CallCounts, err error) (LibNVMLCalls, error) {
	return LibNVMLCalls{Total: c.Total, Calls: c.Calls}, err
}

// LoadedLibNVMLCalls returns the counts of the drop-in library loaded in
// this process (by go-nvml's Init, say).
func LoadedLibNVMLCalls() (LibNVMLCalls, error) { return callsOf(libnvml.LoadedCalls()) }

// ResetLoadedLibNVMLCalls sets the counts of the drop-in library loaded in
// this process to zero.
func ResetLoadedLibNVMLCalls() error { return libnvml.ResetLoadedCalls() }

// ReadLibNVMLCalls reads the counts a library wrote to the file named by
// EnvCalls.
func ReadLibNVMLCalls(path string) (LibNVMLCalls, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return LibNVMLCalls{}, err
	}
	return callsOf(libnvml.ParseCallCounts(data))
}
