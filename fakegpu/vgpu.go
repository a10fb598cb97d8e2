//go:build cgo

package fakegpu

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// ErrBadVgpu is wrapped by the errors of GPU.AddVgpu.
var ErrBadVgpu = errors.New("fakegpu: bad vGPU instance")

// vgpuSample is one utilization sample of a vGPU instance.
type vgpuSample struct {
	ts               uint64 // µs on the fake clock
	sm, fb, enc, dec uint32
}

// Vgpu is the control panel of one vGPU instance on a GPU in host-vGPU
// mode. Its identity is fixed; Destroy ends it. A Vgpu is safe for
// concurrent use.
//
// Its nvml.VgpuInstance handle (Instance) answers GetUUID, GetMdevUUID,
// GetVmID, GetVmDriverVersion, GetFbUsage, GetType, GetFrameRateLimit,
// GetEccMode, GetEncoderCapacity, SetEncoderCapacity, GetGpuInstanceId,
// GetGpuPciId, GetLicenseStatus, GetLicenseInfo, GetAccountingMode,
// GetAccountingPids, GetAccountingStats and ClearAccountingPids; the rest
// answer ERROR_NOT_SUPPORTED. Beyond go-nvml v0.13.3-1's interface, the
// handle has Handle() uint32 (the instance ID, a plain Go method) and
// GetPlacementId() (nvml.VgpuPlacementId, nvml.Return), an NVML call like
// the others: discover them by type assertion.
//
// Calls count as "VgpuInstance.<method>" and need the symbol
// "nvmlVgpuInstance<method>" (GetLicenseInfo: it or its _v2). Once the
// instance is destroyed every method of its handle answers
// ERROR_NOT_FOUND, as NVML does for an instance that is no longer active;
// a lost parent GPU makes them answer ERROR_GPU_IS_LOST. The parent's
// GPU.Fail does not reach the handle: use Vgpu.Fail.
type Vgpu struct {
	g        *GPU
	h        *vgpuHandle
	typ      *vgpuType
	id       uint32
	uuid     string
	vmID     string
	vmIDType nvml.VgpuVmIdType
	frl      uint32
	ecc      bool
	placeID  uint32
	gi       int // GPU instance ID; noInstance when not MIG-backed
	pciID    string
	bufSize  int

	// Guarded by g.f.mu.
	destroyed        bool
	destroyOn        map[string]bool // methods whose next call destroys the instance
	fails            map[string]nvml.Return
	sm, fb, enc, dec uint32
	samples          []vgpuSample // newest last
	fbUsed           uint64       // bytes
	licensed         bool
	expiry           time.Time
	vmDriver         string // empty: the fleet's driver version
	encCap           uint32
	procs            []*proc // guest processes, in start order
	accounting       bool
	acct             []*acctRecord // accounting records, oldest first
}

// vgpuInstanceMethods are the methods Vgpu.Fail and DestroyOnCall take:
// those of nvml.VgpuInstance and GetPlacementId.
var vgpuInstanceMethods = func() map[string]bool {
	m := methodSet(reflect.TypeOf(mock.VgpuInstance{}))
	m["GetPlacementId"] = true
	return m
}()

// VgpuHost reports whether the GPU is in host-vGPU virtualization mode.
func (g *GPU) VgpuHost() bool {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	return g.vgpuHost
}

// SetVgpuHost puts the GPU in host-vGPU virtualization mode or takes it out
// of it (GPUSpec.VgpuHost sets it at start). Only a host GPU takes vGPU
// instances (AddVgpu); taking a GPU out of host mode destroys its
// instances, as unloading the vGPU manager would.
func (g *GPU) SetVgpuHost(on bool) {
	g.update(func() {
		g.vgpuHost = on
		if !on {
			for _, v := range slices.Clone(g.vgpus) {
				g.destroyVgpuLocked(v)
			}
		}
	})
}

// Vgpus returns the GPU's live vGPU instances in creation order, nil if
// there are none.
func (g *GPU) Vgpus() []*Vgpu {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	if len(g.vgpus) == 0 {
		return nil
	}
	return slices.Clone(g.vgpus)
}

// Vgpu returns the GPU's live vGPU instance with this ID, or nil.
func (g *GPU) Vgpu(id uint32) *Vgpu {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	for _, v := range g.vgpus {
		if v.id == id {
			return v
		}
	}
	return nil
}

// AddVgpu creates a vGPU instance on the GPU, as starting a VM with a vGPU
// does: its handle is new, GetActiveVgpus lists it last, and it takes a
// utilization sample at Now(). Zero fields of s take the defaults
// VgpuSpec gives; an ID or UUID left empty is derived from the GPU's
// count of instances created so far. It fails, wrapping ErrBadVgpu, on a
// GPU that is not a vGPU host (see SetVgpuHost), for an ID, UUID or type
// ID already used in the fleet, a type without a framebuffer, a
// framebuffer that does not fit beside the other instances', or any other
// bad value (see VgpuSpec).
func (g *GPU) AddVgpu(s VgpuSpec) (*Vgpu, error) {
	f := g.f
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: GPU %d: "+format, append([]any{ErrBadVgpu, g.index}, args...)...)
	}
	if !g.vgpuHost {
		return nil, fail("not in host-vGPU mode (GPUSpec.VgpuHost, GPU.SetVgpuHost)")
	}
	taken := f.vgpuTakenLocked()
	var fbUsed uint64
	for _, v := range g.vgpus {
		fbUsed += v.typ.fb / MiB
	}
	var first *vgpuIssue
	out := layoutVgpus(vgpuLayout{
		seed:     f.seed,
		gpu:      g.index,
		gpuName:  g.spec.Name,
		memTotal: g.spec.MemoryTotal,
		gen:      g.vgpuGen,
		fbUsed:   fbUsed,
		taken:    taken,
		owner:    func(int) string { return "the new instance" },
		report: func(is vgpuIssue) {
			if first == nil {
				first = &is
			}
		},
	}, []VgpuSpec{s})
	if first != nil {
		return nil, fail("%s", first.describeIn("VgpuSpec"))
	}
	return g.addVgpuLocked(out[0]), nil
}

// vgpuTakenLocked is what the fleet's live vGPU instances and its types
// hold.
func (f *Fleet) vgpuTakenLocked() *vgpuTaken {
	tk := newVgpuTaken()
	for _, og := range f.gpus {
		for _, v := range og.vgpus {
			who := fmt.Sprintf("GPU %d vGPU instance %d", og.index, v.id)
			tk.ids[v.id] = who
			tk.uuids[strings.ToLower(v.uuid)] = who
		}
	}
	for id, t := range f.vgpuTypes {
		tk.types[id] = vgpuTypeKey{name: t.name, fb: t.fb / MiB}
		tk.owner[id] = fmt.Sprintf("vGPU type %d", id)
	}
	return tk
}

// addVgpuLocked creates the vGPU instance of a resolved, valid spec.
func (g *GPU) addVgpuLocked(s VgpuSpec) *Vgpu {
	f := g.f
	gen := g.vgpuGen
	g.vgpuGen++
	typ := f.vgpuTypes[s.TypeID]
	if typ == nil {
		typ = f.newVgpuType(s.TypeID, s.Type, s.FramebufferMiB*MiB)
		f.vgpuTypes[s.TypeID] = typ
	}
	v := &Vgpu{
		g:         g,
		typ:       typ,
		id:        s.ID,
		uuid:      s.UUID,
		vmID:      s.VMID,
		vmIDType:  nvml.VGPU_VM_ID_UUID,
		frl:       s.FrameRateLimit,
		ecc:       s.ECC == nil || *s.ECC,
		placeID:   s.PlacementID,
		gi:        noInstance,
		pciID:     fmt.Sprintf("00000000:00:%02X.0", 0x08+gen%0x18),
		bufSize:   s.AccountingBufferSize,
		destroyOn: make(map[string]bool),
		fails:     make(map[string]nvml.Return),
		sm:        pct(s.SM),
		fb:        pct(s.FB),
		enc:       pct(s.Enc),
		dec:       pct(s.Dec),
		fbUsed:    min(s.FBUsedMiB, s.FramebufferMiB) * MiB,
		licensed:  s.Licensed,
		expiry:    s.LicenseExpiry,
		vmDriver:  s.VMDriverVersion,
		encCap:    min(s.EncoderCapacity, 100),
	}
	if s.VMIDType == VMIDTypeDomain {
		v.vmIDType = nvml.VGPU_VM_ID_DOMAIN_ID
	}
	if s.GPUInstanceID != nil {
		v.gi = int(*s.GPUInstanceID)
	}
	if v.bufSize <= 0 {
		v.bufSize = DefaultAccountingBufferSize
	}
	v.h = &vgpuHandle{v: v}
	v.h.wire()
	g.vgpus = append(g.vgpus, v)
	v.recordUtilLocked()
	v.accounting = s.Accounting
	for _, p := range s.Processes {
		_ = v.startLocked(p) // checked by layoutVgpus
	}
	return v
}

// destroyVgpuLocked ends a vGPU instance: its processes and records go with
// it.
func (g *GPU) destroyVgpuLocked(v *Vgpu) {
	if v.destroyed {
		return
	}
	v.destroyed = true
	g.vgpus = slices.DeleteFunc(g.vgpus, func(x *Vgpu) bool { return x == v })
	for _, p := range v.procs {
		p.acct = nil
	}
	v.procs, v.acct, v.samples = nil, nil, nil
}

// vgpuFramebufferLocked is the framebuffer the GPU's vGPU instances hold,
// in bytes.
func (g *GPU) vgpuFramebufferLocked() uint64 {
	var sum uint64
	for _, v := range g.vgpus {
		sum = addSat(sum, v.typ.fb)
	}
	return sum
}

// advanceLocked samples the instance and its busy processes at the new
// time and integrates their accounting records.
func (v *Vgpu) advanceLocked(ts uint64) {
	v.recordUtilLocked()
	for _, p := range v.procs {
		if p.busy() {
			p.sampleAt(ts)
		}
		v.observeLocked(p)
	}
}

// recordUtilLocked appends the current utilization to the sample buffer,
// replacing a sample with the same timestamp.
func (v *Vgpu) recordUtilLocked() {
	s := vgpuSample{ts: v.g.f.nowMicrosLocked(), sm: v.sm, fb: v.fb, enc: v.enc, dec: v.dec}
	if n := len(v.samples); n > 0 && v.samples[n-1].ts == s.ts {
		v.samples[n-1] = s
		return
	}
	v.samples = append(v.samples, s)
	if len(v.samples) > maxUtilSamples {
		v.samples = v.samples[len(v.samples)-maxUtilSamples:]
	}
}

// ID returns the instance's ID, its nvmlVgpuInstance_t value.
func (v *Vgpu) ID() uint32 { return v.id }

// UUID returns the instance's UUID, e.g. "5f3c1a2b-…", no prefix.
func (v *Vgpu) UUID() string { return v.uuid }

// Type returns the name of the instance's vGPU type, e.g.
// "NVIDIA H100-20C".
func (v *Vgpu) Type() string { return v.typ.name }

// TypeID returns the ID of the instance's vGPU type.
func (v *Vgpu) TypeID() uint32 { return v.typ.id }

// Parent returns the GPU the instance runs on.
func (v *Vgpu) Parent() *GPU { return v.g }

// Instance returns the instance's nvml.VgpuInstance handle: the one
// GetActiveVgpus lists, the same value every time.
func (v *Vgpu) Instance() nvml.VgpuInstance { return v.h }

// Destroyed reports whether Destroy (or DestroyOnCall, or taking the GPU
// out of host mode) has ended the instance.
func (v *Vgpu) Destroyed() bool {
	v.g.f.mu.Lock()
	defer v.g.f.mu.Unlock()
	return v.destroyed
}

// update runs fn with the fleet locked, unless the instance is destroyed.
func (v *Vgpu) update(fn func()) {
	v.g.update(func() {
		if !v.destroyed {
			fn()
		}
	})
}

// SetUtilization sets the instance's SM, framebuffer, encoder and decoder
// utilization in percent of the GPU and takes a sample at Now(), replacing
// one taken at the same time. A sample is visible to
// GetVgpuUtilization(lastSeen) only if it is newer than lastSeen.
func (v *Vgpu) SetUtilization(sm, fb, enc, dec uint32) {
	v.update(func() {
		v.sm, v.fb, v.enc, v.dec = pct(sm), pct(fb), pct(enc), pct(dec)
		v.recordUtilLocked()
	})
}

// SetFBUsed sets the framebuffer the guest uses in bytes (GetFbUsage),
// capped at the type's framebuffer.
func (v *Vgpu) SetFBUsed(bytes uint64) {
	v.update(func() { v.fbUsed = min(bytes, v.typ.fb) })
}

// SetLicense sets whether the guest holds a licence and when it expires
// (the zero time: never), as GetLicenseStatus and GetLicenseInfo report.
func (v *Vgpu) SetLicense(licensed bool, expiry time.Time) {
	v.update(func() { v.licensed, v.expiry = licensed, expiry })
}

// SetVMDriverVersion sets the guest driver's version (GetVmDriverVersion);
// empty means the fleet's driver version.
func (v *Vgpu) SetVMDriverVersion(version string) {
	v.update(func() { v.vmDriver = version })
}

// StartProcess starts p in the VM on the instance. If it has non-zero
// utilization, a sample is taken at Now(); with accounting on it gets a
// record. It fails, wrapping ErrBadProcess, for a zero PID, a PID already
// running on the instance, a percentage above 100, and once the instance
// is destroyed.
func (v *Vgpu) StartProcess(p VgpuProcess) error {
	v.g.f.mu.Lock()
	defer v.g.f.mu.Unlock()
	if v.destroyed {
		return fmt.Errorf("%w: GPU %d vGPU instance %d: destroyed", ErrBadProcess, v.g.index, v.id)
	}
	return v.startLocked(p)
}

func (v *Vgpu) startLocked(p VgpuProcess) error {
	where := fmt.Sprintf("GPU %d vGPU instance %d", v.g.index, v.id)
	if field, problem := p.check(); field != "" {
		return fmt.Errorf("%w: %s: VgpuProcess.%s: %s", ErrBadProcess, where, field, problem)
	}
	if v.procLocked(p.PID) != nil {
		return fmt.Errorf("%w: %s: VgpuProcess.PID: %d is already running on this vGPU instance", ErrBadProcess, where, p.PID)
	}
	np := &proc{Process: Process{
		PID: p.PID, Name: p.Name, Type: Compute, UsedMemory: NotAvailable,
		GPUInstanceID: noInstance, ComputeInstanceID: noInstance,
		SM: p.SM, Mem: p.Mem, Enc: p.Enc, Dec: p.Dec,
	}}
	if np.busy() {
		np.sampleAt(v.g.f.nowMicrosLocked())
	}
	v.procs = append(v.procs, np)
	v.accountLocked(np)
	return nil
}

// StopProcess ends the guest process with this PID; its samples go with
// it, its accounting record stays, ended. It does nothing if there is no
// such process.
func (v *Vgpu) StopProcess(pid uint32) {
	v.update(func() {
		v.procs = slices.DeleteFunc(v.procs, func(p *proc) bool {
			if p.PID != pid {
				return false
			}
			v.endAccountingLocked(p)
			return true
		})
	})
}

// SetProcessUtilization sets a guest process's utilization in percent and
// takes a sample at Now(). It does nothing if there is no such process.
func (v *Vgpu) SetProcessUtilization(pid, sm, mem, enc, dec uint32) {
	v.update(func() {
		p := v.procLocked(pid)
		if p == nil {
			return
		}
		p.SM, p.Mem, p.Enc, p.Dec = pct(sm), pct(mem), pct(enc), pct(dec)
		p.sampleAt(v.g.f.nowMicrosLocked())
		v.observeLocked(p)
	})
}

// Processes returns the guest processes running on the instance, in start
// order.
func (v *Vgpu) Processes() []VgpuProcess {
	v.g.f.mu.Lock()
	defer v.g.f.mu.Unlock()
	out := make([]VgpuProcess, len(v.procs))
	for i, p := range v.procs {
		out[i] = VgpuProcess{PID: p.PID, Name: p.Name, SM: p.SM, Mem: p.Mem, Enc: p.Enc, Dec: p.Dec}
	}
	return out
}

func (v *Vgpu) procLocked(pid uint32) *proc {
	for _, p := range v.procs {
		if p.PID == pid {
			return p
		}
	}
	return nil
}

// Fail makes a method of the instance's handle (an nvml.VgpuInstance
// method name such as "GetFbUsage", or "GetPlacementId") return ret, after
// the Init and symbol checks. nvml.SUCCESS is the same as ClearFail. An
// unknown name is recorded as a violation.
func (v *Vgpu) Fail(method string, ret nvml.Return) {
	v.g.update(func() {
		m, ok := v.methodLocked("Fail", method)
		switch {
		case !ok:
		case ret == nvml.SUCCESS:
			delete(v.fails, m)
		default:
			v.fails[m] = ret
		}
	})
}

// ClearFail undoes Fail.
func (v *Vgpu) ClearFail(method string) {
	v.g.update(func() {
		if m, ok := v.methodLocked("ClearFail", method); ok {
			delete(v.fails, m)
		}
	})
}

// Destroy ends the instance, as shutting its VM down does: GetActiveVgpus
// no longer lists it, the utilization calls no longer sample it, and every
// method of its handle, handles already given out included, answers
// ERROR_NOT_FOUND. Its processes and accounting records go with it. It
// does nothing the second time.
func (v *Vgpu) Destroy() {
	v.g.update(func() { v.g.destroyVgpuLocked(v) })
}

// DestroyOnCall arms the instance to be destroyed by the next call of a
// method of its handle (a name as for Fail): that call already answers
// ERROR_NOT_FOUND. A test uses it to end an instance between a caller's
// GetActiveVgpus and its per-instance reads, deterministically. Calls that
// Init or symbol checks refuse do not count.
func (v *Vgpu) DestroyOnCall(method string) {
	v.g.update(func() {
		if m, ok := v.methodLocked("DestroyOnCall", method); ok && !v.destroyed {
			v.destroyOn[m] = true
		}
	})
}

// methodLocked resolves a handle method name (with or without the
// "VgpuInstance." prefix), recording an unknown one as a violation.
func (v *Vgpu) methodLocked(op, name string) (string, bool) {
	m := strings.TrimPrefix(name, "VgpuInstance.")
	if !vgpuInstanceMethods[m] {
		v.g.f.violateLocked(fmt.Sprintf("fakegpu: GPU(%d).Vgpu(%d).%s: no nvml.VgpuInstance method named %q", v.g.index, v.id, op, name))
		return "", false
	}
	return m, true
}

// destroyOnCallLocked destroys the instance if a call of method was armed
// to (DestroyOnCall).
func (v *Vgpu) destroyOnCallLocked(method string) {
	if v.destroyOn[method] {
		v.g.destroyVgpuLocked(v)
	}
}

// faultLocked applies the instance's faults to a call of method on its
// handle: destruction, the parent's loss and injected errors.
func (v *Vgpu) faultLocked(method string) nvml.Return {
	switch {
	case v.destroyed:
		return nvml.ERROR_NOT_FOUND
	case v.g.lost:
		return nvml.ERROR_GPU_IS_LOST
	}
	if r, ok := v.fails[method]; ok {
		return r
	}
	return nvml.SUCCESS
}
