//go:build cgo

package nvgo_test

import (
	"fmt"
	"time"

	"github.com/nvgo/nvgo"
)

// Accounting keeps lifetime averages of every process that used the GPU
// while it was on, and keeps them after the process exits.
func ExampleDevice_ProcessAccounting() {
	fleet := exampleFleet() // PID 4194546 runs on GPU 0 at 30% SM
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()
	d, _ := lib.DeviceByIndex(0)

	fmt.Println("accounting:", d.AccountingMode())
	fmt.Println(d.ProcessAccounting(4194546).Err())

	if err := d.SetAccountingMode(true); err != nil { // needs root on a real GPU
		fmt.Println(err)
		return
	}
	// The job runs a minute at 30% SM, two more at 90%, then exits.
	fleet.Advance(time.Minute)
	fleet.GPU(0).SetProcessUtilization(4194546, 90, 35, 0, 0)
	fleet.Advance(2 * time.Minute)
	fleet.GPU(0).StopProcess(4194546)

	pids, _ := d.AccountedPIDs()
	fmt.Println("accounted:", pids)
	if a, ok := d.ProcessAccounting(4194546).Get(); ok {
		fmt.Printf("pid %d: SM %v, memory %v, at most %v, ran %v\n",
			a.PID, a.GPUUtilization, a.MemoryUtilization, a.MaxMemory, a.RunningTime)
	}
	// Output:
	// accounting: Off
	// GPU 0: accounting mode is off (Device.SetAccountingMode turns it on, as root): nvmlDeviceGetAccountingStats: not supported
	// accounted: [4194546]
	// pid 4194546: SM 70%, memory 25%, at most 8862MiB, ran 3m0s
}
