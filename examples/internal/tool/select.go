package tool

import (
	"fmt"
	"os/user"
	"slices"

	"github.com/nvgo/nvgo"
)

// Selection is what a tool shows: the devices, and with --only-visible the
// CUDA index of each (nil otherwise).
type Selection struct {
	Devices []*nvgo.Device
	CUDA    []int
}

// BadArgError is an argument that the machine shows to be wrong, such as
// --only 9 on an 8-GPU machine (exit status 2).
type BadArgError struct{ error }

// Unwrap returns the error.
func (e BadArgError) Unwrap() error { return e.error }

// ChooseDevices picks the GPUs of only (NVML indices, in that order), the
// devices CUDA would see here in CUDA order with onlyVisible, else every
// GPU.
func ChooseDevices(lib *nvgo.Library, only []int, onlyVisible bool) (Selection, error) {
	if onlyVisible {
		cdevs, err := lib.VisibleCUDADevices()
		if err != nil {
			return Selection{}, err
		}
		sel := Selection{Devices: make([]*nvgo.Device, len(cdevs)), CUDA: make([]int, len(cdevs))}
		for i, c := range cdevs {
			sel.Devices[i], sel.CUDA[i] = c.Device, c.CUDAIndex()
		}
		return sel, nil
	}
	devs, err := lib.Devices()
	if err != nil {
		return Selection{}, err
	}
	if len(only) == 0 {
		return Selection{Devices: devs}, nil
	}
	var picked []*nvgo.Device
	for _, i := range only {
		if i < 0 || i >= len(devs) {
			return Selection{}, BadArgError{fmt.Errorf("--only %d: no such GPU (there are %d)", i, len(devs))}
		}
		if !slices.Contains(picked, devs[i]) { // "--only 1 1" shows GPU 1 once
			picked = append(picked, devs[i])
		}
	}
	return Selection{Devices: picked}, nil
}

// ProcessFilter keeps the processes --compute, --graphics, --user and --pid
// ask for.
type ProcessFilter struct {
	Compute, Graphics bool
	// UserSet is --user; User its name, "" for the current user.
	UserSet bool
	User    string
	PIDs    []int
}

// Keep reports whether p passes the filter.
func (f ProcessFilter) Keep(p nvgo.GpuProcessSnapshot) bool {
	switch {
	case f.Compute && p.Type&nvgo.ProcessCompute == 0:
		return false
	case f.Graphics && p.Type&nvgo.ProcessGraphics == 0:
		return false
	case f.UserSet && p.Username.Or("") != f.userName():
		return false
	case len(f.PIDs) > 0 && !slices.Contains(f.PIDs, p.PID):
		return false
	}
	return true
}

// userName is --user's name, the current user's when none was given.
func (f ProcessFilter) userName() string {
	if f.User != "" {
		return f.User
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

// Filter keeps the processes that pass, in place.
func (f ProcessFilter) Filter(ps []nvgo.GpuProcessSnapshot) []nvgo.GpuProcessSnapshot {
	return slices.DeleteFunc(ps, func(p nvgo.GpuProcessSnapshot) bool { return !f.Keep(p) })
}
