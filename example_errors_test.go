//go:build cgo

package nvgo_test

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
)

// An N/A reading keeps the error behind it. That error matches nvgo's
// sentinels and NVML's return code with errors.Is, and errors.As with
// *NVMLError gives the NVML operation and the raw code.
func ExampleNVMLError() {
	fleet := exampleFleet()
	fleet.GPU(0).Fail("temperature", nvml.ERROR_NO_PERMISSION)
	fleet.GPU(1).Lose()
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	gpu0, _ := lib.DeviceByIndex(0)
	temp := gpu0.Temperature()
	err := temp.Err()
	fmt.Println(temp, "-", temp.Reason())
	fmt.Println(errors.Is(err, nvgo.ErrNoPermission), errors.Is(err, nvgo.ReturnNoPermission))
	var e *nvgo.NVMLError
	if errors.As(err, &e) {
		fmt.Printf("%s returned %d (%v)\n", e.Op, int(e.Code), e.Code)
	}

	gpu1, _ := lib.DeviceByIndex(1)
	used := gpu1.MemoryUsed()
	fmt.Println(used, "-", used.Reason(), errors.Is(used.Err(), nvgo.ErrGPULost))
	// Output:
	// N/A - no permission
	// true true
	// nvmlDeviceGetTemperature returned 4 (NVML: insufficient permissions)
	// N/A - GPU lost true
}
