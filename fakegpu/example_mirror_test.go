//go:build cgo

package fakegpu_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// A test steers a fleet that a program reads through the drop-in
// libnvidia-ml.so.1, as it would read a driver. Each Sync shows the
// library's clients the fleet as it is; what they see of it then depends on
// how they read. An nvgo Snapshot reads afresh, while a per-metric Device
// method serves a reading it made within the Library's cache TTL (an hour
// here, to show it; DefaultCacheTTL, a second, unless WithCacheTTL says
// otherwise, and WithCacheTTL(0) reads every time).
func ExampleMirror() {
	ctx := context.Background()
	dir, err := fakegpu.CachedLibNVML(ctx, fakegpu.LibNVMLOptions{}) // needs a C compiler
	if err != nil {
		fmt.Println(err)
		return
	}
	state, err := os.MkdirTemp("", "fakegpu-mirror")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(state)

	fleet, _ := fakegpu.Preset("dgx-h100")
	fleet.GPU(0).SetUtilization(10, 5)
	m, err := fakegpu.NewMirror(fleet, filepath.Join(state, "fleet.state"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()
	os.Setenv(fakegpu.EnvFleet, m.Path()) // in a test: t.Setenv
	defer os.Unsetenv(fakegpu.EnvFleet)

	driver := nvml.New(nvml.WithLibraryPath(filepath.Join(dir, fakegpu.LibNVMLFile)))
	lib, _ := nvgo.Open(nvgo.WithNVML(driver), nvgo.WithCacheTTL(time.Hour))
	defer lib.Close()
	d, err := lib.DeviceByIndex(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Device method:", d.GPUUtilization())

	fleet.GPU(0).SetUtilization(90, 40)
	if err := m.Sync(); err != nil { // from the library's next call on, GPU 0 is 90% busy
		fmt.Println(err)
		return
	}
	fmt.Println("Device method:", d.GPUUtilization(), "(the cached reading)")
	snap, _ := lib.Snapshot(ctx, nvgo.WithFields(nvgo.FieldUtilization))
	fmt.Println("Snapshot:", snap.Devices[0].GPUUtilization)
	fmt.Println("Device method:", d.GPUUtilization(), "(the snapshot's reading)")
	// Output:
	// Device method: 10%
	// Device method: 10% (the cached reading)
	// Snapshot: 90%
	// Device method: 90% (the snapshot's reading)
}
