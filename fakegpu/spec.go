//go:build cgo

package fakegpu

import (
	"fmt"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
)

// MiB is one mebibyte in bytes; memory sizes in this package are bytes.
const MiB = 1 << 20

// Clocks are clock frequencies in MHz, one per nvml.ClockType.
type Clocks struct {
	Graphics, SM, Memory, Video uint32
}

// GPUSpec describes the fixed identity of one fake GPU: what a real board
// reports the same way for its whole life, and the MIG layout it starts
// with. Zero fields take the defaults of Model; UUID, BusID and Serial are
// derived from the fleet seed and the GPU index when empty. Live state
// (utilization, processes, MIG reconfiguration, …) is set on the GPU after
// New.
type GPUSpec struct {
	// Model picks the defaults: "a100", "h100", "h200" or "b200" (the SXM
	// boards of go-nvml's mock/gpus presets). Empty means "h100".
	Model string
	// Name is what GetName reports, e.g. "NVIDIA H100 80GB HBM3".
	Name string
	// UUID is what GetUUID reports: "GPU-" and 32 hex digits as 8-4-4-4-12.
	UUID string
	// BusID is the PCI bus ID in any form NVML accepts ("0000:18:00.0",
	// "00000000:18:00.0", "18:00.0"); it is reported as "00000000:18:00.0".
	BusID string
	// Serial is the board serial number (13 digits on real boards).
	Serial string
	// MemoryTotal is the framebuffer size in bytes.
	MemoryTotal uint64
	// MemoryReserved is the memory the driver keeps for itself, in bytes;
	// zero means 0.5% of MemoryTotal, as R510+ drivers report.
	MemoryReserved uint64
	// BAR1Total is the BAR1 aperture in bytes.
	BAR1Total uint64
	// Architecture is what GetArchitecture reports.
	Architecture nvml.DeviceArchitecture
	// CCMajor and CCMinor are the CUDA compute capability.
	CCMajor, CCMinor int
	// PCIDeviceID is the combined PCI device and vendor ID, e.g. 0x233010DE.
	PCIDeviceID uint32
	// PowerLimit is the default power limit in milliwatts.
	PowerLimit uint32
	// IdlePower is the power draw in milliwatts of the idle board.
	IdlePower uint32
	// MaxClocks are the maximum clocks in MHz.
	MaxClocks Clocks
	// NVLinks is the number of NVLink links. Use GPU.SetNVLink(0, 0, 0) for
	// a board without NVLink.
	NVLinks int
	// HasFan gives the board a fan. The SXM models have none, so their
	// fan queries answer NOT_SUPPORTED, as on real boards.
	HasFan bool
	// MIGEnabled starts the GPU with MIG mode enabled, current and pending
	// (GPU.SetMIGMode changes it later).
	MIGEnabled bool
	// MIGDevices are the MIG devices the GPU starts with; they need
	// MIGEnabled. GPU.AddMIGDevice and GPU.RemoveMIGDevice change them
	// later; GPU.Spec keeps reporting the starting layout, resolved.
	MIGDevices []MIGSpec
	// Accounting starts the GPU with per-process accounting on
	// (GPU.SetAccountingMode changes it later).
	Accounting bool
	// AccountingBufferSize is how many accounting records the GPU keeps
	// (GetAccountingBufferSize); zero means DefaultAccountingBufferSize.
	AccountingBufferSize int
	// VgpuHost starts the GPU in host-vGPU virtualization mode
	// (GetVirtualizationMode GPU_VIRTUALIZATION_MODE_HOST_VGPU), the mode
	// in which it hosts vGPU instances; GPU.SetVgpuHost changes it later.
	VgpuHost bool
	// Vgpus are the vGPU instances the GPU starts with, in creation order;
	// a non-empty list implies VgpuHost. GPU.AddVgpu and Vgpu.Destroy
	// change them later; GPU.Spec keeps reporting the starting ones,
	// resolved.
	Vgpus []VgpuSpec
}

// model is a named set of GPUSpec defaults.
type model struct {
	cfg       gpus.Config
	bar1      uint64
	limit     uint32 // mW
	idle      uint32 // mW
	maxClocks Clocks
	nvlinks   int
}

// models are the known boards. Names, memory, architecture, compute
// capability and PCI device IDs come from go-nvml's mock/gpus presets; the
// rest are the public datasheet values of the SXM boards.
var models = map[string]model{
	"a100": {cfg: gpus.A100_SXM4_80GB, bar1: 128 * 1024 * MiB, limit: 400_000, idle: 58_000,
		maxClocks: Clocks{Graphics: 1410, SM: 1410, Memory: 1593, Video: 1290}, nvlinks: 12},
	"h100": {cfg: gpus.H100_SXM5_80GB, bar1: 128 * 1024 * MiB, limit: 700_000, idle: 71_000,
		maxClocks: Clocks{Graphics: 1980, SM: 1980, Memory: 2619, Video: 1545}, nvlinks: 18},
	"h200": {cfg: gpus.H200_SXM5_141GB, bar1: 256 * 1024 * MiB, limit: 700_000, idle: 76_000,
		maxClocks: Clocks{Graphics: 1980, SM: 1980, Memory: 3201, Video: 1545}, nvlinks: 18},
	"b200": {cfg: gpus.B200_SXM5_180GB, bar1: 256 * 1024 * MiB, limit: 1_000_000, idle: 140_000,
		maxClocks: Clocks{Graphics: 1965, SM: 1965, Memory: 3996, Video: 1965}, nvlinks: 18},
}

// defaultModel is the model of a GPUSpec whose Model is empty.
const defaultModel = "h100"

// ModelNames returns the names GPUSpec.Model accepts, sorted.
func ModelNames() []string {
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ModelSpec returns the GPUSpec of a known model with every default filled
// in except the per-GPU identity (UUID, BusID, Serial).
func ModelSpec(name string) (GPUSpec, error) {
	if name == "" {
		name = defaultModel
	}
	m, ok := models[name]
	if !ok {
		return GPUSpec{}, fmt.Errorf("fakegpu: unknown model %q (want one of %v)", name, ModelNames())
	}
	total := m.cfg.MemoryMB * MiB
	return GPUSpec{
		Model:          name,
		Name:           m.cfg.Name,
		MemoryTotal:    total,
		MemoryReserved: defaultReserved(total),
		BAR1Total:      m.bar1,
		Architecture:   m.cfg.Architecture,
		CCMajor:        m.cfg.CudaMajor,
		CCMinor:        m.cfg.CudaMinor,
		PCIDeviceID:    m.cfg.PciDeviceId,
		PowerLimit:     m.limit,
		IdlePower:      m.idle,
		MaxClocks:      m.maxClocks,
		NVLinks:        m.nvlinks,

		AccountingBufferSize: DefaultAccountingBufferSize,
	}, nil
}

// defaultReserved is the driver-reserved memory of a board with total bytes:
// 0.5%, rounded down to whole MiB.
func defaultReserved(total uint64) uint64 {
	return total / 200 / MiB * MiB
}

// Validate reports the first field of s that New could not use as given
// (New then falls back to a default for it).
func (s GPUSpec) Validate() error {
	if s.Model != "" {
		if _, ok := models[s.Model]; !ok {
			return fmt.Errorf("fakegpu: GPUSpec.Model: unknown model %q (want one of %v)", s.Model, ModelNames())
		}
	}
	if s.UUID != "" && !validUUID(s.UUID) {
		return fmt.Errorf("fakegpu: GPUSpec.UUID: want GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got %q", s.UUID)
	}
	if s.BusID != "" {
		if _, err := parseBusID(s.BusID); err != nil {
			return fmt.Errorf("fakegpu: GPUSpec.BusID: %v", err)
		}
	}
	if s.MemoryTotal != 0 && s.MemoryReserved >= s.MemoryTotal {
		return fmt.Errorf("fakegpu: GPUSpec.MemoryReserved: %d bytes is not less than MemoryTotal %d", s.MemoryReserved, s.MemoryTotal)
	}
	if s.NVLinks < 0 || s.NVLinks > nvml.NVLINK_MAX_LINKS {
		return fmt.Errorf("fakegpu: GPUSpec.NVLinks: want 0..%d, got %d", nvml.NVLINK_MAX_LINKS, s.NVLinks)
	}
	if is := s.firstMIGIssue(); is != nil {
		return fmt.Errorf("fakegpu: %s", is.describe("GPUSpec.MIGDevices", "MIG devices need MIGEnabled"))
	}
	if s.AccountingBufferSize < 0 {
		return fmt.Errorf("fakegpu: GPUSpec.AccountingBufferSize: want a positive size (or 0 for %d), got %d", DefaultAccountingBufferSize, s.AccountingBufferSize)
	}
	if is := s.firstVgpuIssue(); is != nil {
		return fmt.Errorf("fakegpu: %s", is.describeIn(fmt.Sprintf("GPUSpec.Vgpus[%d]", is.inst)))
	}
	return nil
}

// memoryTotal is the framebuffer size New gives the GPU.
func (s GPUSpec) memoryTotal() uint64 {
	if s.MemoryTotal != 0 {
		return s.MemoryTotal
	}
	base, err := ModelSpec(s.Model)
	if err != nil {
		base, _ = ModelSpec(defaultModel)
	}
	return base.MemoryTotal
}

// firstVgpuIssue returns the first problem with the vGPU instances, or
// nil.
func (s GPUSpec) firstVgpuIssue() *vgpuIssue {
	var first *vgpuIssue
	s.resolveIn(defaultSeed, 0, &vgpuCheck{
		owner: func(j int) string { return fmt.Sprintf("GPUSpec.Vgpus[%d]", j) },
		report: func(is vgpuIssue) {
			if first == nil {
				first = &is
			}
		},
	})
	return first
}

// firstMIGIssue returns the first problem with the MIG layout, or nil.
func (s GPUSpec) firstMIGIssue() *migIssue {
	var first *migIssue
	layoutMIGs(migLayout{
		enabled:    s.MIGEnabled,
		memTotal:   s.memoryTotal(),
		positional: positionalMIGs(s.MIGDevices),
		report: func(is migIssue) {
			if first == nil {
				first = &is
			}
		},
	}, s.MIGDevices)
	return first
}

// resolve fills the zero fields of s from its model and the derived identity
// of GPU index in a fleet with the given seed. Values New cannot use are
// replaced by defaults, so resolve never fails.
func (s GPUSpec) resolve(seed string, index int) GPUSpec {
	return s.resolveIn(seed, index, nil)
}

// vgpuCheck says how resolveIn checks a GPU's vGPU instances.
type vgpuCheck struct {
	taken  *vgpuTaken         // held by the fleet's other GPUs; the GPU's are added
	owner  func(j int) string // how problems name the j-th instance
	report func(vgpuIssue)    // hears of each problem before it is fixed
}

// resolveIn is resolve with its vGPU instances checked by vc; nil means
// alone on the GPU, silently.
func (s GPUSpec) resolveIn(seed string, index int, vc *vgpuCheck) GPUSpec {
	base, err := ModelSpec(s.Model)
	if err != nil {
		base, _ = ModelSpec(defaultModel)
	}
	r := s
	r.Model = base.Model
	if r.Name == "" {
		r.Name = base.Name
	}
	if r.MemoryTotal == 0 {
		r.MemoryTotal = base.MemoryTotal
		if r.MemoryReserved == 0 {
			r.MemoryReserved = base.MemoryReserved
		}
	}
	if r.MemoryReserved == 0 || r.MemoryReserved >= r.MemoryTotal {
		r.MemoryReserved = defaultReserved(r.MemoryTotal)
	}
	if r.BAR1Total == 0 {
		r.BAR1Total = base.BAR1Total
	}
	if r.Architecture == 0 {
		r.Architecture = base.Architecture
	}
	if r.CCMajor == 0 && r.CCMinor == 0 {
		r.CCMajor, r.CCMinor = base.CCMajor, base.CCMinor
	}
	if r.PCIDeviceID == 0 {
		r.PCIDeviceID = base.PCIDeviceID
	}
	if r.PowerLimit == 0 {
		r.PowerLimit = base.PowerLimit
	}
	if r.IdlePower == 0 {
		r.IdlePower = base.IdlePower
	}
	if r.MaxClocks == (Clocks{}) {
		r.MaxClocks = base.MaxClocks
	}
	if r.NVLinks <= 0 || r.NVLinks > nvml.NVLINK_MAX_LINKS {
		r.NVLinks = base.NVLinks
	}
	if r.AccountingBufferSize <= 0 {
		r.AccountingBufferSize = base.AccountingBufferSize
	}
	if r.UUID == "" || !validUUID(r.UUID) {
		r.UUID = deriveUUID(seed, index)
	}
	if bus, err := parseBusID(r.BusID); err == nil {
		r.BusID = bus.String()
	} else {
		r.BusID = deriveBusID(index).String()
	}
	if r.Serial == "" {
		r.Serial = deriveSerial(seed, index)
	}
	r.MIGDevices = layoutMIGs(migLayout{
		seed:       seed,
		gpu:        index,
		enabled:    r.MIGEnabled,
		memTotal:   r.MemoryTotal,
		positional: positionalMIGs(s.MIGDevices),
	}, s.MIGDevices)
	r.VgpuHost = s.VgpuHost || len(s.Vgpus) > 0
	if vc == nil {
		vc = &vgpuCheck{}
	}
	r.Vgpus = layoutVgpus(vgpuLayout{
		seed:     seed,
		gpu:      index,
		gpuName:  r.Name,
		memTotal: r.MemoryTotal,
		taken:    vc.taken,
		owner:    vc.owner,
		report:   vc.report,
	}, s.Vgpus)
	return r
}
