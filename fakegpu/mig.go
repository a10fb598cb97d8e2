//go:build cgo

package fakegpu

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// ErrBadMIG is wrapped by the errors of GPU.AddMIGDevice.
var ErrBadMIG = errors.New("fakegpu: bad MIG device")

// MIGSpec describes one MIG device of a GPU: a compute instance of a GPU
// instance, which NVML reports as a device handle of its own.
type MIGSpec struct {
	// UUID is what the MIG device's GetUUID reports: "MIG-" and 32 hex
	// digits grouped 8-4-4-4-12. Empty means derived from the fleet seed,
	// the GPU index and the slot, lower-case. It must be unique on the GPU;
	// scenarios and GPU.AddMIGDevice also reject one repeated on another
	// GPU (DeviceGetHandleByUUID would find only the first).
	UUID string
	// GI and CI are the GPU instance and compute instance IDs
	// (GetGpuInstanceId, GetComputeInstanceId), each 0..65535; no two MIG
	// devices of a GPU have the same pair.
	GI, CI int
	// Profile is the MIG profile, "<g>g.<size>gb" (e.g. "1g.10gb"), or
	// "<c>c.<g>g.<size>gb" for a compute instance smaller than its GPU
	// instance (e.g. "1c.3g.40gb"): g is 1..7 GPU slices, c 1..g compute
	// slices, size 1..1000 GB.
	Profile string
	// MemoryTotalMiB is the device's memory in MiB (GetMemoryInfo's
	// Total). Zero means 1000 MiB per GB of the profile's size. Devices of
	// one GPU instance share its memory: the memory of the GPU instances,
	// each counted once, must fit in the GPU's.
	MemoryTotalMiB uint64
	// Index is the MIG device index, the slot 0..6 that
	// GetMigDeviceHandleByIndex answers for. In a list whose every Index is
	// zero, the devices take slots 0, 1, 2, … in list order; otherwise each
	// takes its Index, so a list can leave slots free.
	Index int
	// Processes run on the device. They must be compute processes ("C")
	// with PIDs unique on the GPU; their GPUInstanceID and
	// ComputeInstanceID are set to GI and CI.
	Processes []Process
}

// maxInstanceID bounds GPU and compute instance IDs (real ones are below
// 15).
const maxInstanceID = 0xFFFF

// maxProfileGB bounds the size part of a MIG profile.
const maxProfileGB = 1000

// migProfile is a parsed MIG profile.
type migProfile struct {
	ci, gi int // compute and GPU slices
	gb     int // size in GB
}

var profileRE = regexp.MustCompile(`^(?:([0-9]+)c\.)?([0-9]+)g\.([0-9]+)gb$`)

// parseProfile parses "1g.10gb" or "1c.3g.40gb".
func parseProfile(s string) (migProfile, bool) {
	m := profileRE.FindStringSubmatch(s)
	if m == nil {
		return migProfile{}, false
	}
	gi, err1 := strconv.Atoi(m[2])
	gb, err2 := strconv.Atoi(m[3])
	ci := gi
	var err3 error
	if m[1] != "" {
		ci, err3 = strconv.Atoi(m[1])
	}
	if err1 != nil || err2 != nil || err3 != nil ||
		gi < 1 || gi > maxMigDevices || ci < 1 || ci > gi || gb < 1 || gb > maxProfileGB {
		return migProfile{}, false
	}
	return migProfile{ci: ci, gi: gi, gb: gb}, true
}

// migIssue is a problem with one value of a MIG layout, located by Go
// field names; the scenario parser maps them to its keys.
type migIssue struct {
	dev     int    // index in the list; -1: MIG devices on a GPU without MIG
	field   string // MIGSpec field
	proc    int    // index in Processes; -1: not about one process
	pfield  string // Process field, when proc >= 0
	problem string
}

// describe formats the issue with Go field names under list, e.g.
// "GPUSpec.MIGDevices[1].Profile: want …". noMIG is the problem of MIG
// devices on a GPU without MIG.
func (is migIssue) describe(list, noMIG string) string {
	if is.dev < 0 {
		return list + ": " + noMIG
	}
	return is.describeIn(fmt.Sprintf("%s[%d]", list, is.dev))
}

// describeIn formats the issue with Go field names under the device's own
// path, e.g. "MIGSpec.Profile: want …".
func (is migIssue) describeIn(dev string) string {
	if is.proc >= 0 {
		return fmt.Sprintf("%s.%s[%d].%s: %s", dev, is.field, is.proc, is.pfield, is.problem)
	}
	return fmt.Sprintf("%s.%s: %s", dev, is.field, is.problem)
}

// migLayout says how layoutMIGs checks a list of MIG devices.
type migLayout struct {
	seed       string // of derived UUIDs
	gpu        int    // index of the GPU, for derived UUIDs
	enabled    bool   // MIG is enabled on the GPU
	memTotal   uint64 // the GPU's memory, bytes
	positional bool   // slots are list positions, not Index
	// taken are the MIG devices already on the GPU, resolved and without
	// processes: the list must not repeat their slots, instance IDs and
	// UUIDs, and its GPU instances' memory must fit beside theirs.
	taken   []MIGSpec
	pids    map[uint32]bool       // PIDs already running on the GPU
	report  func(migIssue)        // nil: problems are only fixed
	derived func(slot int) string // nil: deriveMIGUUID(seed, gpu, slot, 0)
}

// positionalMIGs reports whether the devices of a list take slots by
// position: every Index is zero.
func positionalMIGs(specs []MIGSpec) bool {
	for _, s := range specs {
		if s.Index != 0 {
			return false
		}
	}
	return true
}

// migTypeProblem is the problem of a process of type t on a MIG device.
func migTypeProblem(t string) string {
	return fmt.Sprintf(`want "C": MIG devices run only compute processes, got %q`, t)
}

// layoutMIGs checks the MIG devices of a GPU and returns them resolved:
// slots in Index, memory sizes, UUIDs and process instance IDs filled in.
// Each problem is reported, then fixed as New does: a device or process
// that cannot be used is left out, a bad or repeated UUID is derived
// instead.
func layoutMIGs(l migLayout, specs []MIGSpec) []MIGSpec {
	report := func(is migIssue) {
		if l.report != nil {
			l.report(is)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	if !l.enabled {
		report(migIssue{dev: -1, proc: -1})
		return nil
	}
	slotOf := make(map[int]int)    // slot → list index
	pairOf := make(map[[2]int]int) // GI, CI → list index
	uuidOf := make(map[string]int) // lower-case UUID → list index
	giMem := make(map[int]bool)    // GPU instances counted in memUsed
	pids := make(map[uint32]bool)  // PIDs on the GPU
	var memUsed uint64             // MiB
	for pid := range l.pids {
		pids[pid] = true
	}
	for _, t := range l.taken {
		slotOf[t.Index], pairOf[[2]int{t.GI, t.CI}], uuidOf[strings.ToLower(t.UUID)] = -1, -1, -1
		if !giMem[t.GI] {
			giMem[t.GI] = true
			memUsed += t.MemoryTotalMiB
		}
	}
	other := func(k int) string {
		if k < 0 {
			return "an existing MIG device"
		}
		return "MIG device " + strconv.Itoa(k)
	}
	var out []MIGSpec
	for j, s := range specs {
		bad := func(field, format string, args ...any) {
			report(migIssue{dev: j, field: field, proc: -1, problem: fmt.Sprintf(format, args...)})
		}
		slot := s.Index
		if l.positional {
			slot = j
		}
		if slot < 0 || slot >= maxMigDevices {
			bad("Index", "want a MIG device index 0..%d, got %d", maxMigDevices-1, slot)
			continue
		}
		if k, dup := slotOf[slot]; dup {
			bad("Index", "%d is also the index of %s", slot, other(k))
			continue
		}
		prof, ok := parseProfile(s.Profile)
		if !ok {
			bad("Profile", `want a profile like "1g.10gb" or "1c.3g.40gb" (at most %d GPU slices), got %q`, maxMigDevices, s.Profile)
			continue
		}
		if s.GI < 0 || s.GI > maxInstanceID {
			bad("GI", "want 0..%d, got %d", maxInstanceID, s.GI)
			continue
		}
		if s.CI < 0 || s.CI > maxInstanceID {
			bad("CI", "want 0..%d, got %d", maxInstanceID, s.CI)
			continue
		}
		if k, dup := pairOf[[2]int{s.GI, s.CI}]; dup {
			bad("CI", "GPU instance %d, compute instance %d is also that of %s", s.GI, s.CI, other(k))
			continue
		}
		mem := s.MemoryTotalMiB
		if mem == 0 {
			mem = uint64(prof.gb) * 1000
		}
		if mem > maxMiB {
			bad("MemoryTotalMiB", "want at most %d MiB, got %d", maxMiB, mem)
			continue
		}
		if !giMem[s.GI] && memUsed+mem > l.memTotal/MiB {
			bad("MemoryTotalMiB", "the GPU instances would have %d MiB, more than the GPU's %d MiB", memUsed+mem, l.memTotal/MiB)
			continue
		}

		r := s
		r.Index, r.MemoryTotalMiB, r.Processes = slot, mem, nil
		if r.UUID != "" && !validMIGUUID(r.UUID) {
			bad("UUID", "want MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex), got %q", r.UUID)
			r.UUID = ""
		}
		if k, dup := uuidOf[strings.ToLower(r.UUID)]; dup && r.UUID != "" {
			bad("UUID", "%q is also the UUID of %s", r.UUID, other(k))
			r.UUID = ""
		}
		if r.UUID == "" {
			if l.derived != nil {
				r.UUID = l.derived(slot)
			} else {
				r.UUID = deriveMIGUUID(l.seed, l.gpu, slot, 0)
			}
		}
		var used uint64
		for k, p := range s.Processes {
			pbad := func(field, format string, args ...any) {
				report(migIssue{dev: j, field: "Processes", proc: k, pfield: field, problem: fmt.Sprintf(format, args...)})
			}
			if field, problem := p.check(); field != "" {
				pbad(field, "%s", problem)
				continue
			}
			if p.Type != "" && p.Type != Compute {
				pbad("Type", "%s", migTypeProblem(p.Type))
				continue
			}
			if pids[p.PID] {
				pbad("PID", "%d is already running on this GPU", p.PID)
				continue
			}
			pids[p.PID] = true
			p.GPUInstanceID, p.ComputeInstanceID = uint32(s.GI), uint32(s.CI)
			if p.UsedMemory != NotAvailable {
				used = addSat(used, p.UsedMemory)
			}
			r.Processes = append(r.Processes, p)
		}
		if used > mem*MiB {
			report(migIssue{dev: j, field: "Processes", proc: -1,
				problem: fmt.Sprintf("the processes use %d MiB, more than the device's %d MiB", used/MiB, mem)})
		}
		slotOf[slot], pairOf[[2]int{s.GI, s.CI}], uuidOf[strings.ToLower(r.UUID)] = j, j, j
		if !giMem[s.GI] {
			giMem[s.GI] = true
			memUsed += mem
		}
		out = append(out, r)
	}
	return out
}

// cloneMIGSpecs copies specs and their process lists.
func cloneMIGSpecs(specs []MIGSpec) []MIGSpec {
	if specs == nil {
		return nil
	}
	out := slices.Clone(specs)
	for i := range out {
		out[i].Processes = slices.Clone(out[i].Processes)
	}
	return out
}

// MIG is the control panel of one MIG device of a GPU. Its identity is
// fixed; GPU.RemoveMIGDevice ends it. A MIG is safe for concurrent use.
//
// Its nvml.Device handle answers as a MIG device handle does:
// IsMigDeviceHandle true; GetDeviceHandleFromMigDeviceHandle the parent's
// handle; GetGpuInstanceId and GetComputeInstanceId; GetUUID; GetName as
// "<GPU name> MIG <profile>"; GetMemoryInfo and GetMemoryInfo_v2 (no
// reserved memory); GetBAR1MemoryInfo (the GPU's BAR1 in proportion to the
// memory); GetAttributes; GetComputeRunningProcesses (its own processes);
// empty GetGraphicsRunningProcesses and GetMPSComputeRunningProcesses; and
// the parent's GetPciInfo, GetBrand, GetArchitecture and
// GetCudaComputeCapability. Everything else, GetIndex, GetMinorNumber,
// GetSerial and the MIG-mode functions included, answers
// ERROR_NOT_SUPPORTED, as do the utilization, clock, power, temperature,
// ECC and field-value queries on real MIG devices.
//
// The parent's GPU.Lose makes the handle answer ERROR_GPU_IS_LOST; the
// parent's GPU.Fail and GPU.Unsupported do not reach it (use MIG.Fail).
// Once the device is removed, its handle answers ERROR_INVALID_ARGUMENT.
// Calls are counted under the same names as the GPUs' ("Device.GetUUID").
type MIG struct {
	g        *GPU
	dev      *device
	slot     int
	uuid     string
	gi, ci   int
	profile  string
	prof     migProfile
	memTotal uint64 // bytes

	// Guarded by g.f.mu.
	removed    bool
	memUsed    uint64
	memUsedSet bool
	fails      map[string]nvml.Return
}

// MIGDevices returns the GPU's MIG devices in slot order.
func (g *GPU) MIGDevices() []*MIG {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	var out []*MIG
	for _, m := range g.migs {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// MIGDevice returns the MIG device in slot (its MIG device index), or nil
// if the slot is free.
func (g *GPU) MIGDevice(slot int) *MIG {
	if slot < 0 || slot >= maxMigDevices {
		return nil
	}
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	return g.migs[slot]
}

// AddMIGDevice creates a MIG device, as creating a GPU instance and a
// compute instance does: its handle is new, and GetMigDeviceHandleByIndex
// answers it for slot s.Index. A negative s.Index takes the lowest free
// slot; an empty s.UUID is derived (differently each time a slot is
// reused). It fails, wrapping ErrBadMIG, with MIG disabled, for a taken
// slot, GPU/compute instance pair or UUID (fleet-wide), a bad profile,
// memory beyond the GPU's, or a bad process (see MIGSpec).
func (g *GPU) AddMIGDevice(s MIGSpec) (*MIG, error) {
	f := g.f
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: GPU %d: "+format, append([]any{ErrBadMIG, g.index}, args...)...)
	}
	if g.migCur != nvml.DEVICE_MIG_ENABLE {
		return nil, fail("MIG is disabled")
	}
	var taken []MIGSpec
	for _, m := range g.migs {
		if m != nil {
			taken = append(taken, MIGSpec{UUID: m.uuid, GI: m.gi, CI: m.ci, MemoryTotalMiB: m.memTotal / MiB, Index: m.slot})
		}
	}
	if s.Index < 0 {
		s.Index = slices.IndexFunc(g.migs[:], func(m *MIG) bool { return m == nil })
		if s.Index < 0 {
			return nil, fail("MIGSpec.Index: no free MIG device index")
		}
	}
	pids := make(map[uint32]bool, len(g.procs))
	for _, p := range g.procs {
		pids[p.PID] = true
	}
	var first *migIssue
	out := layoutMIGs(migLayout{
		enabled:  true,
		memTotal: g.spec.MemoryTotal,
		taken:    taken,
		pids:     pids,
		report: func(is migIssue) {
			if first == nil {
				first = &is
			}
		},
		derived: func(slot int) string { return deriveMIGUUID(f.seed, g.index, slot, g.migGen[slot]) },
	}, []MIGSpec{s})
	if first != nil {
		return nil, fail("%s", first.describeIn("MIGSpec"))
	}
	r := out[0]
	for _, og := range f.gpus {
		for _, m := range og.migs {
			if m != nil && strings.EqualFold(m.uuid, r.UUID) {
				return nil, fail("MIGSpec.UUID: %q is also the UUID of GPU %d MIG device %d", r.UUID, og.index, m.slot)
			}
		}
	}
	return g.addMIGLocked(r), nil
}

// RemoveMIGDevice removes the MIG device in slot, as destroying its compute
// and GPU instance does: its processes end, the slot answers
// ERROR_NOT_FOUND, and its handle ERROR_INVALID_ARGUMENT from every method.
// It does nothing if the slot is free.
func (g *GPU) RemoveMIGDevice(slot int) {
	if slot < 0 || slot >= maxMigDevices {
		return
	}
	g.update(func() {
		if m := g.migs[slot]; m != nil {
			g.removeMIGLocked(m)
		}
	})
}

// addMIGLocked creates the MIG device of a resolved, valid spec.
func (g *GPU) addMIGLocked(s MIGSpec) *MIG {
	prof, _ := parseProfile(s.Profile)
	m := &MIG{
		g:        g,
		slot:     s.Index,
		uuid:     s.UUID,
		gi:       s.GI,
		ci:       s.CI,
		profile:  s.Profile,
		prof:     prof,
		memTotal: s.MemoryTotalMiB * MiB,
		fails:    make(map[string]nvml.Return),
	}
	m.dev = &device{g: g, m: m}
	m.wire()
	g.migs[s.Index] = m
	g.migGen[s.Index]++
	for _, p := range s.Processes {
		_ = g.startLocked(p, m) // checked by layoutMIGs
	}
	return m
}

func (g *GPU) removeMIGLocked(m *MIG) {
	m.removed = true
	g.migs[m.slot] = nil
	g.procs = slices.DeleteFunc(g.procs, func(p *proc) bool { return p.mig == m })
}

// UUID returns the MIG device's UUID, e.g. "MIG-1c2e…".
func (m *MIG) UUID() string { return m.uuid }

// GI returns the GPU instance ID.
func (m *MIG) GI() int { return m.gi }

// CI returns the compute instance ID.
func (m *MIG) CI() int { return m.ci }

// Profile returns the MIG profile, e.g. "1g.10gb".
func (m *MIG) Profile() string { return m.profile }

// Slot returns the MIG device index GetMigDeviceHandleByIndex answers it
// for.
func (m *MIG) Slot() int { return m.slot }

// MemoryTotal returns the device's memory in bytes.
func (m *MIG) MemoryTotal() uint64 { return m.memTotal }

// Parent returns the GPU the device is part of.
func (m *MIG) Parent() *GPU { return m.g }

// Device returns the MIG device's nvml.Device handle: the one
// GetMigDeviceHandleByIndex and DeviceGetHandleByUUID return, the same
// value every time.
func (m *MIG) Device() nvml.Device { return m.dev }

func (m *MIG) update(fn func()) {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	fn()
}

// SetMemoryUsed sets the device's used memory in bytes, capped at its
// total. Until it is called, used memory is the sum of its processes'
// memory. The parent GPU's used memory includes it.
func (m *MIG) SetMemoryUsed(bytes uint64) {
	m.update(func() { m.memUsed, m.memUsedSet = bytes, true })
}

// usedLocked is the device's used memory in bytes.
func (m *MIG) usedLocked() uint64 {
	if m.memUsedSet {
		return min(m.memUsed, m.memTotal)
	}
	var sum uint64
	for _, p := range m.g.procs {
		if p.mig == m {
			sum = addSat(sum, procMemory(p))
		}
	}
	return min(sum, m.memTotal)
}

// StartProcess starts p on the MIG device; its GPUInstanceID and
// ComputeInstanceID become the device's. It fails, wrapping ErrBadProcess,
// as GPU.StartProcess does, for a type other than Compute, and once the
// device is removed.
func (m *MIG) StartProcess(p Process) error {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	if m.removed {
		return fmt.Errorf("%w: GPU %d MIG device %d: removed", ErrBadProcess, m.g.index, m.slot)
	}
	return m.g.startLocked(p, m)
}

// StopProcess ends the process with this PID on the MIG device. It does
// nothing if there is no such process.
func (m *MIG) StopProcess(pid uint32) {
	m.update(func() {
		m.g.procs = slices.DeleteFunc(m.g.procs, func(p *proc) bool { return p.mig == m && p.PID == pid })
	})
}

// Processes returns the processes running on the MIG device, in start
// order.
func (m *MIG) Processes() []Process {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	var out []Process
	for _, p := range m.g.procs {
		if p.mig == m {
			out = append(out, p.Process)
		}
	}
	return out
}

// Fail makes the methods behind name (a metric or nvml.Device method name,
// as for GPU.Fail) return ret on the MIG device's handle. nvml.SUCCESS is
// the same as ClearFail.
func (m *MIG) Fail(name string, ret nvml.Return) {
	m.update(func() {
		for _, meth := range m.methodsLocked("Fail", name) {
			if ret == nvml.SUCCESS {
				delete(m.fails, meth)
			} else {
				m.fails[meth] = ret
			}
		}
	})
}

// ClearFail undoes Fail.
func (m *MIG) ClearFail(name string) {
	m.update(func() {
		for _, meth := range m.methodsLocked("ClearFail", name) {
			delete(m.fails, meth)
		}
	})
}

func (m *MIG) methodsLocked(op, name string) []string {
	ms, ok := resolveDeviceMethods(name)
	if !ok {
		m.g.f.violateLocked(fmt.Sprintf("fakegpu: GPU(%d).MIGDevice(%d).%s: no nvml.Device method or metric named %q", m.g.index, m.slot, op, name))
	}
	return ms
}

// wire sets the methods a MIG device handle implements, then lets the
// fleet stub the rest and route all of them through its interceptor.
func (m *MIG) wire() {
	d, parent := m.dev, m.g.dev
	d.GetNameFunc = func() (string, nvml.Return) { return m.g.spec.Name + " MIG " + m.profile, nvml.SUCCESS }
	d.GetUUIDFunc = func() (string, nvml.Return) { return m.uuid, nvml.SUCCESS }
	d.GetPciInfoFunc = parent.getPciInfo
	d.GetBrandFunc = parent.getBrand
	d.GetArchitectureFunc = parent.getArchitecture
	d.GetCudaComputeCapabilityFunc = parent.getCudaComputeCapability
	d.GetMemoryInfoFunc = m.getMemoryInfo
	d.GetMemoryInfo_v2Func = m.getMemoryInfoV2
	d.GetBAR1MemoryInfoFunc = m.getBAR1MemoryInfo
	d.GetAttributesFunc = m.getAttributes
	d.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return true, nvml.SUCCESS }
	d.GetDeviceHandleFromMigDeviceHandleFunc = func() (nvml.Device, nvml.Return) { return parent, nvml.SUCCESS }
	d.GetGpuInstanceIdFunc = func() (int, nvml.Return) { return m.gi, nvml.SUCCESS }
	d.GetComputeInstanceIdFunc = func() (int, nvml.Return) { return m.ci, nvml.SUCCESS }
	d.GetComputeRunningProcessesFunc = m.getComputeRunningProcesses
	d.GetGraphicsRunningProcessesFunc = noProcesses
	d.GetMPSComputeRunningProcessesFunc = noProcesses
	m.g.f.wireDevice(d)
}

func noProcesses() ([]nvml.ProcessInfo, nvml.Return) { return []nvml.ProcessInfo{}, nvml.SUCCESS }

func (m *MIG) getMemoryInfo() (nvml.Memory, nvml.Return) {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	used := m.usedLocked()
	return nvml.Memory{Total: m.memTotal, Used: used, Free: m.memTotal - used}, nvml.SUCCESS
}

func (m *MIG) getMemoryInfoV2() (nvml.Memory_v2, nvml.Return) {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	v := nvml.Memory_v2{Total: m.memTotal, Used: m.usedLocked()}
	v.Version = nvml.STRUCT_VERSION(v, 2)
	v.Free = v.Total - v.Used
	return v, nvml.SUCCESS
}

// getBAR1MemoryInfo reports the GPU's BAR1 in proportion to the device's
// share of the memory, 2 MiB of it in use.
func (m *MIG) getBAR1MemoryInfo() (nvml.BAR1Memory, nvml.Return) {
	total := mulDiv(m.g.spec.BAR1Total, m.memTotal, m.g.spec.MemoryTotal) / MiB * MiB
	used := min(2*MiB, total)
	return nvml.BAR1Memory{Bar1Total: total, Bar1Used: used, Bar1Free: total - used}, nvml.SUCCESS
}

// smsPerSlice is the number of SMs of one compute slice, by model.
var smsPerSlice = map[string]uint32{"a100": 14, "h100": 16, "h200": 16, "b200": 18}

// getAttributes reports the slices, SMs (compute slices × SMs per slice),
// memory and, roughly as on real boards, the media engines of the device.
func (m *MIG) getAttributes() (nvml.DeviceAttributes, nvml.Return) {
	gi, ci := uint32(m.prof.gi), uint32(m.prof.ci)
	sms, ok := smsPerSlice[m.g.spec.Model]
	if !ok {
		sms = 16
	}
	a := nvml.DeviceAttributes{
		MultiprocessorCount:       ci * sms,
		SharedCopyEngineCount:     gi,
		SharedDecoderCount:        gi,
		SharedJpegCount:           gi,
		GpuInstanceSliceCount:     gi,
		ComputeInstanceSliceCount: ci,
		MemorySizeMB:              m.memTotal / MiB,
	}
	if m.g.spec.Model == "a100" {
		// GA100: 5 NVDECs and 1 NVJPG for 7 slices.
		a.SharedDecoderCount = gi * 5 / 7
		a.SharedJpegCount = 0
	}
	if gi == maxMigDevices {
		a.SharedOfaCount = 1
		if m.g.spec.Model == "a100" {
			a.SharedJpegCount = 1
		}
	}
	return a, nvml.SUCCESS
}

func (m *MIG) getComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	out := []nvml.ProcessInfo{}
	for _, p := range m.g.procs {
		if p.mig == m {
			out = append(out, nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: p.UsedMemory, GpuInstanceId: uint32(m.gi), ComputeInstanceId: uint32(m.ci)})
		}
	}
	return out, nvml.SUCCESS
}
