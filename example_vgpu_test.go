//go:build cgo

package nvgo_test

import (
	"fmt"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// On a vGPU host, list every GPU's vGPU instances: the VM each serves, its
// type and license, its framebuffer and utilization, and the busy processes
// inside the VM. On bare metal the list is simply empty.
func ExampleLibrary_VgpuInstances() {
	fleet, _ := fakegpu.Preset("vgpu-h100") // nvgo.Open() on a real host
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	instances, err := lib.VgpuInstances()
	if err != nil {
		fmt.Println(err)
	}
	for _, v := range instances {
		typ := nvgo.FlatMap(v.Type(), func(t nvgo.VgpuType) nvgo.Value[string] { return t.Name })
		vm := nvgo.Map(v.VM(), func(vm nvgo.VM) string { return vm.ID })
		lic := nvgo.Map(v.License(), func(l nvgo.VgpuLicense) nvgo.LicenseState { return l.State })
		sm := nvgo.Map(v.Utilization(), func(u nvgo.VgpuUtilization) nvgo.Percent { return u.SMUtilization })
		fmt.Printf("GPU %d  %s  VM %s  %s  FB %s  SM %s\n",
			v.Device().Index(), typ, vm, lic, v.FramebufferUsed(), sm)
		procs, _ := v.Processes()
		for _, p := range procs {
			fmt.Printf("    guest PID %d %s  SM %s\n", p.PID, p.Name, p.SMUtilization)
		}
	}
	// Output:
	// GPU 0  NVIDIA H100-20C  VM db085366-52f1-a0a8-4dc7-9879e89ef6f1  licensed  FB 12288MiB  SM 40%
	//     guest PID 2817 python3  SM 28%
	//     guest PID 2854 python3  SM 12%
	// GPU 0  NVIDIA H100-20C  VM 3ded5122-952c-f3ac-1413-680a1d15eea2  licensed  FB 16384MiB  SM 35%
	//     guest PID 1733 tritonserver  SM 35%
	// GPU 0  NVIDIA H100-20C  VM d2376d31-4254-f7d1-cde7-cca9cd578407  licensed  FB 512.0MiB  SM 0%
	// GPU 0  NVIDIA H100-20C  VM cd728cb4-37d4-b1c0-6937-a95c96bfdefe  unlicensed  FB 256.0MiB  SM 0%
	// GPU 1  NVIDIA H100-40C  VM e194e74e-32d4-2382-ce88-e74a589631fc  licensed  FB 30.00GiB  SM 60%
	//     guest PID 4120 python3  SM 60%
	// GPU 1  NVIDIA H100-40C  VM 2ac9408c-944c-29cd-b985-46daec562dc5  licensed  FB 8192MiB  SM 25%
	//     guest PID 991 python3  SM 25%
}
