package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nvgo/nvgo"
)

// inherited returns the devices CUDA uses under the inherited
// CUDA_VISIBLE_DEVICES (cvd, or this process's when cvd is nil), in CUDA's
// order. all is true when the variable is unset: every device is visible,
// and the selection needs no candidates.
//
// Where nvgo's rules cannot decide (indices with MIG on, different models
// under FASTEST_FIRST, …) it asks the CUDA driver in a child process; when
// that fails too, the result is exit status 3, as nvisel's CUDA errors are.
func inherited(ctx context.Context, lib *nvgo.Library, cvd *string, stderr io.Writer) (devs []*nvgo.Device, all bool, err error) {
	env := nvgo.CurrentCUDAEnv()
	if cvd != nil {
		env.Visible, env.VisibleSet = *cvd, true
	}
	if !env.VisibleSet {
		return nil, true, nil
	}
	cds, err := lib.CUDADevices(env)
	if errors.Is(err, nvgo.ErrUndetermined) {
		var derr error
		if cds, derr = lib.CUDADevicesFromDriver(ctx, env); derr != nil {
			why := fmt.Sprintf("asking the CUDA driver failed: %v", derr)
			if errors.Is(derr, nvgo.ErrNoCUDADriver) {
				why = "there is no CUDA driver (libcuda.so.1) to ask"
			}
			return nil, false, fail(exitCUDA, "--inherit: %v; %s", err, why)
		}
	} else if err != nil {
		return nil, false, libraryFailure(err)
	}
	if len(cds) == 0 {
		fmt.Fprintf(stderr, "nvgo-select: warning: --inherit: CUDA_VISIBLE_DEVICES=%s leaves CUDA no device\n", strconv.Quote(env.Visible))
	}
	devs = make([]*nvgo.Device, len(cds))
	for i, c := range cds {
		devs[i] = c.Device
	}
	return devs, false, nil
}

// indicesMeanTheSame returns nil when the NVML indices of devs, written to
// CUDA_VISIBLE_DEVICES in place of its current value, name those devices
// for CUDA: no MIG device among them, and under this process's
// CUDA_DEVICE_ORDER CUDA ordinal i is NVML GPU i for every GPU. Otherwise
// it returns an exit-3 failure that says why. (nvisel prints NVML indices
// regardless, right only under CUDA_DEVICE_ORDER=PCI_BUS_ID, and falls back
// to UUIDs for MIG devices without saying so.)
func indicesMeanTheSame(lib *nvgo.Library, devs []*nvgo.Device) error {
	env := nvgo.CUDAEnv{Order: nvgo.CurrentCUDAEnv().Order} // CUDA_VISIBLE_DEVICES unset: every device
	refuse := func(why string, a ...any) error {
		hint := "use UUIDs (--format uuid, the default)"
		if env.Order != nvgo.OrderPCIBusID {
			hint += " or set CUDA_DEVICE_ORDER=PCI_BUS_ID"
		}
		return fail(exitCUDA, "--format index: %s; %s", fmt.Sprintf(why, a...), hint)
	}
	for _, d := range devs {
		if d.IsMIGDevice() {
			return fail(exitCUDA, "--format index: %s is a MIG device, which has no index CUDA_VISIBLE_DEVICES can name; use UUIDs (--format uuid, the default)", d)
		}
	}
	cds, err := lib.CUDADevices(env)
	if errors.Is(err, nvgo.ErrUndetermined) {
		return refuse("CUDA's numbering of the GPUs is not known (%v)", err)
	} else if err != nil {
		return libraryFailure(err)
	}
	gpus, err := lib.Devices()
	if err != nil {
		return libraryFailure(err)
	}
	if len(cds) != len(gpus) {
		return refuse("CUDA sees %d devices where NVML lists %d GPUs", len(cds), len(gpus))
	}
	for i, c := range cds {
		if c.IsMIGDevice() || c.Index() != i {
			return refuse("CUDA device %d is %s, not GPU %d", i, c.Device, i)
		}
	}
	return nil
}
