//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

func ExampleLibrary_CUDADevices() {
	fleet, _ := fakegpu.Preset("dgx-h100")
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	devs, err := lib.CUDADevices(nvgo.VisibleDevices("3, +1,junk,0"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range devs {
		fmt.Printf("cuda:%d is GPU %d\n", c.CUDAIndex(), c.Index())
	}
	_, err = lib.CUDADevices(nvgo.VisibleDevices("0,0"))
	fmt.Println(err)
	// Output:
	// cuda:0 is GPU 3
	// cuda:1 is GPU 1
	// <nil>
}

func ExampleDevice_MIGDevices() {
	fleet, _ := fakegpu.Preset("dgx-h100-mig")
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	gpu0, _ := lib.DeviceByIndex(0)
	migs, _ := gpu0.MIGDevices()
	for _, m := range migs {
		fmt.Println(m, "GI", m.GPUInstanceID(), "memory", m.MemoryTotal(), "utilization", m.GPUUtilization())
	}
	// Output:
	// MIG 0/0 (3g.40gb) GI 2 memory 39.50GiB utilization N/A
	// MIG 0/1 (2g.20gb) GI 3 memory 20096MiB utilization N/A
	// MIG 0/3 (1g.10gb) GI 9 memory 9984MiB utilization N/A
}

func ExampleLibrary_ReserveDevices() {
	fleet, _ := fakegpu.Preset("dgx-h100")
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()
	dir, _ := os.MkdirTemp("", "nvgo-example")
	defer os.RemoveAll(dir)

	ctx := context.Background()
	r, err := lib.ReserveDevices(ctx, nvgo.WithCount(2), nvgo.WithLockDir(dir))
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd := r.Command(ctx, "sh", "-c", `echo "job sees $CUDA_VISIBLE_DEVICES" | cut -c1-30`)
	cmd.Stdout = os.Stdout
	_ = cmd.Start()
	r.Release() // the job holds the reservation until it exits
	_ = cmd.Wait()
	// Output: job sees GPU-01ae3f94-a289-eb0
}
