//go:build cgo

package fakegpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu/internal/libnvml"
)

// The exporter writes what a fleet answers into a slot of a state file,
// for the drop-in libnvidia-ml.so.1. It asks the fleet through the same
// wired functions a client's calls reach (peek), so the C door answers
// exactly what the Go door does: unsupported metrics, injected faults,
// lost GPUs, removed MIG devices and destroyed vGPU instances included.
// Calls that take an argument are asked once per argument the C door
// tells apart (each clock, each MIG index, …) plus once with an argument
// out of range, whose answer stands for every other.

// errStateFull is wrapped by Sync's error when the fleet does not fit in a
// state file; what fits is published.
var errStateFull = errors.New("fakegpu: the fleet does not fit in a state file")

// exporter fills one slot.
type exporter struct {
	f    *Fleet
	st   *libnvml.State
	migs map[*MIG]uint32 // record of each MIG device ever seen (kept by the Mirror)
	next *uint32         // the next free record (kept by the Mirror)
	pids []uint32        // PIDs on any process list, for SystemGetProcessName
	full []string        // arrays that overflowed
}

// ret is the nvml.Return of a peek's results (the last one).
func ret(out []reflect.Value) int32 {
	return int32(out[len(out)-1].Interface().(nvml.Return))
}

// num is an integer or boolean result as a uint64.
func num(v reflect.Value) uint64 {
	switch v.Kind() {
	case reflect.Bool:
		if v.Bool() {
			return 1
		}
		return 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return uint64(v.Int())
	}
	return v.Uint()
}

// setString copies s into a C char array, NUL-terminated and cut to fit.
func setString[T ~int8 | ~uint8](dst []T, s string) {
	clear(dst)
	n := min(len(s), len(dst)-1)
	for i := 0; i < n; i++ {
		dst[i] = T(s[i])
	}
}

// cString is a NUL-terminated C char array as a string.
func cString(b []int8) string {
	n := 0
	for n < len(b) && b[n] != 0 {
		n++
	}
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(b[i])
	}
	return string(out)
}

// noNewer turns NOT_FOUND, the sample calls' "nothing newer than
// lastSeen", into SUCCESS: asked with lastSeen 0, it means an empty buffer,
// and the C door decides NOT_FOUND per caller.
func noNewer(r int32) int32 {
	if r == int32(nvml.ERROR_NOT_FOUND) {
		return int32(nvml.SUCCESS)
	}
	return r
}

func (x *exporter) overflow(what string) {
	if !slices.Contains(x.full, what) {
		x.full = append(x.full, what)
	}
}

// run fills the slot with the fleet's current answers.
func (x *exporter) run() error {
	f, st := x.f, x.st
	f.mu.Lock()
	st.Now_us = uint64(f.now.UnixMicro())
	st.Init_error = int32(f.failInit)
	missing := make([]string, 0, len(f.missing))
	for s := range f.missing {
		missing = append(missing, s)
	}
	f.mu.Unlock()
	slices.Sort(missing)
	st.Missing_count = 0
	for _, s := range missing {
		if st.Missing_count == libnvml.MaxMissing {
			x.overflow("missing symbols")
			break
		}
		setString(st.Missing[st.Missing_count][:], s)
		st.Missing_count++
	}

	out := f.peek(f.sites, "SystemGetDriverVersion")
	st.Ret_driver_version = ret(out)
	setString(st.Driver_version[:], out[0].String())
	out = f.peek(f.sites, "SystemGetNVMLVersion")
	st.Ret_nvml_version = ret(out)
	setString(st.Nvml_version[:], out[0].String())
	out = f.peek(f.sites, "SystemGetCudaDriverVersion")
	st.Ret_cuda_version, st.Cuda_version = ret(out), int32(out[0].Int())
	st.Ret_count = ret(f.peek(f.sites, "DeviceGetCount"))

	st.Proc_count, st.Name_count, st.Sample_count, st.Psample_count = 0, 0, 0, 0
	st.Acct_count, st.Field_count, st.Vgpu_count, st.Vtype_count = 0, 0, 0, 0
	st.Vsample_count, st.Vpsample_count = 0, 0
	x.pids = x.pids[:0]

	n := min(len(f.gpus), libnvml.MaxDevices)
	if n < len(f.gpus) {
		x.overflow("devices")
	}
	st.Gpu_count = uint32(n)
	if *x.next < uint32(n) {
		*x.next = uint32(n)
	}
	types := map[*vgpuType]bool{}
	for i := 0; i < n; i++ {
		handle := ret(f.peek(f.sites, "DeviceGetHandleByIndex", i))
		x.device(uint32(i), f.gpus[i].dev, handle, types)
	}
	// MIG devices in the order they were first seen; a removed one keeps
	// its record, whose every call answers what its handle now does.
	recs := make([]*MIG, 0, len(x.migs))
	for m := range x.migs {
		recs = append(recs, m)
	}
	slices.SortFunc(recs, func(a, b *MIG) int { return int(x.migs[a]) - int(x.migs[b]) })
	for _, m := range recs {
		handle := ret(f.peek(f.sites, "DeviceGetHandleByUUID", m.uuid))
		if m.removedNow() {
			handle = int32(nvml.ERROR_NOT_FOUND)
		}
		x.device(x.migs[m], m.dev, handle, types)
	}
	st.Device_count = *x.next

	x.names()
	x.vgpuTypes(types)
	if len(x.full) > 0 {
		return fmt.Errorf("%w: %v cut to the state file's capacity", errStateFull, x.full)
	}
	return nil
}

// removedNow reports whether the MIG device was removed.
func (m *MIG) removedNow() bool {
	m.g.f.mu.Lock()
	defer m.g.f.mu.Unlock()
	return m.removed
}

// migRecord returns the record of MIG device m, giving it one on first
// sight; false when every record is taken.
func (x *exporter) migRecord(m *MIG) (uint32, bool) {
	if r, ok := x.migs[m]; ok {
		return r, true
	}
	if *x.next >= libnvml.MaxDevices {
		x.overflow("devices")
		return 0, false
	}
	r := *x.next
	*x.next++
	x.migs[m] = r
	return r, true
}

// device fills record rec from handle d.
func (x *exporter) device(rec uint32, d *device, handle int32, types map[*vgpuType]bool) {
	f, st := x.f, x.st
	r := &st.Devices[rec]
	*r = libnvml.Device{}
	r.Ret[libnvml.NFHandle] = handle
	p := func(method string, args ...any) []reflect.Value { return f.peek(d.sites, method, args...) }
	u := func(slot int, method string, args ...any) uint64 {
		out := p(method, args...)
		r.Ret[slot] = ret(out)
		return num(out[0])
	}
	s := func(slot int, dst []int8, method string) {
		out := p(method)
		r.Ret[slot] = ret(out)
		setString(dst, out[0].String())
	}

	if d.m != nil {
		r.Is_mig = 1
		r.Parent = uint32(d.g.index)
		r.Index = uint32(d.m.slot)
		if d.m.removedNow() {
			r.Removed = 1
		}
	} else {
		r.Index = uint32(d.g.index)
	}
	s(libnvml.NFName, r.Name[:], "GetName")
	s(libnvml.NFUUID, r.Uuid[:], "GetUUID")
	s(libnvml.NFSerial, r.Serial[:], "GetSerial")
	u(libnvml.NFIndex, "GetIndex")
	r.Minor = uint32(u(libnvml.NFMinor, "GetMinorNumber"))
	r.Brand = uint32(u(libnvml.NFBrand, "GetBrand"))
	r.Architecture = uint32(u(libnvml.NFArch, "GetArchitecture"))
	out := p("GetCudaComputeCapability")
	r.Ret[libnvml.NFCC], r.Cc_major, r.Cc_minor = ret(out), int32(out[0].Int()), int32(out[1].Int())
	out = p("GetPciInfo")
	r.Ret[libnvml.NFPCI] = ret(out)
	pci := out[0].Interface().(nvml.PciInfo)
	setString(r.Bus_id[:], cString(pci.BusId[:]))
	setString(r.Bus_id_legacy[:], cString(pci.BusIdLegacy[:]))
	r.Pci_domain, r.Pci_bus, r.Pci_device = pci.Domain, pci.Bus, pci.Device
	r.Pci_device_id, r.Pci_subsystem_id = pci.PciDeviceId, pci.PciSubSystemId

	out = p("GetMemoryInfo")
	r.Ret[libnvml.NFMemory] = ret(out)
	m1 := out[0].Interface().(nvml.Memory)
	r.Memory_v1_total, r.Memory_v1_free, r.Memory_v1_used = m1.Total, m1.Free, m1.Used
	out = p("GetMemoryInfo_v2")
	r.Ret[libnvml.NFMemoryV2] = ret(out)
	m2 := out[0].Interface().(nvml.Memory_v2)
	r.Memory_total, r.Memory_reserved, r.Memory_free, r.Memory_used = m2.Total, m2.Reserved, m2.Free, m2.Used
	out = p("GetBAR1MemoryInfo")
	r.Ret[libnvml.NFBAR1] = ret(out)
	b := out[0].Interface().(nvml.BAR1Memory)
	r.Bar1_total, r.Bar1_free, r.Bar1_used = b.Bar1Total, b.Bar1Free, b.Bar1Used

	out = p("GetUtilizationRates")
	r.Ret[libnvml.NFUtilization] = ret(out)
	ut := out[0].Interface().(nvml.Utilization)
	r.Util_gpu, r.Util_memory = ut.Gpu, ut.Memory
	out = p("GetEncoderUtilization")
	r.Ret[libnvml.NFEncoder], r.Encoder, r.Encoder_period = ret(out), uint32(num(out[0])), uint32(num(out[1]))
	out = p("GetDecoderUtilization")
	r.Ret[libnvml.NFDecoder], r.Decoder, r.Decoder_period = ret(out), uint32(num(out[0])), uint32(num(out[1]))
	clocks := []nvml.ClockType{nvml.CLOCK_GRAPHICS, nvml.CLOCK_SM, nvml.CLOCK_MEM, nvml.CLOCK_VIDEO, nvml.CLOCK_COUNT}
	for i, c := range clocks {
		v := u(libnvml.NFClockGraphics+i, "GetClockInfo", c)
		m := u(libnvml.NFMaxClockGraphics+i, "GetMaxClockInfo", c)
		if i < len(r.Clock) {
			r.Clock[i], r.Max_clock[i] = uint32(v), uint32(m)
		}
	}

	r.Fan = uint32(u(libnvml.NFFan, "GetFanSpeed"))
	r.Fan0 = uint32(u(libnvml.NFFan0, "GetFanSpeed_v2", 0))
	u(libnvml.NFFanOther, "GetFanSpeed_v2", 1)
	r.Num_fans = uint32(u(libnvml.NFNumFans, "GetNumFans"))
	r.Temperature = uint32(u(libnvml.NFTemperature, "GetTemperature", nvml.TEMPERATURE_GPU))
	u(libnvml.NFTemperatureOther, "GetTemperature", nvml.TEMPERATURE_COUNT)
	r.Power = uint32(u(libnvml.NFPower, "GetPowerUsage"))
	r.Power_limit = uint32(u(libnvml.NFPowerLimit, "GetPowerManagementLimit"))
	r.Enforced_limit = uint32(u(libnvml.NFEnforcedLimit, "GetEnforcedPowerLimit"))
	r.Default_limit = uint32(u(libnvml.NFDefaultLimit, "GetPowerManagementDefaultLimit"))
	r.Energy = u(libnvml.NFEnergy, "GetTotalEnergyConsumption")
	r.Pcie_tx = uint32(u(libnvml.NFPCIeTX, "GetPcieThroughput", nvml.PCIE_UTIL_TX_BYTES))
	r.Pcie_rx = uint32(u(libnvml.NFPCIeRX, "GetPcieThroughput", nvml.PCIE_UTIL_RX_BYTES))
	u(libnvml.NFPCIeOther, "GetPcieThroughput", nvml.PCIE_UTIL_COUNT)

	f.mu.Lock()
	links := d.g.nvLinks
	f.mu.Unlock()
	if d.m != nil {
		links = 0
	}
	r.Nvlinks = uint32(links)
	u(libnvml.NFNVLinkState, "GetNvLinkState", 0)
	u(libnvml.NFNVLinkStateOther, "GetNvLinkState", links)

	r.Display_active = uint32(u(libnvml.NFDisplayActive, "GetDisplayActive"))
	r.Display_mode = uint32(u(libnvml.NFDisplayMode, "GetDisplayMode"))
	r.Persistence = uint32(u(libnvml.NFPersistence, "GetPersistenceMode"))
	r.Pstate = uint32(u(libnvml.NFPState, "GetPerformanceState"))
	r.Power_state = uint32(u(libnvml.NFPowerState, "GetPowerState"))
	r.Compute_mode = uint32(u(libnvml.NFComputeMode, "GetComputeMode"))
	ecc := [][2]any{
		{nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC}, {nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC},
		{nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC}, {nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC},
		{nvml.MEMORY_ERROR_TYPE_COUNT, nvml.VOLATILE_ECC},
	}
	for i, e := range ecc {
		v := u(libnvml.NFECCUncorrectedVolatile+i, "GetTotalEccErrors", e[0], e[1])
		if i < len(r.Ecc) {
			r.Ecc[i] = v
		}
	}
	out = p("GetEccMode")
	r.Ret[libnvml.NFECCMode], r.Ecc_current, r.Ecc_pending = ret(out), uint32(num(out[0])), uint32(num(out[1]))
	out = p("GetDriverModel")
	r.Ret[libnvml.NFDriverModel], r.Driver_model = ret(out), uint32(num(out[0]))

	x.mig(r, p, u)
	x.fields(r, p, links)
	x.processes(r, p)
	x.samples(r, p)
	x.accounting(r, p, u)
	r.Ret[libnvml.NFSetAccounting] = int32(f.peekFault(d.sites, "SetAccountingMode"))
	r.Ret[libnvml.NFClearAccounting] = int32(f.peekFault(d.sites, "ClearAccountingPids"))
	r.Ret[libnvml.NFSetPersistence] = int32(f.peekFault(d.sites, "SetPersistenceMode"))
	x.vgpus(r, p, u, types)
}

type peeker func(method string, args ...any) []reflect.Value

func (x *exporter) mig(r *libnvml.Device, p peeker, u func(int, string, ...any) uint64) {
	out := p("GetMigMode")
	r.Ret[libnvml.NFMIGMode], r.Mig_current, r.Mig_pending = ret(out), uint32(num(out[0])), uint32(num(out[1]))
	r.Max_mig = uint32(u(libnvml.NFMaxMIG, "GetMaxMigDeviceCount"))
	u(libnvml.NFIsMIG, "IsMigDeviceHandle")
	r.Gpu_instance = uint32(u(libnvml.NFGPUInstance, "GetGpuInstanceId"))
	r.Compute_instance = uint32(u(libnvml.NFComputeInstance, "GetComputeInstanceId"))
	out = p("GetDeviceHandleFromMigDeviceHandle")
	r.Ret[libnvml.NFMIGParent] = ret(out)
	for i := range r.Mig_slot {
		r.Mig_slot[i] = -1
		out := p("GetMigDeviceHandleByIndex", i)
		r.Mig_slot_ret[i] = ret(out)
		md, ok := out[0].Interface().(*device)
		if r.Mig_slot_ret[i] != int32(nvml.SUCCESS) || !ok || md == nil || md.m == nil {
			continue
		}
		if rec, ok := x.migRecord(md.m); ok {
			r.Mig_slot[i] = int32(rec)
		} else {
			r.Mig_slot_ret[i] = int32(nvml.ERROR_UNKNOWN)
		}
	}
	r.Ret[libnvml.NFMIGHandleOther] = ret(p("GetMigDeviceHandleByIndex", len(r.Mig_slot)))
	out = p("GetAttributes")
	r.Ret[libnvml.NFAttributes] = ret(out)
	a := out[0].Interface().(nvml.DeviceAttributes)
	r.Attr_sm, r.Attr_ce, r.Attr_dec, r.Attr_enc = a.MultiprocessorCount, a.SharedCopyEngineCount, a.SharedDecoderCount, a.SharedEncoderCount
	r.Attr_jpeg, r.Attr_ofa, r.Attr_gi_slices, r.Attr_ci_slices = a.SharedJpegCount, a.SharedOfaCount, a.GpuInstanceSliceCount, a.ComputeInstanceSliceCount
	r.Attr_memory_mib = a.MemorySizeMB
}

// allLinks is the field-value scope of the sum over every NVLink.
const allScope = 0xFFFFFFFF

// fields asks every field ID the fake knows, with the scopes a client may
// give (each link, all links, and one that stands for any other), and
// keeps an entry per scope whose answer differs from the other scopes'.
func (x *exporter) fields(r *libnvml.Device, p peeker, links int) {
	ids := make([]uint32, 0, len(fields))
	for id := range fields {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	scopes := []uint32{libnvml.OtherScope, 0, allScope}
	for l := 1; l < links; l++ {
		scopes = append(scopes, uint32(l))
	}
	vals := make([]nvml.FieldValue, 0, len(ids)*len(scopes))
	for _, id := range ids {
		for _, sc := range scopes {
			vals = append(vals, nvml.FieldValue{FieldId: id, ScopeId: sc})
		}
	}
	r.Ret[libnvml.NFFieldValues] = ret(p("GetFieldValues", vals))
	st := x.st
	r.Fields.First = st.Field_count
	var other nvml.FieldValue
	for _, v := range vals {
		if v.ScopeId == libnvml.OtherScope {
			other = v
		} else if v.NvmlReturn == other.NvmlReturn && v.ValueType == other.ValueType && v.Value == other.Value {
			continue // answered as any other scope is
		}
		if st.Field_count == libnvml.MaxFields {
			x.overflow("field values")
			break
		}
		st.Fields[st.Field_count] = libnvml.Field{
			Id: v.FieldId, Scope: v.ScopeId, Ret: int32(v.NvmlReturn), Type: v.ValueType,
			Value: binary.LittleEndian.Uint64(v.Value[:]),
		}
		st.Field_count++
	}
	r.Fields.Count = st.Field_count - r.Fields.First
}

func (x *exporter) processes(r *libnvml.Device, p peeker) {
	st := x.st
	for list, method := range [libnvml.Lists]string{
		libnvml.ListCompute:  "GetComputeRunningProcesses",
		libnvml.ListGraphics: "GetGraphicsRunningProcesses",
		libnvml.ListMPS:      "GetMPSComputeRunningProcesses",
	} {
		out := p(method)
		r.Ret[libnvml.NFComputeProcs+list] = ret(out)
		r.Procs[list].First = st.Proc_count
		for _, pi := range out[0].Interface().([]nvml.ProcessInfo) {
			if st.Proc_count == libnvml.MaxProcs {
				x.overflow("processes")
				break
			}
			st.Procs[st.Proc_count] = libnvml.Proc{
				Pid: pi.Pid, Gpu_instance: pi.GpuInstanceId, Compute_instance: pi.ComputeInstanceId, Used_memory: pi.UsedGpuMemory,
			}
			st.Proc_count++
			x.pids = append(x.pids, pi.Pid)
		}
		r.Procs[list].Count = st.Proc_count - r.Procs[list].First
	}
	out := p("GetProcessUtilization", 0)
	r.Ret[libnvml.NFProcessUtilization] = noNewer(ret(out))
	r.Psamples.First = st.Psample_count
	for _, s := range out[0].Interface().([]nvml.ProcessUtilizationSample) {
		if st.Psample_count == libnvml.MaxPSamples {
			x.overflow("process utilization samples")
			break
		}
		st.Psamples[st.Psample_count] = libnvml.PSample{
			Pid: s.Pid, Sm: s.SmUtil, Memory: s.MemUtil, Encoder: s.EncUtil, Decoder: s.DecUtil, Timestamp: s.TimeStamp,
		}
		st.Psample_count++
	}
	r.Psamples.Count = st.Psample_count - r.Psamples.First
}

func (x *exporter) samples(r *libnvml.Device, p peeker) {
	st := x.st
	for i, t := range []nvml.SamplingType{nvml.GPU_UTILIZATION_SAMPLES, nvml.MEMORY_UTILIZATION_SAMPLES} {
		out := p("GetSamples", t, 0)
		r.Ret[libnvml.NFSamplesGPU+i] = noNewer(ret(out))
		r.Sample_value_type[i] = uint32(num(out[0]))
		r.Samples[i].First = st.Sample_count
		for _, s := range out[1].Interface().([]nvml.Sample) {
			if st.Sample_count == libnvml.MaxSamples {
				x.overflow("samples")
				break
			}
			st.Samples[st.Sample_count] = libnvml.Sample{Timestamp: s.TimeStamp, Value: binary.LittleEndian.Uint64(s.SampleValue[:])}
			st.Sample_count++
		}
		r.Samples[i].Count = st.Sample_count - r.Samples[i].First
	}
	r.Ret[libnvml.NFSamplesOther] = noNewer(ret(p("GetSamples", nvml.TOTAL_POWER_SAMPLES, 0)))
}

// records appends the accounting records of pids (asked with stats) and
// returns their range.
func (x *exporter) records(pids []int, stats func(pid int) []reflect.Value) libnvml.Range {
	st := x.st
	rg := libnvml.Range{First: st.Acct_count}
	for _, pid := range pids {
		out := stats(pid)
		if ret(out) != int32(nvml.SUCCESS) {
			continue
		}
		if st.Acct_count == libnvml.MaxAcct {
			x.overflow("accounting records")
			break
		}
		a := out[0].Interface().(nvml.AccountingStats)
		st.Acct[st.Acct_count] = libnvml.Acct{
			Pid: uint32(pid), Gpu_utilization: a.GpuUtilization, Memory_utilization: a.MemoryUtilization,
			Is_running: a.IsRunning, Max_memory: a.MaxMemoryUsage, Time_ms: a.Time, Start_us: a.StartTime,
		}
		st.Acct_count++
	}
	rg.Count = st.Acct_count - rg.First
	return rg
}

func (x *exporter) accounting(r *libnvml.Device, p peeker, u func(int, string, ...any) uint64) {
	r.Accounting_mode = uint32(u(libnvml.NFAccountingMode, "GetAccountingMode"))
	r.Accounting_buffer = uint32(u(libnvml.NFAccountingBuffer, "GetAccountingBufferSize"))
	out := p("GetAccountingPids")
	r.Ret[libnvml.NFAccountingPIDs] = ret(out)
	pids, _ := out[0].Interface().([]int)
	r.Acct = x.records(pids, func(pid int) []reflect.Value { return p("GetAccountingStats", pid) })
	r.Ret[libnvml.NFAccountingStatsOther] = ret(p("GetAccountingStats", 0))
}

func (x *exporter) vgpus(r *libnvml.Device, p peeker, u func(int, string, ...any) uint64, types map[*vgpuType]bool) {
	st := x.st
	r.Virtualization = uint32(u(libnvml.NFVirtualization, "GetVirtualizationMode"))
	out := p("GetActiveVgpus")
	r.Ret[libnvml.NFActiveVgpus] = ret(out)
	r.Vgpus.First = st.Vgpu_count
	for _, h := range out[0].Interface().([]nvml.VgpuInstance) {
		vh, ok := h.(*vgpuHandle)
		if !ok {
			continue
		}
		if st.Vgpu_count == libnvml.MaxVgpus {
			x.overflow("vGPU instances")
			break
		}
		x.vgpu(&st.Vgpus[st.Vgpu_count], vh, r.Index, types)
		st.Vgpu_count++
	}
	r.Vgpus.Count = st.Vgpu_count - r.Vgpus.First

	out = p("GetVgpuUtilization", 0)
	r.Ret[libnvml.NFVgpuUtilization] = noNewer(ret(out))
	r.Vsample_value_type = uint32(num(out[0]))
	r.Vsamples.First = st.Vsample_count
	for _, s := range out[1].Interface().([]nvml.VgpuInstanceUtilizationSample) {
		if st.Vsample_count == libnvml.MaxVSamples {
			x.overflow("vGPU samples")
			break
		}
		le := binary.LittleEndian
		st.Vsamples[st.Vsample_count] = libnvml.VSample{
			Instance: s.VgpuInstance, Timestamp: s.TimeStamp,
			Sm: le.Uint64(s.SmUtil[:]), Memory: le.Uint64(s.MemUtil[:]), Encoder: le.Uint64(s.EncUtil[:]), Decoder: le.Uint64(s.DecUtil[:]),
		}
		st.Vsample_count++
	}
	r.Vsamples.Count = st.Vsample_count - r.Vsamples.First

	out = p("GetVgpuProcessUtilization", 0)
	r.Ret[libnvml.NFVgpuProcessUtilization] = noNewer(ret(out))
	r.Vpsamples.First = st.Vpsample_count
	for _, s := range out[0].Interface().([]nvml.VgpuProcessUtilizationSample) {
		if st.Vpsample_count == libnvml.MaxVPSamples {
			x.overflow("vGPU process samples")
			break
		}
		v := &st.Vpsamples[st.Vpsample_count]
		*v = libnvml.VPSample{
			Instance: s.VgpuInstance, Pid: s.Pid, Sm: s.SmUtil, Memory: s.MemUtil, Encoder: s.EncUtil, Decoder: s.DecUtil,
			Timestamp: s.TimeStamp,
		}
		setString(v.Name[:], cString(s.ProcessName[:]))
		st.Vpsample_count++
	}
	r.Vpsamples.Count = st.Vpsample_count - r.Vpsamples.First
}

// vgpu fills the record of a vGPU instance hosted by GPU record device.
func (x *exporter) vgpu(v *libnvml.Vgpu, h *vgpuHandle, device uint32, types map[*vgpuType]bool) {
	f := x.f
	*v = libnvml.Vgpu{Id: h.v.id, Device: device}
	p := func(method string, args ...any) []reflect.Value { return f.peek(h.sites, method, args...) }
	u := func(slot int, method string, args ...any) uint64 {
		out := p(method, args...)
		v.Ret[slot] = ret(out)
		return num(out[0])
	}
	s := func(slot int, dst []int8, method string) {
		out := p(method)
		v.Ret[slot] = ret(out)
		setString(dst, out[0].String())
	}
	s(libnvml.NVUUID, v.Uuid[:], "GetUUID")
	s(libnvml.NVMdevUUID, v.Mdev_uuid[:], "GetMdevUUID")
	s(libnvml.NVVMDriver, v.Vm_driver[:], "GetVmDriverVersion")
	out := p("GetVmID")
	v.Ret[libnvml.NVVMID], v.Vm_id_type = ret(out), uint32(num(out[1]))
	setString(v.Vm_id[:], out[0].String())
	out = p("GetType")
	v.Ret[libnvml.NVType] = ret(out)
	if t, ok := out[0].Interface().(*vgpuType); ok && t != nil {
		v.Type_id = t.id
		types[t] = true
	}
	v.Fb_usage = u(libnvml.NVFBUsage, "GetFbUsage")
	v.Frame_rate_limit = uint32(u(libnvml.NVFrameRateLimit, "GetFrameRateLimit"))
	v.Encoder_capacity = uint32(u(libnvml.NVEncoderCapacity, "GetEncoderCapacity"))
	v.Ecc = uint32(u(libnvml.NVECC, "GetEccMode"))
	v.Gpu_instance = uint32(u(libnvml.NVGPUInstance, "GetGpuInstanceId"))
	out = p("GetPlacementId")
	v.Ret[libnvml.NVPlacement] = ret(out)
	v.Placement = out[0].Interface().(nvml.VgpuPlacementId).PlacementId
	out = p("GetLicenseInfo")
	v.Ret[libnvml.NVLicense] = ret(out)
	li := out[0].Interface().(nvml.VgpuLicenseInfo)
	v.Licensed, v.License_state = uint32(li.IsLicensed), li.CurrentState
	e := li.LicenseExpiry
	v.Expiry_year, v.Expiry_month, v.Expiry_day = e.Year, e.Month, e.Day
	v.Expiry_hour, v.Expiry_min, v.Expiry_sec, v.Expiry_status = e.Hour, e.Min, e.Sec, uint16(e.Status)
	v.License_status = uint32(u(libnvml.NVLicenseStatus, "GetLicenseStatus"))
	v.Accounting_mode = uint32(u(libnvml.NVAccountingMode, "GetAccountingMode"))
	out = p("GetAccountingPids")
	v.Ret[libnvml.NVAccountingPIDs] = ret(out)
	pids, _ := out[0].Interface().([]int)
	v.Acct = x.records(pids, func(pid int) []reflect.Value { return p("GetAccountingStats", pid) })
	v.Ret[libnvml.NVAccountingStatsOther] = ret(p("GetAccountingStats", 0))
	v.Ret[libnvml.NVClearAccounting] = int32(f.peekFault(h.sites, "ClearAccountingPids"))
}

// vgpuTypes fills the table of the types the instances have.
func (x *exporter) vgpuTypes(types map[*vgpuType]bool) {
	st := x.st
	list := make([]*vgpuType, 0, len(types))
	for t := range types {
		list = append(list, t)
	}
	slices.SortFunc(list, func(a, b *vgpuType) int { return int(a.id) - int(b.id) })
	for _, t := range list {
		if st.Vtype_count == libnvml.MaxVtypes {
			x.overflow("vGPU types")
			break
		}
		vt := &st.Vtypes[st.Vtype_count]
		*vt = libnvml.Vtype{Id: t.id}
		out := x.f.peek(t.sites, "GetName")
		vt.Ret_name = ret(out)
		setString(vt.Name[:], out[0].String())
		out = x.f.peek(t.sites, "GetClass")
		vt.Ret_class = ret(out)
		setString(vt.Class_name[:], out[0].String())
		out = x.f.peek(t.sites, "GetFramebufferSize")
		vt.Ret_fb, vt.Framebuffer = ret(out), out[0].Uint()
		st.Vtype_count++
	}
}

// names answers SystemGetProcessName for every PID on a process list.
func (x *exporter) names() {
	st := x.st
	slices.Sort(x.pids)
	for _, pid := range slices.Compact(x.pids) {
		if st.Name_count == libnvml.MaxNames {
			x.overflow("process names")
			break
		}
		out := x.f.peek(x.f.sites, "SystemGetProcessName", int(pid))
		n := &st.Names[st.Name_count]
		n.Pid, n.Ret = pid, ret(out)
		setString(n.Name[:], out[0].String())
		st.Name_count++
	}
}
