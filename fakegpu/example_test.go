//go:build cgo

package fakegpu_test

import (
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// A test builds a fleet, sets what the GPUs should report, and hands the
// fleet to the code under test as an nvml.Interface.
func ExampleNew() {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"})
	fleet.GPU(0).SetUtilization(42, 7)
	_ = fleet.GPU(0).StartProcess(fakegpu.Process{PID: 4242, Type: fakegpu.Compute, UsedMemory: 2 << 30, SM: 40})

	var lib nvml.Interface = fleet
	if ret := lib.Init(); ret != nvml.SUCCESS {
		fmt.Println("init:", ret)
		return
	}
	defer lib.Shutdown()

	n, _ := lib.DeviceGetCount()
	for i := 0; i < n; i++ {
		dev, _ := lib.DeviceGetHandleByIndex(i)
		name, _ := dev.GetName()
		util, _ := dev.GetUtilizationRates()
		mem, _ := dev.GetMemoryInfo_v2()
		procs, _ := dev.GetComputeRunningProcesses()
		fmt.Printf("%d %s util=%d%% used=%dMiB processes=%d\n", i, name, util.Gpu, mem.Used>>20, len(procs))
	}
	_, ret := fleet.GPU(1).Device().GetFanSpeed()
	fmt.Println("fan:", ret)
	fmt.Println("violations:", len(fleet.Violations()))
	// Output:
	// 0 NVIDIA H100 80GB HBM3 util=42% used=2048MiB processes=1
	// 1 NVIDIA A100-SXM4-80GB util=0% used=0MiB processes=0
	// fan: ERROR_NOT_SUPPORTED
	// violations: 0
}

// A scenario describes a fleet in JSON; a bad one is an error naming the
// key.
func ExampleParseScenario() {
	fleet, err := fakegpu.ParseScenario([]byte(`{
		"preset": "dgx-h100",
		"gpus": [{"temperature_c": 83, "errors": {"power": "NO_PERMISSION"}}, {"lost": true}]
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fleet.Init()
	defer fleet.Shutdown()
	dev, _ := fleet.DeviceGetHandleByPciBusId("0000:18:00.0")
	temp, _ := dev.GetTemperature(nvml.TEMPERATURE_GPU)
	_, powerRet := dev.GetPowerUsage()
	_, lostRet := fleet.DeviceGetHandleByIndex(1)
	fmt.Println(temp, powerRet, lostRet)

	_, err = fakegpu.ParseScenario([]byte(`{"gpus": [{"processes": [{"pid": 1, "type": "X"}]}]}`))
	fmt.Println(err)
	// Output:
	// 83 ERROR_NO_PERMISSION ERROR_GPU_IS_LOST
	// fakegpu: bad scenario: gpus[0].processes[0].type: want "C", "G", "C+G" or "M+C", got "X"
}

// A fake clock makes process-utilization cursors deterministic.
func ExampleFleet_Advance() {
	fleet := fakegpu.New(fakegpu.GPUSpec{})
	fleet.Init()
	defer fleet.Shutdown()
	start := fleet.Now()
	g := fleet.GPU(0)
	_ = g.StartProcess(fakegpu.Process{PID: 7, SM: 60})

	var lastSeen uint64 // the newest sample timestamp seen, in µs
	poll := func() {
		samples, ret := g.Device().GetProcessUtilization(lastSeen)
		if ret == nvml.ERROR_NOT_FOUND {
			fmt.Println("no new samples")
		}
		for _, s := range samples {
			at := time.UnixMicro(int64(s.TimeStamp)).Sub(start)
			fmt.Printf("pid %d: SM %d%% at +%v\n", s.Pid, s.SmUtil, at)
			lastSeen = max(lastSeen, s.TimeStamp)
		}
	}
	poll()
	poll()
	fleet.Advance(time.Second)
	poll()
	// Output:
	// pid 7: SM 60% at +0s
	// no new samples
	// pid 7: SM 60% at +1s
}
