//go:build cgo

package nvmlx

import (
	"encoding/binary"
	"reflect"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/internal/nverr"
)

// handleValue returns the raw NVML value of a vGPU instance or type handle:
// go-nvml's own handles are uint32 values; a fake (package fakegpu) exposes
// its value with a Handle method.
func handleValue(h any) (uint32, bool) {
	if x, ok := h.(interface{ Handle() uint32 }); ok {
		return x.Handle(), true
	}
	if v := reflect.ValueOf(h); v.IsValid() && v.Kind() == reflect.Uint32 {
		return uint32(v.Uint()), true
	}
	return 0, false
}

func (d *device) VirtualizationMode() (m int, err error) {
	err = d.b.call(symDeviceGetVirtualizationMode, func() nvml.Return {
		v, r := d.h.GetVirtualizationMode()
		m = int(v)
		return r
	})
	return m, err
}

func (d *device) ActiveVgpus() (out []VgpuInstance, err error) {
	err = d.b.call(symDeviceGetActiveVgpus, func() nvml.Return {
		l, r := d.h.GetActiveVgpus()
		out = make([]VgpuInstance, 0, len(l))
		for _, h := range l {
			if h != nil {
				out = append(out, &vgpu{b: d.b, h: h})
			}
		}
		return r
	})
	return out, err
}

// unionUint reads an nvmlValue_t union holding a value of type t as an
// unsigned integer; ok is false for a type that is not one.
func unionUint(t nvml.ValueType, b [8]byte) (uint32, bool) {
	switch t {
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return binary.LittleEndian.Uint32(b[:]), true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return uint32(min(binary.LittleEndian.Uint64(b[:]), 1<<32-1)), true
	}
	return 0, false
}

func (d *device) VgpuUtilization(lastSeen uint64) (out []VgpuSample, err error) {
	err = d.b.call(symDeviceGetVgpuUtilization, func() nvml.Return {
		t, l, r := d.h.GetVgpuUtilization(lastSeen)
		if r == nvml.ERROR_NOT_FOUND {
			return nvml.SUCCESS // no sample newer than lastSeen
		}
		out = make([]VgpuSample, 0, len(l))
		for _, s := range l {
			sm, ok1 := unionUint(t, s.SmUtil)
			fb, ok2 := unionUint(t, s.MemUtil)
			enc, ok3 := unionUint(t, s.EncUtil)
			dec, ok4 := unionUint(t, s.DecUtil)
			if ok1 && ok2 && ok3 && ok4 {
				out = append(out, VgpuSample{Instance: s.VgpuInstance, Timestamp: s.TimeStamp, SM: sm, Framebuffer: fb, Encoder: enc, Decoder: dec})
			}
		}
		return r
	})
	return out, err
}

func (d *device) VgpuProcessUtilization(lastSeen uint64) (out []VgpuProcessSample, err error) {
	err = d.b.call(symDeviceGetVgpuProcessUtilization, func() nvml.Return {
		l, r := d.h.GetVgpuProcessUtilization(lastSeen)
		if r == nvml.ERROR_NOT_FOUND {
			return nvml.SUCCESS
		}
		out = make([]VgpuProcessSample, len(l))
		for i, s := range l {
			out[i] = VgpuProcessSample{
				Instance: s.VgpuInstance, PID: s.Pid, Name: cstr(s.ProcessName[:]), Timestamp: s.TimeStamp,
				SM: s.SmUtil, Memory: s.MemUtil, Encoder: s.EncUtil, Decoder: s.DecUtil,
			}
		}
		return r
	})
	return out, err
}

// vgpu is a vGPU instance handle.
type vgpu struct {
	b *backend
	h nvml.VgpuInstance
}

func (v *vgpu) ID() (uint32, bool) { return handleValue(v.h) }

func (v *vgpu) UUID() (s string, err error) {
	err = v.b.call(symVgpuInstanceGetUUID, func() (r nvml.Return) { s, r = v.h.GetUUID(); return })
	return s, err
}

func (v *vgpu) VMID() (id string, domain bool, err error) {
	err = v.b.call(symVgpuInstanceGetVmID, func() nvml.Return {
		s, t, r := v.h.GetVmID()
		id, domain = s, t == nvml.VGPU_VM_ID_DOMAIN_ID
		return r
	})
	return id, domain, err
}

func (v *vgpu) VMDriverVersion() (s string, err error) {
	err = v.b.call(symVgpuInstanceGetVmDriverVersion, func() (r nvml.Return) { s, r = v.h.GetVmDriverVersion(); return })
	return s, err
}

// Type reads the type's ID and name; its class and framebuffer size are
// best effort (left empty when the driver cannot tell).
func (v *vgpu) Type() (t VgpuType, err error) {
	var th nvml.VgpuTypeId
	err = v.b.call(symVgpuInstanceGetType, func() (r nvml.Return) { th, r = v.h.GetType(); return })
	if err != nil {
		return t, err
	}
	if th == nil {
		return t, nverr.New("nvmlVgpuInstanceGetType", nverr.Unknown)
	}
	t.ID, t.HasID = handleValue(th)
	err = v.b.call(symVgpuTypeGetName, func() (r nvml.Return) { t.Name, r = th.GetName(); return })
	if err != nil {
		return t, err
	}
	_ = v.b.call(symVgpuTypeGetClass, func() (r nvml.Return) { t.Class, r = th.GetClass(); return })
	_ = v.b.call(symVgpuTypeGetFramebufferSize, func() (r nvml.Return) { t.Framebuffer, r = th.GetFramebufferSize(); return })
	return t, nil
}

func (v *vgpu) FBUsage() (n uint64, err error) {
	err = v.b.call(symVgpuInstanceGetFbUsage, func() (r nvml.Return) { n, r = v.h.GetFbUsage(); return })
	return n, err
}

func (v *vgpu) FrameRateLimit() (n uint32, err error) {
	err = v.b.call(symVgpuInstanceGetFrameRateLimit, func() (r nvml.Return) { n, r = v.h.GetFrameRateLimit(); return })
	return n, err
}

func (v *vgpu) EncoderCapacity() (n int, err error) {
	err = v.b.call(symVgpuInstanceGetEncoderCapacity, func() (r nvml.Return) { n, r = v.h.GetEncoderCapacity(); return })
	return n, err
}

func (v *vgpu) ECCMode() (on bool, err error) {
	err = v.b.call(symVgpuInstanceGetEccMode, func() nvml.Return {
		s, r := v.h.GetEccMode()
		on = s == nvml.FEATURE_ENABLED
		return r
	})
	return on, err
}

func (v *vgpu) GPUInstanceID() (id uint32, err error) {
	err = v.b.call(symVgpuInstanceGetGpuInstanceId, func() nvml.Return {
		n, r := v.h.GetGpuInstanceId()
		id = uint32(n)
		return r
	})
	return id, err
}

// placer is a vGPU handle that offers nvmlVgpuInstanceGetPlacementId itself
// (a fake, or a later go-nvml).
type placer interface {
	GetPlacementId() (nvml.VgpuPlacementId, nvml.Return)
}

// PlacementID reads nvmlVgpuInstanceGetPlacementId, which go-nvml v0.13.3-1
// declares but does not export: through the handle when it offers the call,
// otherwise, for go-nvml's own handles, through the driver's symbol directly.
func (v *vgpu) PlacementID() (id uint32, err error) {
	const sym = symVgpuInstanceGetPlacementId
	if p, ok := v.h.(placer); ok {
		err = v.b.call(sym, func() nvml.Return {
			pl, r := p.GetPlacementId()
			id = pl.PlacementId
			return r
		})
		return id, err
	}
	raw, ok := handleValue(v.h)
	if !ok || reflect.TypeOf(v.h).PkgPath() != reflect.TypeOf((*nvml.Interface)(nil)).Elem().PkgPath() {
		return 0, nverr.New(symbolNames[sym], nverr.NotSupported)
	}
	err = v.b.call(sym, func() nvml.Return {
		var r nvml.Return
		id, r = placementID(raw)
		return r
	})
	return id, err
}

func (v *vgpu) License() (l VgpuLicense, err error) {
	err = v.b.call(symVgpuInstanceGetLicenseInfo, func() nvml.Return {
		info, r := v.h.GetLicenseInfo()
		e := info.LicenseExpiry
		l = VgpuLicense{
			Licensed: info.IsLicensed != 0, State: info.CurrentState, ExpiryStatus: e.Status,
			Year: e.Year, Month: e.Month, Day: e.Day, Hour: e.Hour, Min: e.Min, Sec: e.Sec,
		}
		return r
	})
	return l, err
}

func (v *vgpu) AccountingMode() (on bool, err error) {
	err = v.b.call(symVgpuInstanceGetAccountingMode, func() nvml.Return {
		s, r := v.h.GetAccountingMode()
		on = s == nvml.FEATURE_ENABLED
		return r
	})
	return on, err
}

func (v *vgpu) AccountingPIDs() (out []uint32, err error) {
	err = v.b.call(symVgpuInstanceGetAccountingPids, func() nvml.Return {
		l, r := v.h.GetAccountingPids()
		out = pidsOf(l)
		return r
	})
	return out, err
}

func (v *vgpu) AccountingStats(pid uint32) (a AccountingStats, err error) {
	err = v.b.call(symVgpuInstanceGetAccountingStats, func() nvml.Return {
		s, r := v.h.GetAccountingStats(int(pid))
		a = accountingStatsOf(s)
		return r
	})
	return a, err
}

func (v *vgpu) ClearAccountingPIDs() error {
	return v.b.call(symVgpuInstanceClearAccountingPids, func() nvml.Return { return v.h.ClearAccountingPids() })
}
