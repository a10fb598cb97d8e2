//go:build cgo

package nvgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// A fake fleet stands in for the GPUs so the examples run anywhere; on a real
// machine use nvgo.Open() with no option.
func exampleFleet() *fakegpu.Fleet {
	fleet := fakegpu.New(
		fakegpu.GPUSpec{Model: "h100", UUID: "GPU-5f7d6c1e-0000-4000-8000-000000000000", BusID: "00000000:18:00.0"},
		fakegpu.GPUSpec{Model: "h100", UUID: "GPU-9a1b2c3d-0000-4000-8000-000000000001", BusID: "00000000:2A:00.0"},
	)
	g := fleet.GPU(0)
	g.SetUtilization(37, 12)
	g.SetTemperature(41)
	g.SetPower(72000, 700000)
	_ = g.StartProcess(fakegpu.Process{PID: 4194546, Type: "C", UsedMemory: 8862 << 20, SM: 30, Mem: 5})
	return fleet
}

func ExampleOpen() {
	lib, err := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lib.Close()
	devs, err := lib.Devices()
	if errors.Is(err, nvgo.ErrLibraryNotFound) {
		fmt.Println("no NVIDIA driver here")
		return
	}
	for _, d := range devs {
		fmt.Println(d.Index(), d.Name(), d.Temperature(), nvgo.PowerStatus(d.PowerUsage(), d.PowerLimit()))
	}
	fmt.Println(devs[0].FanSpeed(), "because", devs[0].FanSpeed().Reason())
	// Output:
	// 0 NVIDIA H100 80GB HBM3 41C 72W / 700W
	// 1 NVIDIA H100 80GB HBM3 30C 71W / 700W
	// N/A because not supported
}

func ExampleLibrary_DeviceByUUID() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	d, err := lib.DeviceByUUID("GPU-9a1b") // a unique prefix, as CUDA_VISIBLE_DEVICES accepts
	fmt.Println(d.Index(), err)
	_, err = lib.DeviceByUUID("GPU-0")
	fmt.Println(err)
	d, _ = lib.DeviceByBusID("0000:2a:00.0")
	fmt.Println(d.Index(), d.BusID())
	// Output:
	// 1 <nil>
	// nvgo: no GPU with UUID "GPU-0": not found
	// 1 00000000:2A:00.0
}

func ExampleLibrary_Snapshot() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	snap, err := lib.Snapshot(context.Background(), nvgo.WithFields(nvgo.FieldUtilization|nvgo.FieldProcesses))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range snap.Devices {
		fmt.Printf("GPU %d: %v busy, %d processes\n", d.Index, d.GPUUtilization, len(d.Processes))
		for _, p := range d.Processes {
			fmt.Printf("  pid %d %v %v SM %v\n", p.PID, p.Type, p.GPUMemory, p.GPUSMUtilization)
		}
	}
	b, _ := json.Marshal(snap.Devices[0].Processes[0].GPUMemory)
	fmt.Println(string(b))
	// Output:
	// GPU 0: 37% busy, 1 processes
	//   pid 4194546 C 8862MiB SM 30%
	// GPU 1: 0% busy, 0 processes
	// 9292480512
}

func ExampleDevice_Processes() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	d, _ := lib.DeviceByIndex(0)
	procs, err := d.Processes(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range procs {
		// PID 4194546 is above any pid_max: no process on this host has it,
		// so the host fields are N/A with a reason.
		fmt.Println(p.PID(), p.Type(), p.GPUMemory(), p.GPUMemoryPercent(), p.Host().Name().Reason())
	}
	// Output:
	// 4194546 C 8862MiB 10.8% process gone
}

func ExampleValue_Reason() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	d, _ := lib.DeviceByIndex(0)
	fan := d.FanSpeed() // SXM boards have no fan
	if v, ok := fan.Get(); ok {
		fmt.Println("fan at", v)
	} else {
		fmt.Println("fan:", fan, "-", fan.Reason(), "- JSON:", jsonOf(fan))
	}
	fmt.Println("temperature:", d.Temperature().Or(0), "- JSON:", jsonOf(d.Temperature()))
	// Output:
	// fan: N/A - not supported - JSON: null
	// temperature: 41C - JSON: 41
}

func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
