//go:build cgo

package nvgo_test

import (
	"errors"
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// NormalizeCUDAVisibleDevices rewrites a device list as full UUIDs, which
// name the same devices in any CUDA_DEVICE_ORDER and after the GPUs are
// renumbered; CUDAIndex answers the reverse question. Where CUDA's own rules
// do not settle the answer, nvgo returns ErrUndetermined instead of a guess.
func ExampleLibrary_NormalizeCUDAVisibleDevices() {
	fleet, _ := fakegpu.Preset("dgx-h100")
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	env := nvgo.VisibleDevices("3,1")
	s, err := lib.NormalizeCUDAVisibleDevices(env)
	fmt.Println(s, err)

	gpu1, _ := lib.DeviceByIndex(1)
	i, err := lib.CUDAIndex(gpu1, env)
	fmt.Printf("GPU 1 is cuda:%d %v\n", i, err)

	// An index beside a UUID: CUDA's reading of such a list is not settled.
	_, err = lib.CUDADevices(nvgo.VisibleDevices("1," + fleet.GPU(3).UUID()))
	fmt.Println(errors.Is(err, nvgo.ErrUndetermined)) // lib.CUDADevicesFromDriver asks CUDA itself
	// Output:
	// GPU-324096f2-e273-ff8e-b78f-847ae7e53bc5,GPU-080d9913-53fa-681f-1631-acfa722664f5 <nil>
	// GPU 1 is cuda:1 <nil>
	// true
}
