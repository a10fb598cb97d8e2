//go:build cgo

package fakegpu

import (
	"encoding/binary"
	"reflect"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// NVML's NVML_GRID_LICENSE_EXPIRY_* values of VgpuLicenseExpiry.Status.
const (
	licenseExpiryNotAvailable  = 0
	licenseExpiryInvalid       = 1
	licenseExpiryValid         = 2
	licenseExpiryNotApplicable = 3
	licenseExpiryPermanent     = 4
)

// vgpuHandle is the nvml.VgpuInstance handle of a vGPU instance. Its …Func
// fields are set once, in wire, and never change, so calls may run
// concurrently; all state is read under the fleet's mutex.
type vgpuHandle struct {
	mock.VgpuInstance
	// GetPlacementIdFunc implements GetPlacementId, an NVML call
	// (nvmlVgpuInstanceGetPlacementId) that go-nvml v0.13.3-1's
	// nvml.VgpuInstance lacks; the interceptor wires it like the mock's.
	GetPlacementIdFunc func() (nvml.VgpuPlacementId, nvml.Return)
	v                  *Vgpu
	sites              sites // set by wire
}

var _ nvml.VgpuInstance = (*vgpuHandle)(nil)

// Handle returns the instance's nvmlVgpuInstance_t value, its ID. It is a
// plain Go method, not an NVML call: it is neither counted nor refused.
func (h *vgpuHandle) Handle() uint32 { return h.v.id }

// GetPlacementId answers nvmlVgpuInstanceGetPlacementId.
func (h *vgpuHandle) GetPlacementId() (nvml.VgpuPlacementId, nvml.Return) {
	return h.GetPlacementIdFunc()
}

// wire sets the implemented methods, then lets the fleet stub the rest and
// route all of them through its interceptor.
func (h *vgpuHandle) wire() {
	v := h.v
	h.GetUUIDFunc = func() (string, nvml.Return) { return v.uuid, nvml.SUCCESS }
	h.GetMdevUUIDFunc = func() (string, nvml.Return) { return v.uuid, nvml.SUCCESS }
	h.GetVmIDFunc = func() (string, nvml.VgpuVmIdType, nvml.Return) { return v.vmID, v.vmIDType, nvml.SUCCESS }
	h.GetTypeFunc = func() (nvml.VgpuTypeId, nvml.Return) { return v.typ, nvml.SUCCESS }
	h.GetEccModeFunc = func() (nvml.EnableState, nvml.Return) { return enable(v.ecc), nvml.SUCCESS }
	h.GetGpuPciIdFunc = func() (string, nvml.Return) { return v.pciID, nvml.SUCCESS }
	h.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return v.gi, nvml.SUCCESS }
	h.GetFrameRateLimitFunc = h.getFrameRateLimit
	h.GetVmDriverVersionFunc = h.getVmDriverVersion
	h.GetFbUsageFunc = h.getFbUsage
	h.GetEncoderCapacityFunc = h.getEncoderCapacity
	h.SetEncoderCapacityFunc = h.setEncoderCapacity
	h.GetLicenseStatusFunc = h.getLicenseStatus
	h.GetLicenseInfoFunc = h.getLicenseInfo
	h.GetAccountingModeFunc = h.getAccountingMode
	h.GetAccountingPidsFunc = h.getAccountingPids
	h.GetAccountingStatsFunc = h.getAccountingStats
	h.ClearAccountingPidsFunc = h.clearAccountingPids
	h.GetPlacementIdFunc = func() (nvml.VgpuPlacementId, nvml.Return) {
		p := nvml.VgpuPlacementId{PlacementId: v.placeID}
		p.Version = nvml.STRUCT_VERSION(p, 1)
		return p, nvml.SUCCESS
	}
	f := v.g.f
	sc := scope{prefix: "VgpuInstance.", symPrefix: "nvmlVgpuInstance", vgpu: v}
	h.sites = sites{}
	f.wire(reflect.ValueOf(&h.VgpuInstance).Elem(), sc, nil, h.sites)
	f.wire(reflect.ValueOf(h).Elem(), sc, nil, h.sites)
}

// lock locks the fleet and returns the instance, with the code a call
// answers if the instance was destroyed or its GPU lost since the
// interceptor let it through; defer the returned unlock.
func (h *vgpuHandle) lock() (*Vgpu, func(), nvml.Return) {
	v := h.v
	v.g.f.mu.Lock()
	switch {
	case v.destroyed:
		return v, v.g.f.mu.Unlock, nvml.ERROR_NOT_FOUND
	case v.g.lost:
		return v, v.g.f.mu.Unlock, nvml.ERROR_GPU_IS_LOST
	}
	return v, v.g.f.mu.Unlock, nvml.SUCCESS
}

// getFrameRateLimit answers ERROR_NOT_SUPPORTED with the limiter off, as
// NVML does for compute types.
func (h *vgpuHandle) getFrameRateLimit() (uint32, nvml.Return) {
	if h.v.frl == 0 {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return h.v.frl, nvml.SUCCESS
}

func (h *vgpuHandle) getVmDriverVersion() (string, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	if ret != nvml.SUCCESS {
		return "", ret
	}
	if v.vmDriver == "" {
		return v.g.f.driver, nvml.SUCCESS
	}
	return v.vmDriver, nvml.SUCCESS
}

func (h *vgpuHandle) getFbUsage() (uint64, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	if ret != nvml.SUCCESS {
		return 0, ret
	}
	return v.fbUsed, nvml.SUCCESS
}

func (h *vgpuHandle) getEncoderCapacity() (int, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	if ret != nvml.SUCCESS {
		return 0, ret
	}
	return int(v.encCap), nvml.SUCCESS
}

// setEncoderCapacity takes 0..100; anything else is
// ERROR_INVALID_ARGUMENT. The fake does not check for root.
func (h *vgpuHandle) setEncoderCapacity(c int) nvml.Return {
	if c < 0 || c > 100 {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	v, unlock, ret := h.lock()
	defer unlock()
	if ret == nvml.SUCCESS {
		v.encCap = uint32(c)
	}
	return ret
}

func (h *vgpuHandle) getLicenseStatus() (int, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	if ret != nvml.SUCCESS || !v.licensed {
		return 0, ret
	}
	return 1, nvml.SUCCESS
}

// getLicenseInfo reports a licence's expiry in UTC (status valid), a
// permanent licence as such, and no expiry without a licence.
func (h *vgpuHandle) getLicenseInfo() (nvml.VgpuLicenseInfo, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	if ret != nvml.SUCCESS {
		return nvml.VgpuLicenseInfo{}, ret
	}
	return licenseInfo(v.licensed, v.expiry), nvml.SUCCESS
}

// licenseInfo encodes a licence as NVML's nvmlVgpuLicenseInfo_t.
func licenseInfo(licensed bool, expiry time.Time) nvml.VgpuLicenseInfo {
	if !licensed {
		return nvml.VgpuLicenseInfo{
			CurrentState:  nvml.GRID_LICENSE_STATE_UNLICENSED,
			LicenseExpiry: nvml.VgpuLicenseExpiry{Status: licenseExpiryNotAvailable},
		}
	}
	info := nvml.VgpuLicenseInfo{IsLicensed: 1, CurrentState: nvml.GRID_LICENSE_STATE_LICENSED}
	if expiry.IsZero() {
		info.LicenseExpiry.Status = licenseExpiryPermanent
		return info
	}
	t := expiry.UTC()
	info.LicenseExpiry = nvml.VgpuLicenseExpiry{
		Year:   uint32(t.Year()),
		Month:  uint16(t.Month()),
		Day:    uint16(t.Day()),
		Hour:   uint16(t.Hour()),
		Min:    uint16(t.Minute()),
		Sec:    uint16(t.Second()),
		Status: licenseExpiryValid,
	}
	return info
}

// vgpuType is the nvml.VgpuTypeId handle of a vGPU type, one per type ID
// in a fleet. Its fields never change.
type vgpuType struct {
	mock.VgpuTypeId
	f     *Fleet
	id    uint32
	name  string
	fb    uint64 // bytes
	sites sites  // set by newVgpuType
}

var _ nvml.VgpuTypeId = (*vgpuType)(nil)

// Handle returns the type's nvmlVgpuTypeId_t value. It is a plain Go
// method, not an NVML call.
func (t *vgpuType) Handle() uint32 { return t.id }

// newVgpuType returns the wired handle of a type.
func (f *Fleet) newVgpuType(id uint32, name string, fb uint64) *vgpuType {
	t := &vgpuType{f: f, id: id, name: name, fb: fb}
	t.GetNameFunc = func() (string, nvml.Return) { return t.name, nvml.SUCCESS }
	t.GetFramebufferSizeFunc = func() (uint64, nvml.Return) { return t.fb, nvml.SUCCESS }
	t.GetClassFunc = func() (string, nvml.Return) { return vgpuClasses[t.class()].name, nvml.SUCCESS }
	t.GetLicenseFunc = func() (string, nvml.Return) { return vgpuClasses[t.class()].license, nvml.SUCCESS }
	t.GetFrameRateLimitFunc = t.getFrameRateLimit
	t.GetMaxInstancesFunc = t.getMaxInstances
	t.GetMaxInstancesPerVmFunc = func() (int, nvml.Return) { return 1, nvml.SUCCESS }
	t.sites = sites{}
	f.wire(reflect.ValueOf(&t.VgpuTypeId).Elem(), scope{prefix: "VgpuTypeId.", symPrefix: "nvmlVgpuType", vgpuType: true}, nil, t.sites)
	return t
}

// vgpuClass is what a type's class letter stands for.
type vgpuClass struct {
	name    string // GetClass
	license string // GetLicense
	frl     uint32 // the type's frame rate limit; 0: none
}

// vgpuClasses are the classes by the letter ending a type name; other
// letters count as C.
var vgpuClasses = map[byte]vgpuClass{
	'C': {name: "Compute", license: "NVIDIA-vComputeServer,9.0"},
	'Q': {name: "Quadro", license: "Quadro-Virtual-DWS,5.0", frl: 60},
	'B': {name: "NVS", license: "GRID-Virtual-PC,2.0;Quadro-Virtual-DWS,5.0", frl: 45},
}

// class is the type's class letter.
func (t *vgpuType) class() byte {
	if _, c, ok := parseVgpuType(t.name); ok {
		if _, known := vgpuClasses[c]; known {
			return c
		}
	}
	return 'C'
}

// getFrameRateLimit answers ERROR_NOT_SUPPORTED for compute types, which
// have no frame rate limiter.
func (t *vgpuType) getFrameRateLimit() (uint32, nvml.Return) {
	if frl := vgpuClasses[t.class()].frl; frl != 0 {
		return frl, nvml.SUCCESS
	}
	return 0, nvml.ERROR_NOT_SUPPORTED
}

// getMaxInstances is how many instances of the type fit in the GPU's
// memory: ERROR_INVALID_ARGUMENT for another fleet's device or nil,
// ERROR_NOT_SUPPORTED for a MIG device or a GPU not in host-vGPU mode.
func (t *vgpuType) getMaxInstances(dev nvml.Device) (int, nvml.Return) {
	d, ok := dev.(*device)
	if !ok || d == nil || d.g.f != t.f {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	g, unlock := d.lock()
	defer unlock()
	switch {
	case g.lost:
		return 0, nvml.ERROR_GPU_IS_LOST
	case d.m != nil || !g.vgpuHost:
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	return int(g.spec.MemoryTotal / t.fb), nvml.SUCCESS
}

// vgpuTypeGetMaxInstances is the device's and the library's
// VgpuTypeGetMaxInstances: the type handle's GetMaxInstances(dev).
func vgpuTypeGetMaxInstances(f *Fleet, dev nvml.Device, typ nvml.VgpuTypeId) (int, nvml.Return) {
	t, ok := typ.(*vgpuType)
	if !ok || t == nil || t.f != f {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return t.GetMaxInstances(dev)
}

// Device methods of a GPU's handle. MIG device handles do not wire them:
// they answer ERROR_NOT_SUPPORTED.

func (d *device) getVirtualizationMode() (nvml.GpuVirtualizationMode, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if g.vgpuHost {
		return nvml.GPU_VIRTUALIZATION_MODE_HOST_VGPU, nvml.SUCCESS
	}
	return nvml.GPU_VIRTUALIZATION_MODE_NONE, nvml.SUCCESS
}

// getActiveVgpus lists the instances' handles in creation order;
// ERROR_NOT_SUPPORTED outside host-vGPU mode.
func (d *device) getActiveVgpus() ([]nvml.VgpuInstance, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if !g.vgpuHost {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	out := make([]nvml.VgpuInstance, len(g.vgpus))
	for i, v := range g.vgpus {
		out[i] = v.h
	}
	return out, nvml.SUCCESS
}

// getVgpuUtilization returns, per instance with a sample newer than
// lastSeen (µs), its newest: SUCCESS and no samples without instances,
// ERROR_NOT_FOUND when no instance has a newer sample, as NVML does, and
// ERROR_NOT_SUPPORTED outside host-vGPU mode.
func (d *device) getVgpuUtilization(lastSeen uint64) (nvml.ValueType, []nvml.VgpuInstanceUtilizationSample, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if !g.vgpuHost {
		return 0, nil, nvml.ERROR_NOT_SUPPORTED
	}
	out := []nvml.VgpuInstanceUtilizationSample{}
	for _, v := range g.vgpus {
		n := len(v.samples)
		if n == 0 || v.samples[n-1].ts <= lastSeen {
			continue
		}
		s := v.samples[n-1]
		smp := nvml.VgpuInstanceUtilizationSample{VgpuInstance: v.id, TimeStamp: s.ts}
		binary.LittleEndian.PutUint32(smp.SmUtil[:], s.sm)
		binary.LittleEndian.PutUint32(smp.MemUtil[:], s.fb)
		binary.LittleEndian.PutUint32(smp.EncUtil[:], s.enc)
		binary.LittleEndian.PutUint32(smp.DecUtil[:], s.dec)
		out = append(out, smp)
	}
	if len(out) == 0 && len(g.vgpus) > 0 {
		return nvml.VALUE_TYPE_UNSIGNED_INT, nil, nvml.ERROR_NOT_FOUND
	}
	return nvml.VALUE_TYPE_UNSIGNED_INT, out, nvml.SUCCESS
}

// getVgpuProcessUtilization returns, per guest process with a sample newer
// than lastSeen (µs), its newest; ERROR_NOT_FOUND when there is none, and
// ERROR_NOT_SUPPORTED outside host-vGPU mode.
func (d *device) getVgpuProcessUtilization(lastSeen uint64) ([]nvml.VgpuProcessUtilizationSample, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if !g.vgpuHost {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	var out []nvml.VgpuProcessUtilizationSample
	for _, v := range g.vgpus {
		for _, p := range v.procs {
			if p.sample == 0 || p.sample <= lastSeen {
				continue
			}
			s := nvml.VgpuProcessUtilizationSample{
				VgpuInstance: v.id,
				Pid:          p.PID,
				TimeStamp:    p.sample,
				SmUtil:       p.sampleSM,
				MemUtil:      p.sampleMem,
				EncUtil:      p.sampleEnc,
				DecUtil:      p.sampleDec,
			}
			putCString(s.ProcessName[:], p.name())
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return out, nvml.SUCCESS
}

func (d *device) vgpuTypeGetMaxInstances(typ nvml.VgpuTypeId) (int, nvml.Return) {
	return vgpuTypeGetMaxInstances(d.g.f, d, typ)
}
