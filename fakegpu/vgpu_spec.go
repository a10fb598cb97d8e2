//go:build cgo

package fakegpu

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// VM ID types of VgpuSpec.VMIDType: what GetVmID reports the VM ID as.
const (
	VMIDTypeUUID   = "uuid"   // nvml.VGPU_VM_ID_UUID: the VM's UUID (KVM, VMware)
	VMIDTypeDomain = "domain" // nvml.VGPU_VM_ID_DOMAIN_ID: a domain ID (Xen, Hyper-V)
)

// DefaultEncoderCapacity is the encoder capacity of a vGPU instance unless
// VgpuSpec.EncoderCapacity says otherwise: all of it, in percent.
const DefaultEncoderCapacity = 100

// maxVgpusPerGPU bounds the vGPU instances of a scenario's GPU (real
// boards host at most 32 or so).
const maxVgpusPerGPU = 64

// VgpuSpec describes one vGPU instance on a GPU in host-vGPU mode: a virtual
// GPU handed to a VM, which NVML on the host reports through an
// nvml.VgpuInstance handle. Zero fields take the defaults given; every
// derived value is deterministic, from the fleet seed, the GPU index and
// the instance's creation number on its GPU.
type VgpuSpec struct {
	// ID is the instance's nvmlVgpuInstance_t value, what nvidia-smi shows
	// as "vGPU ID" and what the utilization samples carry. It must be
	// unique in the fleet; zero means derived (non-zero, unique).
	ID uint32
	// UUID is what GetUUID (and GetMdevUUID) report: 32 hex digits grouped
	// 8-4-4-4-12, no prefix, unique in the fleet. Empty means derived,
	// lower-case.
	UUID string
	// Type is the vGPU type's name (the type handle's GetName), e.g.
	// "NVIDIA H100-20C": a name ending in "-<n><class letter>" declares a
	// framebuffer of n GiB and the class (Q Quadro, B NVS, C and any
	// other letter Compute).
	// Empty means "<GPU name short>-<n>C" with a quarter of the GPU's
	// memory, e.g. "NVIDIA H100-20C" on an 80 GB H100.
	Type string
	// TypeID is the type handle's nvmlVgpuTypeId_t value; zero means
	// derived from the name, the same for every instance of the type. One
	// type ID stands for one type name and framebuffer in the fleet.
	TypeID uint32
	// FramebufferMiB is the type's framebuffer (GetFramebufferSize). Zero
	// means n GiB, n*1024 MiB, from the type name's "-<n><letter>"
	// suffix. The framebuffers of a GPU's instances must fit in its memory.
	FramebufferMiB uint64
	// VMID is the VM's ID (GetVmID). Empty means derived: a UUID, or a
	// domain number when VMIDType is VMIDTypeDomain.
	VMID string
	// VMIDType is VMIDTypeUUID ("uuid", the default) or VMIDTypeDomain
	// ("domain").
	VMIDType string
	// VMDriverVersion is the guest driver's version (GetVmDriverVersion).
	// Empty means the fleet's driver version, following
	// Fleet.SetDriverVersion.
	VMDriverVersion string
	// FBUsedMiB is the framebuffer the guest uses (GetFbUsage), at most
	// FramebufferMiB.
	FBUsedMiB uint64
	// Licensed says whether the guest holds a vGPU licence.
	Licensed bool
	// LicenseExpiry is when the licence expires, reported in UTC; the zero
	// time means a permanent licence. It is reported only while Licensed.
	LicenseExpiry time.Time
	// FrameRateLimit is the frame rate limiter's limit in frames per
	// second (GetFrameRateLimit); zero means the limiter is off and
	// GetFrameRateLimit answers ERROR_NOT_SUPPORTED, as for compute types.
	FrameRateLimit uint32
	// EncoderCapacity is the share of the encoder the instance may use in
	// percent, 0..100 (GetEncoderCapacity); zero means
	// DefaultEncoderCapacity (use the handle's SetEncoderCapacity for 0).
	EncoderCapacity uint32
	// ECC is the instance's ECC mode (GetEccMode); nil means enabled.
	ECC *bool
	// PlacementID is the instance's placement on the GPU (GetPlacementId).
	PlacementID uint32
	// GPUInstanceID is the MIG GPU instance backing the instance
	// (GetGpuInstanceId); nil means not MIG-backed: GetGpuInstanceId then
	// answers 0xFFFFFFFF, NVML's INVALID_GPU_INSTANCE_ID.
	GPUInstanceID *uint32
	// SM, FB, Enc and Dec are the instance's utilization in percent of the
	// GPU (GetVgpuUtilization).
	SM, FB, Enc, Dec uint32
	// Processes run in the VM on the instance (GetVgpuProcessUtilization).
	Processes []VgpuProcess
	// Accounting starts the instance with per-process accounting on.
	Accounting bool
	// AccountingBufferSize is how many accounting records the instance
	// keeps; zero means DefaultAccountingBufferSize.
	AccountingBufferSize int
}

// VgpuProcess is a process running in a VM on a vGPU instance.
type VgpuProcess struct {
	// PID is the guest PID; non-zero, unique on the instance. The host
	// knows nothing else of it: SystemGetProcessName does not find it.
	PID uint32
	// Name is the process name the samples carry; empty means "python3".
	Name string
	// SM, Mem, Enc and Dec are its utilization in percent
	// (GetVgpuProcessUtilization).
	SM, Mem, Enc, Dec uint32
}

// check returns the Go field name and problem of the first invalid field.
func (p VgpuProcess) check() (field, problem string) {
	switch {
	case p.PID == 0:
		return "PID", "want a non-zero PID"
	case p.SM > 100:
		return "SM", fmt.Sprintf("want a percentage 0..100, got %d", p.SM)
	case p.Mem > 100:
		return "Mem", fmt.Sprintf("want a percentage 0..100, got %d", p.Mem)
	case p.Enc > 100:
		return "Enc", fmt.Sprintf("want a percentage 0..100, got %d", p.Enc)
	case p.Dec > 100:
		return "Dec", fmt.Sprintf("want a percentage 0..100, got %d", p.Dec)
	}
	return "", ""
}

// vgpuTypeRE matches a type name's framebuffer and class suffix.
var vgpuTypeRE = regexp.MustCompile(`-([0-9]{1,4})([A-Z])$`)

// parseVgpuType returns the framebuffer in GiB and the class letter a type
// name's "-<n><letter>" suffix declares.
func parseVgpuType(name string) (gib uint64, class byte, ok bool) {
	m := vgpuTypeRE.FindStringSubmatch(name)
	if m == nil {
		return 0, 0, false
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil || n == 0 {
		return 0, 0, false
	}
	return n, m[2][0], true
}

// defaultVgpuType is the type of an instance whose spec names none: a
// compute type with a quarter of the GPU's memory (at least 1 GiB), named
// after the GPU, e.g. "NVIDIA H100-20C".
func defaultVgpuType(gpuName string, memTotal uint64) string {
	return fmt.Sprintf("%s-%dC", shortGPUName(gpuName), max(memTotal/4/(1024*MiB), 1))
}

// shortGPUName is a product name as vGPU type names start:
// "NVIDIA H100 80GB HBM3" and "NVIDIA H100-SXM5-80GB" give "NVIDIA H100".
func shortGPUName(name string) string {
	rest, hasVendor := strings.CutPrefix(name, "NVIDIA ")
	if i := strings.IndexAny(rest, " -"); i > 0 {
		rest = rest[:i]
	}
	if rest == "" {
		rest = "GPU"
	}
	if hasVendor || !strings.HasPrefix(rest, "NVIDIA") {
		return "NVIDIA " + rest
	}
	return rest
}

// validVgpuUUID reports whether s looks like a vGPU instance's UUID: hex
// digits grouped 8-4-4-4-12 (either case), no prefix.
func validVgpuUUID(s string) bool { return validPrefixedUUID("x"+s, "x") }

// hexUUID formats the first 16 bytes of h as a lower-case 8-4-4-4-12 UUID.
func hexUUID(h [32]byte) string {
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// deriveVgpuID returns a candidate ID of the gen-th vGPU instance created
// on GPU index; attempt > 0 gives others after a collision.
func deriveVgpuID(seed string, index, gen, attempt int) uint32 {
	h := identityHash(seed, "vgpu-id/"+strconv.Itoa(gen)+"/"+strconv.Itoa(attempt), index)
	return max(binary.BigEndian.Uint32(h[:4]), 1)
}

// deriveVgpuUUID returns a candidate UUID of the gen-th vGPU instance
// created on GPU index.
func deriveVgpuUUID(seed string, index, gen, attempt int) string {
	return hexUUID(identityHash(seed, "vgpu-uuid/"+strconv.Itoa(gen)+"/"+strconv.Itoa(attempt), index))
}

// deriveVMID returns the VM ID of the gen-th vGPU instance created on GPU
// index: a UUID, or a domain number 1..4095.
func deriveVMID(seed string, index, gen int, domain bool) string {
	h := identityHash(seed, "vgpu-vm/"+strconv.Itoa(gen), index)
	if domain {
		return strconv.Itoa(1 + int(binary.BigEndian.Uint16(h[:2])%4095))
	}
	return hexUUID(h)
}

// deriveVgpuTypeID returns a candidate type ID for a type name: the same in
// every fleet; attempt > 0 gives others after a collision.
func deriveVgpuTypeID(name string, attempt int) uint32 {
	h := identityHash("", "vgpu-type/"+name, attempt)
	return max(binary.BigEndian.Uint32(h[:4]), 1)
}

// vgpuTypeKey is what one type ID stands for.
type vgpuTypeKey struct {
	name string
	fb   uint64 // MiB
}

// vgpuTaken is what vGPU instances already hold, on the GPU or in the
// fleet, that a list of new ones must not repeat; layoutVgpus adds the
// list's own.
type vgpuTaken struct {
	ids   map[uint32]string      // ID → owner, as problems name it
	uuids map[string]string      // lower-case UUID → owner
	types map[uint32]vgpuTypeKey // type ID → its type
	owner map[uint32]string      // type ID → the owner that set it
}

func newVgpuTaken() *vgpuTaken {
	return &vgpuTaken{
		ids:   make(map[uint32]string),
		uuids: make(map[string]string),
		types: make(map[uint32]vgpuTypeKey),
		owner: make(map[uint32]string),
	}
}

// vgpuIssue is a problem with one value of a list of vGPU instances,
// located by Go field names; the scenario parser maps them to its keys.
type vgpuIssue struct {
	inst    int    // index in the list
	field   string // VgpuSpec field
	proc    int    // index in Processes; -1: not about one process
	pfield  string // VgpuProcess field, when proc >= 0
	problem string
}

// describeIn formats the issue with Go field names under the instance's
// path, e.g. "GPUSpec.Vgpus[1].SM: want …" or "VgpuSpec.SM: want …".
func (is vgpuIssue) describeIn(inst string) string {
	if is.proc >= 0 {
		return fmt.Sprintf("%s.%s[%d].%s: %s", inst, is.field, is.proc, is.pfield, is.problem)
	}
	return fmt.Sprintf("%s.%s: %s", inst, is.field, is.problem)
}

// vgpuLayout says how layoutVgpus checks a list of vGPU instances.
type vgpuLayout struct {
	seed     string
	gpu      int    // index of the GPU, for derived values
	gpuName  string // for the default type
	memTotal uint64 // the GPU's memory, bytes
	gen      int    // instances created on the GPU so far: the list's first is the gen-th
	fbUsed   uint64 // MiB of framebuffer the GPU's instances already hold
	taken    *vgpuTaken
	owner    func(j int) string // how problems name the list's j-th instance
	report   func(vgpuIssue)    // nil: problems are only fixed
}

// layoutVgpus checks the vGPU instances of a GPU and returns them resolved,
// every default filled in. Each problem is reported, then fixed as New
// does: an instance whose type or framebuffer cannot be used, and a
// process that cannot run, are left out; a bad or repeated ID, UUID or
// type ID is derived instead; other bad values take their defaults or are
// clamped.
func layoutVgpus(l vgpuLayout, specs []VgpuSpec) []VgpuSpec {
	if len(specs) == 0 {
		return nil
	}
	if l.taken == nil {
		l.taken = newVgpuTaken()
	}
	owner := l.owner
	if owner == nil {
		owner = func(j int) string { return "vGPU instance " + strconv.Itoa(j) }
	}
	tk := l.taken
	explicit := make(map[uint32]bool) // IDs the list sets: derived ones avoid them
	for _, s := range specs {
		if s.ID != 0 {
			explicit[s.ID] = true
		}
	}
	memMiB := l.memTotal / MiB
	fbUsed := l.fbUsed
	var out []VgpuSpec
	for j, s := range specs {
		bad := func(field, format string, args ...any) {
			if l.report != nil {
				l.report(vgpuIssue{inst: j, field: field, proc: -1, problem: fmt.Sprintf(format, args...)})
			}
		}
		gen := l.gen + j
		r := s
		r.Processes = nil
		if other, dup := tk.ids[r.ID]; dup && r.ID != 0 {
			bad("ID", "%d is also the ID of %s", r.ID, other)
			r.ID = 0
		}
		if r.UUID != "" && !validVgpuUUID(r.UUID) {
			bad("UUID", "want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex, no prefix), got %q", r.UUID)
			r.UUID = ""
		}
		if other, dup := tk.uuids[strings.ToLower(r.UUID)]; dup && r.UUID != "" {
			bad("UUID", "%q is also the UUID of %s", r.UUID, other)
			r.UUID = ""
		}
		if r.Type == "" {
			r.Type = defaultVgpuType(l.gpuName, l.memTotal)
		}
		if r.FramebufferMiB == 0 {
			gib, _, ok := parseVgpuType(r.Type)
			if !ok {
				bad("Type", `want a type name ending in "-<GiB><class letter>" like "NVIDIA H100-20C", or a FramebufferMiB, got %q`, r.Type)
				continue
			}
			r.FramebufferMiB = gib * 1024
		}
		if r.FramebufferMiB > memMiB {
			bad("FramebufferMiB", "want at most the GPU's %d MiB, got %d", memMiB, r.FramebufferMiB)
			continue
		}
		if fbUsed+r.FramebufferMiB > memMiB {
			bad("FramebufferMiB", "the instances' framebuffers would take %d MiB, more than the GPU's %d MiB", fbUsed+r.FramebufferMiB, memMiB)
			continue
		}
		key := vgpuTypeKey{name: r.Type, fb: r.FramebufferMiB}
		if t, used := tk.types[r.TypeID]; used && r.TypeID != 0 && t != key {
			bad("TypeID", "%d is also the type ID of %q (%d MiB), set by %s", r.TypeID, t.name, t.fb, tk.owner[r.TypeID])
			r.TypeID = 0
		}
		if r.TypeID == 0 {
			for attempt := 0; ; attempt++ {
				id := deriveVgpuTypeID(r.Type, attempt)
				if t, used := tk.types[id]; !used || t == key {
					r.TypeID = id
					break
				}
			}
		}
		switch r.VMIDType {
		case "":
			r.VMIDType = VMIDTypeUUID
		case VMIDTypeUUID, VMIDTypeDomain:
		default:
			bad("VMIDType", "want %q or %q, got %q", VMIDTypeUUID, VMIDTypeDomain, r.VMIDType)
			r.VMIDType = VMIDTypeUUID
		}
		if r.VMID == "" {
			r.VMID = deriveVMID(l.seed, l.gpu, gen, r.VMIDType == VMIDTypeDomain)
		}
		if r.FBUsedMiB > r.FramebufferMiB {
			bad("FBUsedMiB", "%d MiB is more than the framebuffer, %d MiB", r.FBUsedMiB, r.FramebufferMiB)
			r.FBUsedMiB = r.FramebufferMiB
		}
		if !r.LicenseExpiry.IsZero() {
			if y := r.LicenseExpiry.UTC().Year(); y < 1 || y > 9999 {
				bad("LicenseExpiry", "want a year 1..9999, got %d", y)
				r.LicenseExpiry = time.Time{}
			}
		}
		switch {
		case r.EncoderCapacity == 0:
			r.EncoderCapacity = DefaultEncoderCapacity
		case r.EncoderCapacity > 100:
			bad("EncoderCapacity", "want a percentage 0..100, got %d", r.EncoderCapacity)
			r.EncoderCapacity = 100
		}
		for _, u := range []struct {
			field string
			v     *uint32
		}{{"SM", &r.SM}, {"FB", &r.FB}, {"Enc", &r.Enc}, {"Dec", &r.Dec}} {
			if *u.v > 100 {
				bad(u.field, "want a percentage 0..100, got %d", *u.v)
				*u.v = 100
			}
		}
		if r.AccountingBufferSize < 0 {
			bad("AccountingBufferSize", "want a positive size (or 0 for %d), got %d", DefaultAccountingBufferSize, r.AccountingBufferSize)
		}
		if r.AccountingBufferSize <= 0 {
			r.AccountingBufferSize = DefaultAccountingBufferSize
		}
		on := true
		if r.ECC != nil {
			on = *r.ECC
		}
		r.ECC = &on
		if r.GPUInstanceID != nil {
			gi := *r.GPUInstanceID
			r.GPUInstanceID = &gi
		}
		pids := make(map[uint32]bool, len(s.Processes))
		for k, p := range s.Processes {
			pbad := func(field, format string, args ...any) {
				if l.report != nil {
					l.report(vgpuIssue{inst: j, field: "Processes", proc: k, pfield: field, problem: fmt.Sprintf(format, args...)})
				}
			}
			if field, problem := p.check(); field != "" {
				pbad(field, "%s", problem)
				continue
			}
			if pids[p.PID] {
				pbad("PID", "%d is already running on this vGPU instance", p.PID)
				continue
			}
			pids[p.PID] = true
			r.Processes = append(r.Processes, p)
		}

		// Derived identities last, so they avoid every explicit one.
		for attempt := 0; r.ID == 0; attempt++ {
			id := deriveVgpuID(l.seed, l.gpu, gen, attempt)
			if _, used := tk.ids[id]; !used && !explicit[id] {
				r.ID = id
			}
		}
		for attempt := 0; r.UUID == ""; attempt++ {
			u := deriveVgpuUUID(l.seed, l.gpu, gen, attempt)
			if _, used := tk.uuids[u]; !used {
				r.UUID = u
			}
		}
		tk.ids[r.ID] = owner(j)
		tk.uuids[strings.ToLower(r.UUID)] = owner(j)
		if _, used := tk.types[r.TypeID]; !used {
			tk.types[r.TypeID], tk.owner[r.TypeID] = key, owner(j)
		}
		fbUsed += r.FramebufferMiB
		out = append(out, r)
	}
	return out
}

// cloneVgpuSpecs copies specs deeply: process lists and pointed-to values.
func cloneVgpuSpecs(specs []VgpuSpec) []VgpuSpec {
	if specs == nil {
		return nil
	}
	out := slices.Clone(specs)
	for i := range out {
		out[i].Processes = slices.Clone(out[i].Processes)
		if p := out[i].ECC; p != nil {
			v := *p
			out[i].ECC = &v
		}
		if p := out[i].GPUInstanceID; p != nil {
			v := *p
			out[i].GPUInstanceID = &v
		}
	}
	return out
}
