//go:build cgo

package fakegpu

import (
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// Defaults of a new fleet.
const (
	// DefaultDriverVersion is the driver version a new fleet reports.
	DefaultDriverVersion = "580.95.05"
	// DefaultCUDADriverVersion is the CUDA driver version a new fleet
	// reports, encoded as NVML does (1000*major + 10*minor).
	DefaultCUDADriverVersion = 13000
)

// epoch is the fake clock's start: fixed, so sample timestamps are the same
// on every run.
var epoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// maxViolations bounds the violations a fleet keeps; later ones are counted.
const maxViolations = 1000

// Fleet is a fake set of NVIDIA GPUs behind an nvml.Interface. Pass it
// wherever an nvml.Interface is expected; steer it with its own methods and
// those of its GPUs.
//
// Fleet embeds go-nvml's moq mocks only to satisfy nvml.Interface and
// nvml.ExtendedInterface: do not assign their …Func fields, which New has
// already wired through the fleet's call counting and fault injection.
//
// A Fleet and its GPUs are safe for concurrent use.
type Fleet struct {
	mock.Interface
	mock.ExtendedInterface

	mu          sync.Mutex
	seed        string // of derived identities; fixed after New
	gpus        []*GPU
	driver      string
	nvmlVersion string // empty: derived from cuda and driver
	cuda        int
	missing     map[string]bool
	failInit    nvml.Return
	fails       map[string]nvml.Return // library-level methods
	refcount    int
	initFailed  bool // the last Init failed and none is held
	shutDown    bool // a final Shutdown happened
	calls       map[string]int
	total       int
	violations  []string
	dropped     int // violations beyond maxViolations
	now         time.Time
	vgpuTypes   map[uint32]*vgpuType // vGPU type handles by type ID
	sites       sites                // the wired library-level methods
}

// Compile-time checks.
var (
	_ nvml.Interface         = (*Fleet)(nil)
	_ nvml.ExtendedInterface = (*Fleet)(nil)
)

// New returns a fleet with one GPU per spec, in NVML index order, driver
// DefaultDriverVersion and CUDA DefaultCUDADriverVersion. Identity fields
// left empty in a spec are derived deterministically from the index, so two
// calls with the same specs give GPUs with the same UUIDs. New never fails:
// a spec value it cannot use (see GPUSpec.Validate) is replaced by its
// default. Every GPU starts idle, with no processes.
func New(gpus ...GPUSpec) *Fleet {
	return build(defaultSeed, gpus)
}

// build returns a fleet whose derived identities come from seed.
func build(seed string, specs []GPUSpec) *Fleet {
	f := &Fleet{
		seed:      seed,
		driver:    DefaultDriverVersion,
		cuda:      DefaultCUDADriverVersion,
		missing:   make(map[string]bool),
		failInit:  nvml.SUCCESS,
		fails:     make(map[string]nvml.Return),
		calls:     make(map[string]int),
		now:       epoch,
		vgpuTypes: make(map[uint32]*vgpuType),
	}
	// One set of vGPU identities for the whole fleet: IDs, UUIDs and
	// type IDs are unique across GPUs.
	vgpus := &vgpuCheck{taken: newVgpuTaken()}
	for i, s := range specs {
		f.gpus = append(f.gpus, newGPU(f, i, s.resolveIn(seed, i, vgpus)))
	}
	f.VgpuTypeGetMaxInstancesFunc = func(dev nvml.Device, t nvml.VgpuTypeId) (int, nvml.Return) {
		return vgpuTypeGetMaxInstances(f, dev, t)
	}
	f.wireLibrary()
	for _, g := range f.gpus {
		g.dev.wire()
	}
	return f
}

// Count returns the number of GPUs, lost ones included.
func (f *Fleet) Count() int {
	return len(f.gpus) // fixed after New
}

// GPU returns the GPU with NVML index i, or nil if there is none.
func (f *Fleet) GPU(i int) *GPU {
	if i < 0 || i >= len(f.gpus) {
		return nil
	}
	return f.gpus[i]
}

// SetDriverVersion sets what SystemGetDriverVersion reports, e.g.
// "535.104.05". Unless SetNVMLVersion was called, the NVML version follows.
func (f *Fleet) SetDriverVersion(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.driver = v
}

// SetCUDADriverVersion sets what SystemGetCudaDriverVersion reports,
// encoded as 1000*major + 10*minor (12020 is CUDA 12.2).
func (f *Fleet) SetCUDADriverVersion(v int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cuda = v
}

// SetNVMLVersion sets what SystemGetNVMLVersion reports. By default it is
// the CUDA major version and the driver version, e.g. "13.580.95.05"; an
// empty v restores that.
func (f *Fleet) SetNVMLVersion(v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nvmlVersion = v
}

// MissingSymbols declares NVML symbols (e.g. "nvmlDeviceGetMemoryInfo_v2")
// absent from the fake driver, as on an old driver: LookupSymbol fails for
// them, and calling a function behind one records a violation (a real
// process would die) and returns ERROR_FUNCTION_NOT_FOUND.
func (f *Fleet) MissingSymbols(names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, n := range names {
		f.missing[n] = true
	}
}

// FailInit makes Init and InitWithFlags return ret, e.g.
// ERROR_LIBRARY_NOT_FOUND (no driver installed), ERROR_DRIVER_NOT_LOADED or
// ERROR_LIB_RM_VERSION_MISMATCH (driver upgraded without reboot).
// nvml.SUCCESS makes Init succeed again.
func (f *Fleet) FailInit(ret nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failInit = ret
}

// Fail makes a library-level method (an nvml.Interface method name such as
// "SystemGetProcessName") return ret, after the Init and symbol checks.
// Use GPU.Fail for nvml.Device methods. An unknown name is recorded as a
// violation.
func (f *Fleet) Fail(method string, ret nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !interfaceMethods[method] {
		f.violateLocked(fmt.Sprintf("fakegpu: Fleet.Fail: no nvml.Interface method named %q", method))
		return
	}
	if ret == nvml.SUCCESS {
		delete(f.fails, method)
		return
	}
	f.fails[method] = ret
}

// ClearFail undoes Fail for a library-level method.
func (f *Fleet) ClearFail(method string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.fails, method)
}

// Calls returns how often each function was called, by name: library-level
// methods by their nvml.Interface name ("DeviceGetCount"), device methods
// with a "Device." prefix ("Device.GetMemoryInfo_v2"), summed over GPUs,
// vGPU instance methods with "VgpuInstance." ("VgpuInstance.GetFbUsage")
// and vGPU type methods with "VgpuTypeId." ("VgpuTypeId.GetName").
// Calls that were refused (violations, injected errors) count too.
func (f *Fleet) Calls() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.calls)
}

// CallCount returns how often the named function was called (see Calls).
func (f *Fleet) CallCount(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

// TotalCalls returns the number of calls to all functions.
func (f *Fleet) TotalCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.total
}

// ResetCalls sets all call counts to zero.
func (f *Fleet) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.calls)
	f.total = 0
}

// Violations returns, oldest first, the calls that would have killed or
// misled a real process: any NVML call but Init, InitWithFlags, Extensions,
// LookupSymbol and ErrorString before a successful Init, after a failed
// Init or after the last Shutdown, and calls to functions whose symbols
// were declared missing. Misuse of the control API (an unknown method name)
// is recorded here too. A test of correct code expects none.
func (f *Fleet) Violations() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := append([]string(nil), f.violations...)
	if f.dropped > 0 {
		v = append(v, fmt.Sprintf("… and %d more violations", f.dropped))
	}
	return v
}

// violateLocked records a violation; f.mu must be held.
func (f *Fleet) violateLocked(msg string) {
	if len(f.violations) >= maxViolations {
		f.dropped++
		return
	}
	f.violations = append(f.violations, msg)
}

// Now returns the fake clock's time. It starts at 2025-01-01T00:00:00Z and
// moves only with Advance.
func (f *Fleet) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake clock forward by d (a negative d is ignored). Each
// GPU and each vGPU instance takes a utilization sample at the new time, as
// does each running process (guest processes on vGPU instances included)
// with non-zero utilization; accounting records integrate up to it; the
// energy counters grow by power × d and the PCIe byte counters by
// throughput × d.
func (f *Fleet) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	for _, g := range f.gpus {
		g.advanceLocked(d)
	}
}

// nowMicrosLocked is the fake clock in NVML's unit for timestamps: µs since
// the Unix epoch.
func (f *Fleet) nowMicrosLocked() uint64 {
	return uint64(f.now.UnixMicro())
}
