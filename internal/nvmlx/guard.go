//go:build cgo

package nvmlx

import (
	"encoding/binary"
	"math"
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/internal/nverr"
)

// versioned lists symbols that go-nvml binds to the newest of several
// versions at load time; the function exists if any version does.
var versioned = map[string][]string{
	"nvmlDeviceGetComputeRunningProcesses":    {"nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses_v3"},
	"nvmlDeviceGetGraphicsRunningProcesses":   {"nvmlDeviceGetGraphicsRunningProcesses", "nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses_v3"},
	"nvmlDeviceGetMPSComputeRunningProcesses": {"nvmlDeviceGetMPSComputeRunningProcesses", "nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses_v3"},
	"nvmlDeviceGetCount":                      {"nvmlDeviceGetCount", "nvmlDeviceGetCount_v2"},
	"nvmlDeviceGetHandleByIndex":              {"nvmlDeviceGetHandleByIndex", "nvmlDeviceGetHandleByIndex_v2"},
	"nvmlDeviceGetHandleByPciBusId":           {"nvmlDeviceGetHandleByPciBusId", "nvmlDeviceGetHandleByPciBusId_v2"},
	"nvmlDeviceGetPciInfo":                    {"nvmlDeviceGetPciInfo", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo_v3"},
	"nvmlDeviceGetAttributes":                 {"nvmlDeviceGetAttributes", "nvmlDeviceGetAttributes_v2"},
	"nvmlVgpuInstanceGetLicenseInfo":          {"nvmlVgpuInstanceGetLicenseInfo_v2", "nvmlVgpuInstanceGetLicenseInfo"},
}

type backend struct {
	lib nvml.Interface

	// mu is held for reading by every NVML call and for writing by Init and
	// Shutdown, so no call can run while the library is being unloaded.
	mu      sync.RWMutex
	refs    int
	initErr error             // sticky: once Init failed, NVML is never called again
	live    bool              // Init succeeded and the last Shutdown has not run
	syms    *[numSymbols]bool // which symbols the driver exports; nil before the first Init
	nums    map[Number]bool   // which functions of Device.Number the driver exports
}

var (
	registryMu sync.Mutex
	registry   = map[nvml.Interface]*backend{}
	defaultLib nvml.Interface
)

// Open returns the Backend over lib. Opening the same (comparable) lib twice
// gives the same Backend, so Init and Shutdown are refcounted across users.
func Open(lib nvml.Interface) Backend {
	if lib == nil {
		return &backend{initErr: nverr.New("nvmlInit", nverr.LibraryNotFound)}
	}
	if !reflect.TypeOf(lib).Comparable() {
		return &backend{lib: lib}
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if b, ok := registry[lib]; ok {
		return b
	}
	b := &backend{lib: lib}
	registry[lib] = b
	return b
}

// Default returns the Backend over the system's libnvidia-ml.so.1.
func Default() (Backend, error) {
	registryMu.Lock()
	if defaultLib == nil {
		defaultLib = nvml.New()
	}
	lib := defaultLib
	registryMu.Unlock()
	return Open(lib), nil
}

func (b *backend) Acquire() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.initErr != nil {
		return b.initErr
	}
	if b.refs == 0 {
		if ret := b.lib.Init(); ret != nvml.SUCCESS {
			// After a failed Init any NVML call, even Shutdown, can kill the
			// process: remember the failure and never call NVML again.
			b.initErr = nverr.New("nvmlInit", nverr.Code(ret))
			return b.initErr
		}
		if b.syms == nil {
			b.syms, b.nums = probe(b.lib.Extensions())
		}
		b.live = true
	}
	b.refs++
	return nil
}

func probe(ext nvml.ExtendedInterface) (*[numSymbols]bool, map[Number]bool) {
	var has [numSymbols]bool
	nums := make(map[Number]bool, len(numbers))
	if ext == nil {
		return &has, nums
	}
	for n := range numbers {
		nums[n] = ext.LookupSymbol(string(n)) == nil
	}
	for s, name := range symbolNames {
		names := versioned[name]
		if names == nil {
			names = []string{name}
		}
		for _, n := range names {
			if ext.LookupSymbol(n) == nil {
				has[s] = true
				break
			}
		}
	}
	return &has, nums
}

func (b *backend) Release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.refs == 0 {
		return
	}
	b.refs--
	if b.refs == 0 && b.live {
		b.live = false
		b.lib.Shutdown()
	}
}

func (b *backend) HasSymbol(name string) bool {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if !b.live {
		return false
	}
	for s, n := range symbolNames {
		if n == name {
			return b.syms[s]
		}
	}
	return false
}

// call runs f, which makes exactly one NVML call of symbol sym, only when the
// library is live and the driver exports sym.
func (b *backend) call(sym symbol, f func() nvml.Return) error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if err := b.usable(symbolNames[sym], b.syms != nil && b.syms[sym]); err != nil {
		return err
	}
	if r := f(); r != nvml.SUCCESS {
		return nverr.New(symbolNames[sym], nverr.Code(r))
	}
	return nil
}

// usable returns why the function name, which the driver exports or not,
// cannot be called now; b.mu is held.
func (b *backend) usable(name string, exported bool) error {
	switch {
	case !b.live && b.initErr != nil:
		return b.initErr
	case !b.live:
		return nverr.New(name, nverr.Uninitialized)
	case !exported:
		return nverr.Missing(name)
	}
	return nil
}

func (b *backend) DriverVersion() (s string, err error) {
	err = b.call(symSystemGetDriverVersion, func() (r nvml.Return) { s, r = b.lib.SystemGetDriverVersion(); return })
	return s, err
}

func (b *backend) NVMLVersion() (s string, err error) {
	err = b.call(symSystemGetNVMLVersion, func() (r nvml.Return) { s, r = b.lib.SystemGetNVMLVersion(); return })
	return s, err
}

func (b *backend) CUDADriverVersion() (v int, err error) {
	err = b.call(symSystemGetCudaDriverVersion, func() (r nvml.Return) { v, r = b.lib.SystemGetCudaDriverVersion(); return })
	return v, err
}

func (b *backend) DeviceCount() (n int, err error) {
	err = b.call(symDeviceGetCount, func() (r nvml.Return) { n, r = b.lib.DeviceGetCount(); return })
	return n, err
}

func (b *backend) DeviceByIndex(i int) (Device, error) {
	var h nvml.Device
	err := b.call(symDeviceGetHandleByIndex, func() (r nvml.Return) { h, r = b.lib.DeviceGetHandleByIndex(i); return })
	return b.wrap(h, err)
}

func (b *backend) DeviceByUUID(uuid string) (Device, error) {
	var h nvml.Device
	err := b.call(symDeviceGetHandleByUUID, func() (r nvml.Return) { h, r = b.lib.DeviceGetHandleByUUID(uuid); return })
	return b.wrap(h, err)
}

func (b *backend) DeviceByBusID(busID string) (Device, error) {
	var h nvml.Device
	err := b.call(symDeviceGetHandleByPciBusId, func() (r nvml.Return) { h, r = b.lib.DeviceGetHandleByPciBusId(busID); return })
	return b.wrap(h, err)
}

func (b *backend) wrap(h nvml.Device, err error) (Device, error) {
	if err != nil {
		return nil, err
	}
	if h == nil {
		return nil, nverr.New("nvmlDeviceGetHandle", nverr.NotFound)
	}
	return &device{b: b, h: h, raw: rawHandle(h)}, nil
}

type device struct {
	b *backend
	h nvml.Device
	// raw is the C handle of a real library's device (nil for a fake):
	// list and sample calls then go straight to the library (raw.go).
	raw unsafe.Pointer
	// The capacities the next list calls start with.
	computeHint, graphicsHint, mpsHint, procUtilHint listHint
	sampleCap                                        [3]atomic.Uint32 // by SampleKind
	// memoryV1 is set once the v2 memory call proved unusable on this driver.
	memoryV1 atomic.Bool
}

func cstr(b []int8) string {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	out := make([]byte, n)
	for i := 0; i < n; i++ {
		out[i] = byte(b[i])
	}
	return string(out)
}

func (d *device) Name() (s string, err error) {
	err = d.b.call(symDeviceGetName, func() (r nvml.Return) { s, r = d.h.GetName(); return })
	return s, err
}

func (d *device) UUID() (s string, err error) {
	err = d.b.call(symDeviceGetUUID, func() (r nvml.Return) { s, r = d.h.GetUUID(); return })
	return s, err
}

func (d *device) BusID() (s string, err error) {
	err = d.b.call(symDeviceGetPciInfo, func() nvml.Return {
		pi, r := d.h.GetPciInfo()
		s = cstr(pi.BusId[:])
		return r
	})
	return s, err
}

func (d *device) Serial() (s string, err error) {
	err = d.b.call(symDeviceGetSerial, func() (r nvml.Return) { s, r = d.h.GetSerial(); return })
	return s, err
}

func (d *device) Minor() (n int, err error) {
	err = d.b.call(symDeviceGetMinorNumber, func() (r nvml.Return) { n, r = d.h.GetMinorNumber(); return })
	return n, err
}

func (d *device) Index() (n int, err error) {
	err = d.b.call(symDeviceGetIndex, func() (r nvml.Return) { n, r = d.h.GetIndex(); return })
	return n, err
}

func (d *device) CUDAComputeCapability() (major, minor int, err error) {
	err = d.b.call(symDeviceGetCudaComputeCapability, func() (r nvml.Return) { major, minor, r = d.h.GetCudaComputeCapability(); return })
	return major, minor, err
}

func (d *device) Memory() (Memory, error) {
	if !d.memoryV1.Load() {
		var m nvml.Memory_v2
		err := d.b.call(symDeviceGetMemoryInfo_v2, func() (r nvml.Return) { m, r = d.h.GetMemoryInfo_v2(); return })
		c := nverr.CodeOf(err)
		if c != nverr.FunctionNotFound && c != nverr.ArgumentVersionMismatch {
			return Memory{Total: m.Total, Used: m.Used, Free: m.Free, Reserved: m.Reserved, HasReserved: true}, err
		}
		d.memoryV1.Store(true)
	}
	var m nvml.Memory
	err := d.b.call(symDeviceGetMemoryInfo, func() (r nvml.Return) { m, r = d.h.GetMemoryInfo(); return })
	return Memory{Total: m.Total, Used: m.Used, Free: m.Free}, err
}

func (d *device) BAR1() (BAR1, error) {
	var m nvml.BAR1Memory
	err := d.b.call(symDeviceGetBAR1MemoryInfo, func() (r nvml.Return) { m, r = d.h.GetBAR1MemoryInfo(); return })
	return BAR1{Total: m.Bar1Total, Used: m.Bar1Used, Free: m.Bar1Free}, err
}

func (d *device) Utilization() (gpu, mem uint32, err error) {
	err = d.b.call(symDeviceGetUtilizationRates, func() nvml.Return {
		u, r := d.h.GetUtilizationRates()
		gpu, mem = u.Gpu, u.Memory
		return r
	})
	return gpu, mem, err
}

func (d *device) Encoder() (v uint32, err error) {
	err = d.b.call(symDeviceGetEncoderUtilization, func() (r nvml.Return) { v, _, r = d.h.GetEncoderUtilization(); return })
	return v, err
}

func (d *device) Decoder() (v uint32, err error) {
	err = d.b.call(symDeviceGetDecoderUtilization, func() (r nvml.Return) { v, _, r = d.h.GetDecoderUtilization(); return })
	return v, err
}

var clockTypes = [...]nvml.ClockType{
	ClockGraphics: nvml.CLOCK_GRAPHICS,
	ClockSM:       nvml.CLOCK_SM,
	ClockMemory:   nvml.CLOCK_MEM,
	ClockVideo:    nvml.CLOCK_VIDEO,
}

func clockType(c Clock) (nvml.ClockType, error) {
	if c < 0 || int(c) >= len(clockTypes) {
		return 0, nverr.New("clock", nverr.InvalidArgument)
	}
	return clockTypes[c], nil
}

func (d *device) Clock(c Clock) (v uint32, err error) {
	t, err := clockType(c)
	if err != nil {
		return 0, err
	}
	err = d.b.call(symDeviceGetClockInfo, func() (r nvml.Return) { v, r = d.h.GetClockInfo(t); return })
	return v, err
}

func (d *device) MaxClock(c Clock) (v uint32, err error) {
	t, err := clockType(c)
	if err != nil {
		return 0, err
	}
	err = d.b.call(symDeviceGetMaxClockInfo, func() (r nvml.Return) { v, r = d.h.GetMaxClockInfo(t); return })
	return v, err
}

func (d *device) FanSpeed() (v uint32, err error) {
	err = d.b.call(symDeviceGetFanSpeed, func() (r nvml.Return) { v, r = d.h.GetFanSpeed(); return })
	return v, err
}

func (d *device) Temperature() (v uint32, err error) {
	err = d.b.call(symDeviceGetTemperature, func() (r nvml.Return) { v, r = d.h.GetTemperature(nvml.TEMPERATURE_GPU); return })
	return v, err
}

func (d *device) PowerUsage() (v uint32, err error) {
	err = d.b.call(symDeviceGetPowerUsage, func() (r nvml.Return) { v, r = d.h.GetPowerUsage(); return })
	return v, err
}

func (d *device) PowerLimit() (v uint32, err error) {
	err = d.b.call(symDeviceGetPowerManagementLimit, func() (r nvml.Return) { v, r = d.h.GetPowerManagementLimit(); return })
	return v, err
}

func (d *device) PCIeThroughput(tx bool) (v uint32, err error) {
	c := nvml.PCIE_UTIL_RX_BYTES
	if tx {
		c = nvml.PCIE_UTIL_TX_BYTES
	}
	err = d.b.call(symDeviceGetPcieThroughput, func() (r nvml.Return) { v, r = d.h.GetPcieThroughput(c); return })
	return v, err
}

func (d *device) DisplayActive() (on bool, err error) {
	err = d.b.call(symDeviceGetDisplayActive, func() nvml.Return {
		s, r := d.h.GetDisplayActive()
		on = s == nvml.FEATURE_ENABLED
		return r
	})
	return on, err
}

func (d *device) DisplayMode() (on bool, err error) {
	err = d.b.call(symDeviceGetDisplayMode, func() nvml.Return {
		s, r := d.h.GetDisplayMode()
		on = s == nvml.FEATURE_ENABLED
		return r
	})
	return on, err
}

func (d *device) PersistenceMode() (on bool, err error) {
	err = d.b.call(symDeviceGetPersistenceMode, func() nvml.Return {
		s, r := d.h.GetPersistenceMode()
		on = s == nvml.FEATURE_ENABLED
		return r
	})
	return on, err
}

func (d *device) PerformanceState() (p int, err error) {
	err = d.b.call(symDeviceGetPerformanceState, func() nvml.Return {
		s, r := d.h.GetPerformanceState()
		p = int(s)
		return r
	})
	return p, err
}

func (d *device) ComputeMode() (m int, err error) {
	err = d.b.call(symDeviceGetComputeMode, func() nvml.Return {
		s, r := d.h.GetComputeMode()
		m = int(s)
		return r
	})
	return m, err
}

func (d *device) VolatileUncorrectedECC() (n uint64, err error) {
	err = d.b.call(symDeviceGetTotalEccErrors, func() (r nvml.Return) {
		n, r = d.h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
		return
	})
	return n, err
}

func (d *device) MIGMode() (cur, pending int, err error) {
	err = d.b.call(symDeviceGetMigMode, func() (r nvml.Return) { cur, pending, r = d.h.GetMigMode(); return })
	return cur, pending, err
}

// fieldBufs are the field-value buffers handed to the library.
var fieldBufs = sync.Pool{New: func() any { return new([]nvml.FieldValue) }}

func (d *device) FieldValues(reqs []FieldRequest, out []FieldResult) error {
	if len(reqs) == 0 {
		// go-nvml indexes values[0]: an empty request would panic.
		return nil
	}
	if len(out) < len(reqs) {
		return nverr.New("nvmlDeviceGetFieldValues", nverr.InvalidArgument)
	}
	bp := fieldBufs.Get().(*[]nvml.FieldValue)
	defer fieldBufs.Put(bp)
	if cap(*bp) < len(reqs) {
		*bp = make([]nvml.FieldValue, len(reqs))
	}
	vals := (*bp)[:len(reqs)]
	for i, q := range reqs {
		vals[i] = nvml.FieldValue{FieldId: q.ID, ScopeId: q.Scope}
	}
	if err := d.b.call(symDeviceGetFieldValues, func() nvml.Return { return d.h.GetFieldValues(vals) }); err != nil {
		return err
	}
	for i := range vals {
		decodeField(&out[i], &vals[i])
	}
	return nil
}

// decodeField writes the answered field value v into *r, in place: the
// results live in the caller's buffer, which a pass reuses.
func decodeField(r *FieldResult, v *nvml.FieldValue) {
	r.Timestamp, r.Kind, r.Float, r.Uint, r.Int = v.Timestamp, FieldUint, 0, 0, 0
	if v.NvmlReturn == uint32(nvml.SUCCESS) {
		if r.Err != nil {
			r.Err = nil
		}
	} else {
		r.Err = nverr.New("nvmlDeviceGetFieldValues", nverr.Code(v.NvmlReturn))
	}
	b := v.Value[:]
	switch nvml.ValueType(v.ValueType) {
	case nvml.VALUE_TYPE_DOUBLE:
		r.Kind, r.Float = FieldFloat, math.Float64frombits(binary.LittleEndian.Uint64(b))
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		r.Uint = uint64(binary.LittleEndian.Uint32(b))
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		r.Uint = binary.LittleEndian.Uint64(b)
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		r.Kind, r.Int = FieldInt, int64(binary.LittleEndian.Uint64(b))
	case nvml.VALUE_TYPE_SIGNED_INT:
		r.Kind, r.Int = FieldInt, int64(int32(binary.LittleEndian.Uint32(b)))
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		r.Uint = uint64(binary.LittleEndian.Uint16(b))
	default:
		if r.Err == nil {
			r.Err = nverr.New("nvmlDeviceGetFieldValues", nverr.Unknown)
		}
	}
}

func processes(list []nvml.ProcessInfo) []ProcessInfo {
	out := make([]ProcessInfo, len(list))
	for i, p := range list {
		out[i] = ProcessInfo{PID: p.Pid, UsedMemory: p.UsedGpuMemory, GPUInstanceID: p.GpuInstanceId, ComputeInstanceID: p.ComputeInstanceId}
	}
	return out
}

func (d *device) ComputeProcesses() (out []ProcessInfo, err error) {
	err = d.b.call(symDeviceGetComputeRunningProcesses, func() (r nvml.Return) {
		if d.raw != nil {
			out, r = rawProcessList(&rawCompute, d.raw, &d.computeHint, "nvmlDeviceGetComputeRunningProcesses_v3",
				"nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses")
			return r
		}
		l, r := d.h.GetComputeRunningProcesses()
		out = processes(l)
		return r
	})
	return out, err
}

func (d *device) GraphicsProcesses() (out []ProcessInfo, err error) {
	err = d.b.call(symDeviceGetGraphicsRunningProcesses, func() (r nvml.Return) {
		if d.raw != nil {
			out, r = rawProcessList(&rawGraphics, d.raw, &d.graphicsHint, "nvmlDeviceGetGraphicsRunningProcesses_v3",
				"nvmlDeviceGetGraphicsRunningProcesses_v2", "nvmlDeviceGetGraphicsRunningProcesses")
			return r
		}
		l, r := d.h.GetGraphicsRunningProcesses()
		out = processes(l)
		return r
	})
	return out, err
}

func (d *device) MPSProcesses() (out []ProcessInfo, err error) {
	err = d.b.call(symDeviceGetMPSComputeRunningProcesses, func() (r nvml.Return) {
		if d.raw != nil {
			out, r = rawProcessList(&rawMPS, d.raw, &d.mpsHint, "nvmlDeviceGetMPSComputeRunningProcesses_v3",
				"nvmlDeviceGetMPSComputeRunningProcesses_v2", "nvmlDeviceGetMPSComputeRunningProcesses")
			return r
		}
		l, r := d.h.GetMPSComputeRunningProcesses()
		out = processes(l)
		return r
	})
	return out, err
}

func (d *device) ProcessUtilization(lastSeen uint64) (out []ProcessSample, err error) {
	err = d.b.call(symDeviceGetProcessUtilization, func() nvml.Return {
		if d.raw != nil {
			var r nvml.Return
			out, r = rawProcessUtilization(d.raw, &d.procUtilHint, lastSeen)
			return r
		}
		l, r := d.h.GetProcessUtilization(lastSeen)
		if r == nvml.ERROR_NOT_FOUND {
			// NVML's way of saying "no sample newer than lastSeen".
			return nvml.SUCCESS
		}
		out = make([]ProcessSample, len(l))
		for i, s := range l {
			out[i] = ProcessSample{PID: s.Pid, Timestamp: s.TimeStamp, SM: s.SmUtil, Memory: s.MemUtil, Enc: s.EncUtil, Dec: s.DecUtil}
		}
		return r
	})
	return out, err
}

func (d *device) MaxMIGDeviceCount() (n int, err error) {
	err = d.b.call(symDeviceGetMaxMigDeviceCount, func() (r nvml.Return) { n, r = d.h.GetMaxMigDeviceCount(); return })
	return n, err
}

func (d *device) MIGDeviceByIndex(i int) (Device, error) {
	var h nvml.Device
	err := d.b.call(symDeviceGetMigDeviceHandleByIndex, func() (r nvml.Return) { h, r = d.h.GetMigDeviceHandleByIndex(i); return })
	return d.b.wrap(h, err)
}

func (d *device) IsMIGDevice() (is bool, err error) {
	err = d.b.call(symDeviceIsMigDeviceHandle, func() (r nvml.Return) { is, r = d.h.IsMigDeviceHandle(); return })
	return is, err
}

func (d *device) MIGParent() (Device, error) {
	var h nvml.Device
	err := d.b.call(symDeviceGetDeviceHandleFromMigDeviceHandle, func() (r nvml.Return) { h, r = d.h.GetDeviceHandleFromMigDeviceHandle(); return })
	return d.b.wrap(h, err)
}

func (d *device) GPUInstanceID() (id int, err error) {
	err = d.b.call(symDeviceGetGpuInstanceId, func() (r nvml.Return) { id, r = d.h.GetGpuInstanceId(); return })
	return id, err
}

func (d *device) ComputeInstanceID() (id int, err error) {
	err = d.b.call(symDeviceGetComputeInstanceId, func() (r nvml.Return) { id, r = d.h.GetComputeInstanceId(); return })
	return id, err
}

func (d *device) MIGAttributes() (a MIGAttributes, err error) {
	err = d.b.call(symDeviceGetAttributes, func() nvml.Return {
		v, r := d.h.GetAttributes()
		a = MIGAttributes{
			MultiprocessorCount: v.MultiprocessorCount, SharedCopyEngineCount: v.SharedCopyEngineCount,
			SharedDecoderCount: v.SharedDecoderCount, SharedEncoderCount: v.SharedEncoderCount,
			SharedJPEGCount: v.SharedJpegCount, SharedOFACount: v.SharedOfaCount,
			GPUInstanceSliceCount: v.GpuInstanceSliceCount, ComputeInstanceSliceCount: v.ComputeInstanceSliceCount,
			MemorySizeMiB: v.MemorySizeMB,
		}
		return r
	})
	return a, err
}

func (d *device) Samples(kind SampleKind, lastSeen uint64) (out []Sample, err error) {
	err = d.b.call(symDeviceGetSamples, func() nvml.Return {
		var t nvml.ValueType
		var l []nvml.Sample
		var r nvml.Return
		if d.raw != nil && int(kind) < len(d.sampleCap) {
			t, l, r = rawSampleRead(d.raw, &d.sampleCap[kind], kind, lastSeen)
		} else {
			t, l, r = d.h.GetSamples(nvml.SamplingType(kind), lastSeen)
		}
		if r == nvml.ERROR_NOT_FOUND {
			return nvml.SUCCESS // no sample newer than lastSeen
		}
		out = make([]Sample, 0, len(l))
		for _, s := range l {
			var v FieldResult
			decodeField(&v, &nvml.FieldValue{ValueType: uint32(t), Value: s.SampleValue})
			if v.Err == nil {
				out = append(out, Sample{Timestamp: s.TimeStamp, Value: v.AsFloat()})
			}
		}
		return r
	})
	return out, err
}

func (d *device) AccountingMode() (on bool, err error) {
	err = d.b.call(symDeviceGetAccountingMode, func() nvml.Return {
		s, r := d.h.GetAccountingMode()
		on = s == nvml.FEATURE_ENABLED
		return r
	})
	return on, err
}

func (d *device) SetAccountingMode(on bool) error {
	mode := nvml.FEATURE_DISABLED
	if on {
		mode = nvml.FEATURE_ENABLED
	}
	return d.b.call(symDeviceSetAccountingMode, func() nvml.Return { return d.h.SetAccountingMode(mode) })
}

func (d *device) AccountingPIDs() (out []uint32, err error) {
	err = d.b.call(symDeviceGetAccountingPids, func() nvml.Return {
		l, r := d.h.GetAccountingPids()
		out = pidsOf(l)
		return r
	})
	return out, err
}

func (d *device) AccountingStats(pid uint32) (a AccountingStats, err error) {
	err = d.b.call(symDeviceGetAccountingStats, func() nvml.Return {
		s, r := d.h.GetAccountingStats(pid)
		a = accountingStatsOf(s)
		return r
	})
	return a, err
}

func (d *device) AccountingBufferSize() (n int, err error) {
	err = d.b.call(symDeviceGetAccountingBufferSize, func() (r nvml.Return) { n, r = d.h.GetAccountingBufferSize(); return })
	return n, err
}

// pidsOf converts go-nvml's PID list.
func pidsOf(l []int) []uint32 {
	out := make([]uint32, len(l))
	for i, pid := range l {
		out[i] = uint32(pid)
	}
	return out
}

// accountingStatsOf converts nvmlAccountingStats_t.
func accountingStatsOf(s nvml.AccountingStats) AccountingStats {
	return AccountingStats{
		GPUUtilization: s.GpuUtilization, MemoryUtilization: s.MemoryUtilization,
		MaxMemoryUsage: s.MaxMemoryUsage, Time: s.Time, StartTime: s.StartTime,
		IsRunning: s.IsRunning != 0,
	}
}
