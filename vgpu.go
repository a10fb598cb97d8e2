package nvgo

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
	"github.com/nvgo/nvgo/internal/sampling"
)

// VgpuInstance is a vGPU instance: a share of a physical GPU given to one
// virtual machine on a vGPU host. Its identity (UUID, type, VM, placement)
// is read once; every other method reads the driver on each call. Methods
// never panic: what cannot be read is N/A with its reason, and N/A with
// reason InstanceGone (errors matching ErrVgpuGone) once the instance was
// destroyed.
//
// Instances come from Device.VgpuInstances and Library.VgpuInstances, which
// list the live ones each time; the same *VgpuInstance is returned for an
// instance while it stays listed. A VgpuInstance is safe for concurrent use.
type VgpuInstance struct {
	device *Device
	id     uint32
	hasID  bool
	h      nvmlx.VgpuInstance

	uuid          lazyValue[string]
	typ           lazyValue[VgpuType]
	vm            lazyValue[VM]
	placement     lazyValue[int]
	gpuInstanceID lazyValue[int]
}

// ID returns NVML's ID of the instance, the "vGPU ID" nvidia-smi prints.
// Utilization samples name instances by it.
func (v *VgpuInstance) ID() uint32 { return v.id }

// Device returns the physical GPU the instance runs on.
func (v *VgpuInstance) Device() *Device { return v.device }

// String names the instance, e.g. "GPU 0 vGPU 3251634190".
func (v *VgpuInstance) String() string { return v.label() }

func (v *VgpuInstance) label() string {
	return fmt.Sprintf("%s vGPU %d", v.device.label(), v.id)
}

// fail adds the instance to err, and ErrVgpuGone when the driver says the
// instance no longer exists.
func (v *VgpuInstance) fail(err error) error {
	if errorsIsAny(err, ErrNotFound, ErrInvalidArgument) {
		return fmt.Errorf("%s: %w: %w", v.label(), ErrVgpuGone, err)
	}
	return fmt.Errorf("%s: %w", v.label(), err)
}

// value converts one reading.
func vgpuValue[T any](v *VgpuInstance, x T, err error) Value[T] {
	if err != nil {
		err = v.fail(err)
		return NA[T](ReasonOf(err), err)
	}
	return Some(x)
}

// vgpuStatic reads an identity value once.
func vgpuStatic[T any](v *VgpuInstance, l *lazyValue[T], read func() (T, error)) Value[T] {
	return l.get(func() Value[T] {
		x, err := read()
		return vgpuValue(v, x, err)
	})
}

// UUID returns the instance's UUID. Static.
func (v *VgpuInstance) UUID() Value[string] {
	return vgpuStatic(v, &v.uuid, v.h.UUID)
}

// Type returns the instance's vGPU type, e.g. "NVIDIA H100-20C". Static.
func (v *VgpuInstance) Type() Value[VgpuType] {
	return vgpuStatic(v, &v.typ, func() (VgpuType, error) {
		t, err := v.h.Type()
		out := VgpuType{Name: nonEmpty(t.Name), Class: nonEmpty(t.Class), ID: NA[uint32](NotSupported, nil), Framebuffer: NA[Bytes](NotReported, nil)}
		if t.HasID {
			out.ID = Some(t.ID)
		}
		if t.Framebuffer != 0 {
			out.Framebuffer = Some(Bytes(t.Framebuffer))
		}
		return out, err
	})
}

// nonEmpty is s, or N/A (NotReported) for "", the driver's "none".
func nonEmpty(s string) Value[string] {
	if s == "" {
		return NA[string](NotReported, nil)
	}
	return Some(s)
}

// VM returns the virtual machine the instance is attached to. Static.
func (v *VgpuInstance) VM() Value[VM] {
	return vgpuStatic(v, &v.vm, func() (VM, error) {
		id, domain, err := v.h.VMID()
		vm := VM{ID: id}
		if domain {
			vm.Kind = VMIDDomain
		}
		return vm, err
	})
}

// PlacementID returns where on the GPU the instance was placed (the
// placement ID of nvidia-smi vgpu -q). Static. N/A with reason
// FunctionMissing on drivers before R550.
func (v *VgpuInstance) PlacementID() Value[int] {
	return vgpuStatic(v, &v.placement, func() (int, error) {
		id, err := v.h.PlacementID()
		return int(id), err
	})
}

// GPUInstanceID returns the MIG GPU instance backing a MIG-backed vGPU.
// Static. N/A with reason NotSupported for a time-sliced vGPU.
func (v *VgpuInstance) GPUInstanceID() Value[int] {
	return vgpuStatic(v, &v.gpuInstanceID, func() (int, error) {
		id, err := v.h.GPUInstanceID()
		if err == nil && id == nvmlx.NoInstance {
			return 0, errNotMIGBacked
		}
		return int(id), err
	})
}

var errNotMIGBacked = fmt.Errorf("vGPU is not MIG-backed: %w", ErrNotSupported)

// VMDriverVersion returns the version of the NVIDIA driver inside the VM,
// e.g. "580.95.05". N/A until the guest driver has loaded.
func (v *VgpuInstance) VMDriverVersion() Value[string] {
	s, err := v.h.VMDriverVersion()
	if err == nil && (s == "" || s == "Not Available") {
		return NA[string](NotReported, fmt.Errorf("%s: guest driver version: %w", v.label(), ErrNotReported))
	}
	return vgpuValue(v, s, err)
}

// FramebufferUsed returns the framebuffer memory the instance uses.
func (v *VgpuInstance) FramebufferUsed() Value[Bytes] {
	n, err := v.h.FBUsage()
	return vgpuValue(v, Bytes(n), err)
}

// FrameRateLimit returns the instance's frame-rate limit in frames per
// second; N/A with reason NotSupported when the limiter is off (as for
// compute types).
func (v *VgpuInstance) FrameRateLimit() Value[int] {
	n, err := v.h.FrameRateLimit()
	return vgpuValue(v, int(n), err)
}

// EncoderCapacity returns the share of the GPU's video encoders the
// instance may use, in percent.
func (v *VgpuInstance) EncoderCapacity() Value[Percent] {
	n, err := v.h.EncoderCapacity()
	return vgpuValue(v, Percent(n), err)
}

// ECCMode reports whether ECC is on for the instance.
func (v *VgpuInstance) ECCMode() Value[OnOff] {
	on, err := v.h.ECCMode()
	return vgpuValue(v, OnOff(on), err)
}

// License returns the instance's license (nvmlVgpuInstanceGetLicenseInfo_v2).
func (v *VgpuInstance) License() Value[VgpuLicense] {
	l, err := v.h.License()
	return vgpuValue(v, licenseOf(l), err)
}

// Utilization returns the instance's newest utilization sample, reading
// the samples the driver took since the device's last read (one NVML call
// for all the device's instances; Device.Snapshot with FieldVgpuInstances
// makes one for all). Time says how old the sample is. N/A with reason
// NotReported while the driver has none for the instance.
func (v *VgpuInstance) Utilization() Value[VgpuUtilization] {
	h, err := v.device.handle()
	if err != nil {
		return NA[VgpuUtilization](ReasonOf(err), err)
	}
	st := &v.device.vgpus
	st.mu.Lock()
	defer st.mu.Unlock()
	now := v.device.lib.clock.Now()
	if err := st.pollUtilization(h, now); err != nil {
		err = fmt.Errorf("%s: %w", v.device.label(), err)
		return NA[VgpuUtilization](ReasonOf(err), err)
	}
	return st.utilizationOf(v, now)
}

// Processes returns the processes inside the instance's VM that used the
// GPU in the driver's latest sample period, newest sample first
// (nvmlDeviceGetVgpuProcessUtilization: one NVML call for all the device's
// instances). The driver reports only processes with non-zero utilization,
// so an idle process is not listed.
func (v *VgpuInstance) Processes() ([]VgpuProcess, error) {
	h, err := v.device.handle()
	if err != nil {
		return nil, err
	}
	st := &v.device.vgpus
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := st.pollProcesses(h, v.device.lib.clock.Now()); err != nil {
		return nil, fmt.Errorf("%s: %w", v.device.label(), err)
	}
	return st.processesOf(v.id), nil
}

// AccountingMode reports whether per-process accounting is on for the
// instance (set from inside the VM or by the vGPU manager).
func (v *VgpuInstance) AccountingMode() Value[OnOff] {
	on, err := v.h.AccountingMode()
	return vgpuValue(v, OnOff(on), err)
}

// accountingErr is fail, and says so when "not supported" means that the
// instance's accounting mode is off (one more call, only on failure).
func (v *VgpuInstance) accountingErr(err error) error {
	if accountingOff(err, v.h.AccountingMode) {
		return fmt.Errorf("%s: %w: %w", v.label(), ErrAccountingOff, err)
	}
	return v.fail(err)
}

// AccountedPIDs returns, sorted and each once, the guest PIDs that have an
// accounting record on the instance, running or exited. With accounting
// off the error wraps ErrAccountingOff and matches ErrNotSupported.
//
// The records live in a circular buffer: a new process overwrites the
// oldest record once it is full. When a PID was used by several processes
// only the latest one's record is kept, and before the buffer is full some
// of the earlier ones may not be listed at all.
func (v *VgpuInstance) AccountedPIDs() ([]int, error) {
	pids, err := v.h.AccountingPIDs()
	if err != nil {
		return nil, v.accountingErr(err)
	}
	return sortedPIDs(pids), nil
}

// ProcessAccounting returns the accounting record of the guest process
// pid: its lifetime GPU and memory utilization, its maximum memory, its
// running time once it exited and its start. On a PID collision the driver
// keeps only the process that ended last. N/A with reason NotSupported when
// accounting is off (the error wraps ErrAccountingOff), NotReported when
// there is no record of pid (matching ErrNotFound) and InstanceGone once
// the instance was destroyed.
func (v *VgpuInstance) ProcessAccounting(pid int) Value[ProcessAccounting] {
	if !validPID(pid) {
		return noRecord(v.label(), pid, nil)
	}
	s, err := v.h.AccountingStats(uint32(pid))
	switch {
	case err == nil:
		return Some(accountingOf(pid, s))
	case errors.Is(err, ErrNotFound):
		// NVML's NOT_FOUND means either "no record" or "no such instance":
		// ask the instance whether it still exists.
		if _, e := v.h.UUID(); e != nil && errorsIsAny(e, ErrNotFound, ErrInvalidArgument) {
			e = v.fail(e)
			return NA[ProcessAccounting](ReasonOf(e), e)
		}
		return noRecord(v.label(), pid, err)
	}
	err = v.accountingErr(err)
	return NA[ProcessAccounting](ReasonOf(err), err)
}

// ClearAccountedPIDs deletes the accounting records of the instance's
// processes that have exited; running ones keep theirs. It needs root on
// the host: otherwise the error matches ErrNoPermission. With accounting
// off it matches ErrNotSupported and wraps ErrAccountingOff.
func (v *VgpuInstance) ClearAccountedPIDs() error {
	if err := v.h.ClearAccountingPIDs(); err != nil {
		return fmt.Errorf("clear accounted PIDs: %w", v.accountingErr(err))
	}
	return nil
}

// VirtualizationMode returns how the GPU is virtualized; static. N/A on a
// MIG device (ask its parent).
func (d *Device) VirtualizationMode() Value[VirtualizationMode] {
	if d.mig != nil {
		return NA[VirtualizationMode](NotSupported, errNotOnMIG)
	}
	return readStatic(d, &d.virtMode, func(h nvmlx.Device) (VirtualizationMode, error) {
		m, err := h.VirtualizationMode()
		return VirtualizationMode(m), err
	})
}

// VgpuInstances lists the vGPU instances running on the GPU, in the
// driver's order. A GPU that is not a vGPU host, a MIG device and a driver
// without vGPU support all give an empty list and no error; a lost GPU gives
// an error. Each call asks the driver again (instances come and go with
// their VMs); an instance still listed keeps its *VgpuInstance.
func (d *Device) VgpuInstances() ([]*VgpuInstance, error) {
	if d.mig != nil {
		return nil, nil
	}
	h, err := d.handle()
	if err != nil {
		return nil, err
	}
	return d.listVgpus(&passReader{d: d, h: h})
}

// listVgpus lists the instances: no call at all when the GPU's
// virtualization mode (read once) says it is not a vGPU host.
func (d *Device) listVgpus(r *passReader) ([]*VgpuInstance, error) {
	if r.lost != nil {
		return nil, r.lost
	}
	if m, ok := d.VirtualizationMode().Get(); ok && !m.IsVgpuHost() {
		return nil, nil
	}
	hs, err := tryReading(d, opVgpu, r.h.ActiveVgpus)
	if r.check(err) != nil {
		if errors.Is(err, ErrNotSupported) {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: list vGPU instances: %w", d.label(), err)
	}
	return d.vgpus.adopt(d, hs), nil
}

// VgpuInstances lists the vGPU instances of every GPU, GPU by GPU.
// A GPU that cannot be listed (lost, say) is left out and its error joined
// into the returned one; the others are still listed.
func (l *Library) VgpuInstances() ([]*VgpuInstance, error) {
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	var out []*VgpuInstance
	var errs []error
	for _, d := range devs {
		vs, err := d.VgpuInstances()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, vs...)
	}
	return out, errors.Join(errs...)
}

// vgpuState is a device's vGPU bookkeeping: the instances of the latest
// listing, and the newest utilization samples of the instances and of the
// processes in their VMs, read with the Device's own cursors.
type vgpuState struct {
	mu        sync.Mutex
	instances map[uint32]*VgpuInstance
	util      sampling.CurrentVgpus
	procs     sampling.CurrentVgpuProcesses
}

func (st *vgpuState) prepare() {
	st.util = sampling.NewCurrentVgpus()
	st.procs = sampling.NewCurrentVgpuProcesses()
}

// adopt maps a listing onto the instance objects, keeping those still
// listed and forgetting the others with their samples.
func (st *vgpuState) adopt(d *Device, hs []nvmlx.VgpuInstance) []*VgpuInstance {
	st.mu.Lock()
	defer st.mu.Unlock()
	live := make(map[uint32]*VgpuInstance, len(hs))
	out := make([]*VgpuInstance, 0, len(hs))
	for _, h := range hs {
		id, ok := h.ID()
		v := st.instances[id]
		if !ok || v == nil {
			v = &VgpuInstance{device: d, id: id, hasID: ok, h: h}
		}
		if ok {
			live[id] = v
		}
		out = append(out, v)
	}
	st.instances = live
	st.util.Retain(func(id uint32) bool { return live[id] != nil })
	st.procs.Retain(func(id uint32) bool { return live[id] != nil })
	return out
}

// pollUtilization reads the instance samples the Device has not seen and
// keeps each instance's newest.
func (st *vgpuState) pollUtilization(h nvmlx.Device, now time.Time) error {
	return st.util.Poll(h, now)
}

func (st *vgpuState) utilizationOf(v *VgpuInstance, now time.Time) Value[VgpuUtilization] {
	if !v.hasID {
		return NA[VgpuUtilization](NotSupported, fmt.Errorf("%s: instance has no ID to match samples: %w", v.label(), ErrNotSupported))
	}
	u, ok := st.util.Get(v.id, now)
	if !ok {
		return NA[VgpuUtilization](NotReported, fmt.Errorf("%s: no utilization sample yet: %w", v.label(), ErrNotReported))
	}
	return Some(VgpuUtilization{
		SMUtilization: Percent(u.SM), FramebufferUtilization: Percent(u.Framebuffer),
		EncoderUtilization: Percent(u.Encoder), DecoderUtilization: Percent(u.Decoder),
		Time: u.Time,
	})
}

// pollProcesses reads the process samples the Device has not seen. A
// process's newest sample counts while it is recent
// (sampling.CurrentVgpuProcesses): the driver reports only busy processes,
// so one without a recent sample is idle (or gone).
func (st *vgpuState) pollProcesses(h nvmlx.Device, now time.Time) error {
	return st.procs.Poll(h, now)
}

// processesOf returns the kept samples of one instance, newest first, then
// by PID.
func (st *vgpuState) processesOf(instance uint32) []VgpuProcess {
	out := []VgpuProcess{}
	st.procs.Each(instance, func(s sampling.VgpuProcessUtilization) {
		out = append(out, VgpuProcess{
			Instance: s.Instance, PID: int(s.PID), Name: s.Name,
			SMUtilization: Percent(s.SM), MemoryUtilization: Percent(s.Memory),
			EncoderUtilization: Percent(s.Encoder), DecoderUtilization: Percent(s.Decoder),
			Time: s.Time,
		})
	})
	slices.SortFunc(out, func(a, b VgpuProcess) int {
		if c := b.Time.Compare(a.Time); c != 0 {
			return c
		}
		return a.PID - b.PID
	})
	return out
}
