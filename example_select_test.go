//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// SelectDevices filters and ranks the devices as nvitop's select_devices
// does. A GPU it cannot read is not fatal: the others are chosen from, and
// the error, a DeviceErrors, says which GPU was left out and why. The
// library writes nothing to a log.
func ExampleLibrary_SelectDevices_lostGPU() {
	fleet, _ := fakegpu.Preset("dgx-h100") // GPUs 0–2 busy, 3–7 idle
	fleet.GPU(5).Lose()                    // falls off the bus
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	devs, err := lib.SelectDevices(context.Background(),
		nvgo.WithCount(2),
		nvgo.WithMinFreeMemory(20<<30),
		nvgo.WithMaxGPUUtilization(30),
	)
	indices, _ := nvgo.DeviceIndices(devs) // nvgo.DeviceUUIDs(devs) for CUDA_VISIBLE_DEVICES
	fmt.Println("chosen:", indices)
	var left nvgo.DeviceErrors
	if errors.As(err, &left) {
		for _, e := range left {
			fmt.Printf("left out: GPU %d, lost: %t\n", e.Index, errors.Is(e.Err, nvgo.ErrGPULost))
		}
	}

	_, err = lib.SelectDevices(context.Background(), nvgo.WithMinCount(8))
	fmt.Println("8 wanted:", errors.Is(err, nvgo.ErrTooFewDevices))
	// Output:
	// chosen: [7 6]
	// left out: GPU 5, lost: true
	// 8 wanted: true
}

// Free is nvgo's one definition of a free GPU. A GPU with MIG on is free
// only when it has MIG devices and every one of them is free: with none, no
// work can run on it.
func ExampleDeviceSnapshot_Free() {
	fleet, _ := fakegpu.Preset("dgx-h100-mig") // MIG on GPUs 0 and 1; GPU 1 has no MIG device
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	snap, err := lib.Snapshot(context.Background(),
		nvgo.WithFields(nvgo.FieldProcesses|nvgo.FieldMIGMode|nvgo.FieldMIGDevices))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range snap.Devices[:4] {
		fmt.Printf("GPU %d: MIG %v, free %v\n", d.Index, d.MIGMode, d.Free())
		for _, m := range d.MIGDevices {
			fmt.Printf("  MIG %d (%v): free %v\n", m.MIGIndex, m.MIGProfile, m.Free())
		}
	}
	// Output:
	// GPU 0: MIG On, free false
	//   MIG 0 (3g.40gb): free false
	//   MIG 1 (2g.20gb): free true
	//   MIG 3 (1g.10gb): free true
	// GPU 1: MIG On, free false
	// GPU 2: MIG Off, free false
	// GPU 3: MIG Off, free true
}
