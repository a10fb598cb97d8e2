//go:build cgo

package nvmlx

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/internal/nverr"
)

// numbers are the functions Device.Number calls, each probed once after
// Init like every other symbol: a reading of one number of a device is one
// line here.
var numbers = map[Number]func(nvml.Device) (uint32, nvml.Return){
	"nvmlDeviceGetPowerManagementDefaultLimit": nvml.Device.GetPowerManagementDefaultLimit,
}

func (d *device) Number(n Number) (uint32, error) {
	call, ok := numbers[n]
	if !ok {
		return 0, nverr.New(string(n), nverr.NotSupported)
	}
	b := d.b
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usable(string(n), b.nums[n]); err != nil {
		return 0, err
	}
	v, r := call(d.h)
	if r != nvml.SUCCESS {
		return 0, nverr.New(string(n), nverr.Code(r))
	}
	return v, nil
}
