//go:build cgo

package fakegpu_test

import (
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

var migUUIDRE = regexp.MustCompile(`^MIG-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// migFleet is an initialised fleet of one H100 with MIG devices in slots
// 0 (3g.40gb, running PID 100), 2 (1c.2g.20gb) and 3 (1c.2g.20gb, the same
// GPU instance), slot 1 free; and a second H100 without MIG.
func migFleet(t *testing.T) *fakegpu.Fleet {
	t.Helper()
	spec := fakegpu.GPUSpec{Model: "h100", MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
		{Index: 0, GI: 2, CI: 0, Profile: "3g.40gb", MemoryTotalMiB: 40448,
			Processes: []fakegpu.Process{{PID: 100, Name: "trainer", UsedMemory: 10 << 30}}},
		{Index: 2, GI: 3, CI: 0, Profile: "1c.2g.20gb", MemoryTotalMiB: 20096},
		{Index: 3, GI: 3, CI: 1, Profile: "1c.2g.20gb", MemoryTotalMiB: 20096},
	}}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	f := fakegpu.New(spec, fakegpu.GPUSpec{Model: "h100"})
	initFleet(t, f)
	return f
}

// migHandle returns the handle of the MIG device in slot of GPU 0.
func migHandle(t *testing.T, f *fakegpu.Fleet, slot int) nvml.Device {
	t.Helper()
	d, ret := handle(t, f, 0).GetMigDeviceHandleByIndex(slot)
	if ret != nvml.SUCCESS {
		t.Fatalf("GetMigDeviceHandleByIndex(%d) = %v", slot, ret)
	}
	return d
}

func TestMIGParent(t *testing.T) {
	f := migFleet(t)
	g := f.GPU(0)
	d := handle(t, f, 0)
	if cur, pend, ret := d.GetMigMode(); cur != 1 || pend != 1 || ret != nvml.SUCCESS {
		t.Errorf("GetMigMode = %d, %d, %v; want 1, 1", cur, pend, ret)
	}
	if n := must(d.GetMaxMigDeviceCount())(t, "GetMaxMigDeviceCount"); n != 7 {
		t.Errorf("GetMaxMigDeviceCount = %d, want 7", n)
	}
	if n := must(handle(t, f, 1).GetMaxMigDeviceCount())(t, "GetMaxMigDeviceCount"); n != 0 {
		t.Errorf("GetMaxMigDeviceCount without MIG = %d, want 0", n)
	}
	for _, tt := range []struct {
		gpu, slot int
		want      nvml.Return
	}{
		{0, 0, nvml.SUCCESS}, {0, 1, nvml.ERROR_NOT_FOUND}, {0, 2, nvml.SUCCESS}, {0, 3, nvml.SUCCESS},
		{0, 4, nvml.ERROR_NOT_FOUND}, {0, 6, nvml.ERROR_NOT_FOUND},
		{0, -1, nvml.ERROR_INVALID_ARGUMENT}, {0, 7, nvml.ERROR_INVALID_ARGUMENT},
		{1, 0, nvml.ERROR_NOT_SUPPORTED}, {1, 7, nvml.ERROR_NOT_SUPPORTED},
	} {
		m, ret := handle(t, f, tt.gpu).GetMigDeviceHandleByIndex(tt.slot)
		if ret != tt.want {
			t.Errorf("GPU %d GetMigDeviceHandleByIndex(%d) = %v, want %v", tt.gpu, tt.slot, ret, tt.want)
		}
		if (ret == nvml.SUCCESS) != (m != nil) {
			t.Errorf("GPU %d slot %d: handle %v with %v", tt.gpu, tt.slot, m, ret)
		}
		if ret == nvml.SUCCESS && m != f.GPU(tt.gpu).MIGDevice(tt.slot).Device() {
			t.Errorf("GPU %d slot %d: not MIGDevice(%d).Device()", tt.gpu, tt.slot, tt.slot)
		}
	}
	if is := must(d.IsMigDeviceHandle())(t, "IsMigDeviceHandle"); is {
		t.Error("the GPU's handle is a MIG handle")
	}
	for name, call := range map[string]func() nvml.Return{
		"GetDeviceHandleFromMigDeviceHandle": func() nvml.Return { _, r := d.GetDeviceHandleFromMigDeviceHandle(); return r },
		"GetGpuInstanceId":                   func() nvml.Return { _, r := d.GetGpuInstanceId(); return r },
		"GetComputeInstanceId":               func() nvml.Return { _, r := d.GetComputeInstanceId(); return r },
	} {
		if ret := call(); ret != nvml.ERROR_INVALID_ARGUMENT {
			t.Errorf("GPU %s = %v, want INVALID_ARGUMENT", name, ret)
		}
	}
	for name, call := range map[string]func() nvml.Return{
		"GetUtilizationRates":   func() nvml.Return { _, r := d.GetUtilizationRates(); return r },
		"GetProcessUtilization": func() nvml.Return { _, r := d.GetProcessUtilization(0); return r },
		"GetSamples":            func() nvml.Return { _, _, r := d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, 0); return r },
	} {
		if ret := call(); ret != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("GPU %s with MIG = %v, want NOT_SUPPORTED", name, ret)
		}
	}
	if got := g.MIGDevices(); len(got) != 3 || got[0].Slot() != 0 || got[1].Slot() != 2 || got[2].Slot() != 3 {
		t.Errorf("MIGDevices() slots wrong: %v", got)
	}
	if g.MIGDevice(1) != nil || g.MIGDevice(-1) != nil || g.MIGDevice(7) != nil {
		t.Error("MIGDevice of a free or invalid slot is not nil")
	}
}

func TestMIGParentProcessesAndMemory(t *testing.T) {
	f := migFleet(t)
	g, d := f.GPU(0), handle(t, f, 0)
	if err := g.StartProcess(fakegpu.Process{PID: 50, UsedMemory: fakegpu.MiB, GPUInstanceID: 7, ComputeInstanceID: 8}); err != nil {
		t.Fatal(err)
	}
	if err := g.StartProcess(fakegpu.Process{PID: 51, Type: fakegpu.Graphics, UsedMemory: 2 * fakegpu.MiB}); err != nil {
		t.Fatal(err)
	}
	if err := g.MIGDevice(3).StartProcess(fakegpu.Process{PID: 300, UsedMemory: 3 << 30}); err != nil {
		t.Fatal(err)
	}
	compute := must(d.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses")
	want := []nvml.ProcessInfo{
		{Pid: 100, UsedGpuMemory: 10 << 30, GpuInstanceId: 2, ComputeInstanceId: 0},
		{Pid: 50, UsedGpuMemory: fakegpu.MiB, GpuInstanceId: 7, ComputeInstanceId: 8},
		{Pid: 300, UsedGpuMemory: 3 << 30, GpuInstanceId: 3, ComputeInstanceId: 1},
	}
	if !slices.Equal(compute, want) {
		t.Errorf("parent compute processes = %+v, want %+v", compute, want)
	}
	if gr := must(d.GetGraphicsRunningProcesses())(t, "GetGraphicsRunningProcesses"); len(gr) != 1 || gr[0].Pid != 51 {
		t.Errorf("parent graphics processes = %+v, want PID 51 only", gr)
	}
	if got := len(g.Processes()); got != 4 {
		t.Errorf("GPU.Processes() has %d, want 4 (MIG devices' included)", got)
	}
	if name, _ := f.SystemGetProcessName(300); name != "python3" {
		t.Errorf("SystemGetProcessName(300) = %q", name)
	}
	if name, _ := f.SystemGetProcessName(100); name != "trainer" {
		t.Errorf("SystemGetProcessName(100) = %q", name)
	}

	used := func() uint64 { return must(d.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2").Used }
	if got, want := used(), uint64(10<<30+fakegpu.MiB+2*fakegpu.MiB+3<<30); got != want {
		t.Errorf("parent used = %d MiB, want %d MiB", got/fakegpu.MiB, want/fakegpu.MiB)
	}
	g.MIGDevice(0).SetMemoryUsed(1 << 30) // replaces PID 100's 10 GiB
	if got, want := used(), uint64(1<<30+fakegpu.MiB+2*fakegpu.MiB+3<<30); got != want {
		t.Errorf("after MIG SetMemoryUsed: parent used = %d MiB, want %d MiB", got/fakegpu.MiB, want/fakegpu.MiB)
	}
	g.SetMemoryUsed(5 << 30)
	if got := used(); got != 5<<30 {
		t.Errorf("after GPU SetMemoryUsed: parent used = %d MiB, want 5120", got/fakegpu.MiB)
	}
	g.StopProcess(300) // a MIG device's process, through the GPU
	if got := g.MIGDevice(3).Processes(); len(got) != 0 {
		t.Errorf("GPU.StopProcess left %+v on the MIG device", got)
	}
}

func TestMIGHandle(t *testing.T) {
	f := migFleet(t)
	g, parent := f.GPU(0), handle(t, f, 0)
	m0, m3 := migHandle(t, f, 0), migHandle(t, f, 3)
	if again := migHandle(t, f, 0); again != m0 {
		t.Error("a second GetMigDeviceHandleByIndex(0) gave another handle")
	}
	if m0 == m3 || m0 == parent {
		t.Error("MIG handles are not distinct")
	}
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("IsMigDeviceHandle", must(m0.IsMigDeviceHandle())(t, "IsMigDeviceHandle"), true)
	check("parent", must(m0.GetDeviceHandleFromMigDeviceHandle())(t, "GetDeviceHandleFromMigDeviceHandle"), parent)
	check("GI", must(m3.GetGpuInstanceId())(t, "GetGpuInstanceId"), 3)
	check("CI", must(m3.GetComputeInstanceId())(t, "GetComputeInstanceId"), 1)
	uuid := must(m0.GetUUID())(t, "GetUUID")
	check("UUID", uuid, g.MIGDevice(0).UUID())
	if !migUUIDRE.MatchString(uuid) {
		t.Errorf("UUID %q is not MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", uuid)
	}
	check("name", must(m0.GetName())(t, "GetName"), "NVIDIA H100 80GB HBM3 MIG 3g.40gb")
	check("name with a CI profile", must(m3.GetName())(t, "GetName"), "NVIDIA H100 80GB HBM3 MIG 1c.2g.20gb")

	total := uint64(40448) * fakegpu.MiB
	check("memory", must(m0.GetMemoryInfo())(t, "GetMemoryInfo"), nvml.Memory{Total: total, Used: 10 << 30, Free: total - 10<<30})
	v2 := must(m0.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2")
	check("memory v2", v2, nvml.Memory_v2{Version: v2.Version, Total: total, Used: 10 << 30, Free: total - 10<<30})
	if v2.Version == 0 {
		t.Error("Memory_v2 without a version")
	}
	g.MIGDevice(0).SetMemoryUsed(1 << 50) // capped at the total
	check("capped memory", must(m0.GetMemoryInfo())(t, "GetMemoryInfo").Free, uint64(0))
	bar1 := must(m0.GetBAR1MemoryInfo())(t, "GetBAR1MemoryInfo")
	if bar1.Bar1Total == 0 || bar1.Bar1Total >= g.Spec().BAR1Total || bar1.Bar1Used+bar1.Bar1Free != bar1.Bar1Total {
		t.Errorf("BAR1 = %+v", bar1)
	}

	check("attributes 3g", must(m0.GetAttributes())(t, "GetAttributes"), nvml.DeviceAttributes{
		MultiprocessorCount: 48, SharedCopyEngineCount: 3, SharedDecoderCount: 3, SharedJpegCount: 3,
		GpuInstanceSliceCount: 3, ComputeInstanceSliceCount: 3, MemorySizeMB: 40448})
	a3 := must(m3.GetAttributes())(t, "GetAttributes")
	check("attributes 1c.2g slices", [3]uint32{a3.GpuInstanceSliceCount, a3.ComputeInstanceSliceCount, a3.MultiprocessorCount}, [3]uint32{2, 1, 16})

	procs := must(m0.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses")
	check("MIG processes", len(procs), 1)
	check("MIG process", procs[0], nvml.ProcessInfo{Pid: 100, UsedGpuMemory: 10 << 30, GpuInstanceId: 2, ComputeInstanceId: 0})
	check("other MIG's processes", len(must(m3.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses")), 0)
	gr, ret := m0.GetGraphicsRunningProcesses()
	check("graphics processes", ret, nvml.SUCCESS)
	check("graphics processes", len(gr), 0)

	ppci := must(parent.GetPciInfo())(t, "GetPciInfo")
	check("PCI info", must(m0.GetPciInfo())(t, "GetPciInfo"), ppci)
	major, minor, _ := m0.GetCudaComputeCapability()
	check("compute capability", [2]int{major, minor}, [2]int{9, 0})
	check("architecture", must(m0.GetArchitecture())(t, "GetArchitecture"), nvml.DeviceArchitecture(nvml.DEVICE_ARCH_HOPPER))

	for name, call := range map[string]func() nvml.Return{
		"GetIndex":                  func() nvml.Return { _, r := m0.GetIndex(); return r },
		"GetMinorNumber":            func() nvml.Return { _, r := m0.GetMinorNumber(); return r },
		"GetSerial":                 func() nvml.Return { _, r := m0.GetSerial(); return r },
		"GetMigMode":                func() nvml.Return { _, _, r := m0.GetMigMode(); return r },
		"GetMaxMigDeviceCount":      func() nvml.Return { _, r := m0.GetMaxMigDeviceCount(); return r },
		"GetMigDeviceHandleByIndex": func() nvml.Return { _, r := m0.GetMigDeviceHandleByIndex(0); return r },
		"GetUtilizationRates":       func() nvml.Return { _, r := m0.GetUtilizationRates(); return r },
		"GetEncoderUtilization":     func() nvml.Return { _, _, r := m0.GetEncoderUtilization(); return r },
		"GetDecoderUtilization":     func() nvml.Return { _, _, r := m0.GetDecoderUtilization(); return r },
		"GetClockInfo":              func() nvml.Return { _, r := m0.GetClockInfo(nvml.CLOCK_SM); return r },
		"GetFanSpeed":               func() nvml.Return { _, r := m0.GetFanSpeed(); return r },
		"GetTemperature":            func() nvml.Return { _, r := m0.GetTemperature(nvml.TEMPERATURE_GPU); return r },
		"GetPowerUsage":             func() nvml.Return { _, r := m0.GetPowerUsage(); return r },
		"GetTotalEccErrors": func() nvml.Return {
			_, r := m0.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
			return r
		},
		"GetPerformanceState":   func() nvml.Return { _, r := m0.GetPerformanceState(); return r },
		"GetProcessUtilization": func() nvml.Return { _, r := m0.GetProcessUtilization(0); return r },
		"GetSamples":            func() nvml.Return { _, _, r := m0.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, 0); return r },
		"GetFieldValues": func() nvml.Return {
			return m0.GetFieldValues([]nvml.FieldValue{{FieldId: nvml.FI_DEV_POWER_INSTANT}})
		},
	} {
		if ret := call(); ret != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("MIG %s = %v, want NOT_SUPPORTED", name, ret)
		}
	}
	// The library-level twins forward to MIG handles too.
	if gi, ret := f.DeviceGetGpuInstanceId(m3); gi != 3 || ret != nvml.SUCCESS {
		t.Errorf("DeviceGetGpuInstanceId(MIG) = %d, %v", gi, ret)
	}
	if p, ret := f.DeviceGetDeviceHandleFromMigDeviceHandle(m3); p != parent || ret != nvml.SUCCESS {
		t.Errorf("DeviceGetDeviceHandleFromMigDeviceHandle(MIG) = %v, %v", p, ret)
	}
}

func TestMIGAttributesByModel(t *testing.T) {
	tests := []struct {
		model, profile string
		want           nvml.DeviceAttributes
	}{
		{"a100", "3g.40gb", nvml.DeviceAttributes{MultiprocessorCount: 42, SharedCopyEngineCount: 3, SharedDecoderCount: 2,
			GpuInstanceSliceCount: 3, ComputeInstanceSliceCount: 3, MemorySizeMB: 40000}},
		{"a100", "7g.80gb", nvml.DeviceAttributes{MultiprocessorCount: 98, SharedCopyEngineCount: 7, SharedDecoderCount: 5,
			SharedJpegCount: 1, SharedOfaCount: 1, GpuInstanceSliceCount: 7, ComputeInstanceSliceCount: 7, MemorySizeMB: 80000}},
		{"h200", "1g.18gb", nvml.DeviceAttributes{MultiprocessorCount: 16, SharedCopyEngineCount: 1, SharedDecoderCount: 1,
			SharedJpegCount: 1, GpuInstanceSliceCount: 1, ComputeInstanceSliceCount: 1, MemorySizeMB: 18000}},
		{"b200", "2c.4g.90gb", nvml.DeviceAttributes{MultiprocessorCount: 36, SharedCopyEngineCount: 4, SharedDecoderCount: 4,
			SharedJpegCount: 4, GpuInstanceSliceCount: 4, ComputeInstanceSliceCount: 2, MemorySizeMB: 90000}},
	}
	for _, tt := range tests {
		t.Run(tt.model+" "+tt.profile, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{Model: tt.model, MIGEnabled: true,
				MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: tt.profile}}})
			initFleet(t, f)
			if got := must(migHandle(t, f, 0).GetAttributes())(t, "GetAttributes"); got != tt.want {
				t.Errorf("attributes = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestMIGCallsAreCountedWithTheGPUs(t *testing.T) {
	f := migFleet(t)
	f.ResetCalls()
	handle(t, f, 0).GetUUID()
	m := migHandle(t, f, 0)
	m.GetUUID()
	m.GetTemperature(nvml.TEMPERATURE_GPU) // a stub counts too
	want := map[string]int{
		"DeviceGetHandleByIndex":           2,
		"Device.GetUUID":                   2,
		"Device.GetMigDeviceHandleByIndex": 1,
		"Device.GetTemperature":            1,
	}
	if got := f.Calls(); !maps.Equal(got, want) {
		t.Errorf("Calls() = %v, want %v", got, want)
	}
}

func TestMIGFaults(t *testing.T) {
	tests := []struct {
		name   string
		inject func(f *fakegpu.Fleet)
		call   func(m nvml.Device) nvml.Return
		want   nvml.Return // from slot 0's handle
		other  nvml.Return // from slot 3's
	}{
		{"a lost parent loses its MIG devices",
			func(f *fakegpu.Fleet) { f.GPU(0).Lose() },
			func(m nvml.Device) nvml.Return { _, r := m.GetUUID(); return r },
			nvml.ERROR_GPU_IS_LOST, nvml.ERROR_GPU_IS_LOST},
		{"the parent's Fail does not reach MIG devices",
			func(f *fakegpu.Fleet) { f.GPU(0).Fail("memory", nvml.ERROR_NO_PERMISSION) },
			func(m nvml.Device) nvml.Return { _, r := m.GetMemoryInfo(); return r },
			nvml.SUCCESS, nvml.SUCCESS},
		{"the parent's Unsupported does not reach MIG devices",
			func(f *fakegpu.Fleet) { f.GPU(0).Unsupported("name") },
			func(m nvml.Device) nvml.Return { _, r := m.GetName(); return r },
			nvml.SUCCESS, nvml.SUCCESS},
		{"MIG.Fail by metric",
			func(f *fakegpu.Fleet) { f.GPU(0).MIGDevice(0).Fail("memory", nvml.ERROR_NO_PERMISSION) },
			func(m nvml.Device) nvml.Return { _, r := m.GetMemoryInfo_v2(); return r },
			nvml.ERROR_NO_PERMISSION, nvml.SUCCESS},
		{"MIG.Fail by method",
			func(f *fakegpu.Fleet) { f.GPU(0).MIGDevice(0).Fail("GetGpuInstanceId", nvml.ERROR_UNKNOWN) },
			func(m nvml.Device) nvml.Return { _, r := m.GetGpuInstanceId(); return r },
			nvml.ERROR_UNKNOWN, nvml.SUCCESS},
		{"MIG.ClearFail",
			func(f *fakegpu.Fleet) {
				f.GPU(0).MIGDevice(0).Fail("uuid", nvml.ERROR_UNKNOWN)
				f.GPU(0).MIGDevice(0).ClearFail("uuid")
			},
			func(m nvml.Device) nvml.Return { _, r := m.GetUUID(); return r },
			nvml.SUCCESS, nvml.SUCCESS},
		{"MIG.Fail with SUCCESS clears",
			func(f *fakegpu.Fleet) {
				f.GPU(0).MIGDevice(0).Fail("uuid", nvml.ERROR_UNKNOWN)
				f.GPU(0).MIGDevice(0).Fail("uuid", nvml.SUCCESS)
			},
			func(m nvml.Device) nvml.Return { _, r := m.GetUUID(); return r },
			nvml.SUCCESS, nvml.SUCCESS},
		{"a removed device's handle is invalid",
			func(f *fakegpu.Fleet) { f.GPU(0).RemoveMIGDevice(0) },
			func(m nvml.Device) nvml.Return { _, r := m.IsMigDeviceHandle(); return r },
			nvml.ERROR_INVALID_ARGUMENT, nvml.SUCCESS},
		{"so is it after the parent is lost",
			func(f *fakegpu.Fleet) { f.GPU(0).RemoveMIGDevice(0); f.GPU(0).Lose() },
			func(m nvml.Device) nvml.Return { _, r := m.GetUUID(); return r },
			nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_GPU_IS_LOST},
		{"disabling MIG removes the devices",
			func(f *fakegpu.Fleet) { f.GPU(0).SetMIGMode(0, 0) },
			func(m nvml.Device) nvml.Return { _, r := m.GetUUID(); return r },
			nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_INVALID_ARGUMENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := migFleet(t)
			m0, m3 := migHandle(t, f, 0), migHandle(t, f, 3)
			tt.inject(f)
			if got := tt.call(m0); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if got := tt.call(m3); got != tt.other {
				t.Errorf("the other MIG device: %v, want %v", got, tt.other)
			}
		})
	}
}

func TestMIGRulesOfTheLibrary(t *testing.T) {
	t.Run("missing symbols", func(t *testing.T) {
		f := fakegpu.New(fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb"}}})
		f.MissingSymbols("nvmlDeviceGetGpuInstanceId")
		f.Init()
		defer f.Shutdown()
		if _, ret := f.GPU(0).MIGDevice(0).Device().GetGpuInstanceId(); ret != nvml.ERROR_FUNCTION_NOT_FOUND {
			t.Errorf("ret = %v, want FUNCTION_NOT_FOUND", ret)
		}
		want := "Device.GetGpuInstanceId called but the driver lacks nvmlDeviceGetGpuInstanceId"
		if v := f.Violations(); !slices.Equal(v, []string{want}) {
			t.Errorf("Violations() = %q, want [%q]", v, want)
		}
	})
	t.Run("calls without Init", func(t *testing.T) {
		f := fakegpu.New(fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb"}}})
		if _, ret := f.GPU(0).MIGDevice(0).Device().GetUUID(); ret != nvml.ERROR_UNINITIALIZED {
			t.Errorf("ret = %v, want UNINITIALIZED", ret)
		}
		if v := f.Violations(); !slices.Equal(v, []string{"Device.GetUUID called before Init"}) {
			t.Errorf("Violations() = %q", v)
		}
	})
	t.Run("a typo in MIG.Fail", func(t *testing.T) {
		f := fakegpu.New(fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb", Index: 2}}})
		f.GPU(0).MIGDevice(2).Fail("GetTemprature", nvml.ERROR_UNKNOWN)
		want := `fakegpu: GPU(0).MIGDevice(2).Fail: no nvml.Device method or metric named "GetTemprature"`
		if v := f.Violations(); !slices.Equal(v, []string{want}) {
			t.Errorf("Violations() = %q, want [%q]", v, want)
		}
	})
}

func TestMIGLookupByUUID(t *testing.T) {
	f := migFleet(t)
	g := f.GPU(0)
	m3 := g.MIGDevice(3)
	tests := []struct {
		name string
		uuid string
		want nvml.Device
		ret  nvml.Return
	}{
		{"a MIG UUID", m3.UUID(), m3.Device(), nvml.SUCCESS},
		{"the legacy form", "MIG-" + g.UUID() + "/3/1", m3.Device(), nvml.SUCCESS},
		{"the legacy form of another device", "MIG-" + g.UUID() + "/2/0", g.MIGDevice(0).Device(), nvml.SUCCESS},
		{"the legacy form with an unknown pair", "MIG-" + g.UUID() + "/3/2", nil, nvml.ERROR_NOT_FOUND},
		{"the legacy form of a GPU without MIG", "MIG-" + f.GPU(1).UUID() + "/2/0", nil, nvml.ERROR_NOT_FOUND},
		{"a malformed legacy form", "MIG-" + g.UUID() + "/3", nil, nvml.ERROR_NOT_FOUND},
		{"a legacy form with a bad ID", "MIG-" + g.UUID() + "/x/0", nil, nvml.ERROR_NOT_FOUND},
		{"an unknown MIG UUID", "MIG-00000000-0000-0000-0000-000000000000", nil, nvml.ERROR_NOT_FOUND},
		{"the GPU's UUID still", g.UUID(), g.Device(), nvml.SUCCESS},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ret := f.DeviceGetHandleByUUID(tt.uuid)
			if ret != tt.ret || d != tt.want {
				t.Errorf("DeviceGetHandleByUUID(%q) = %v, %v; want %v, %v", tt.uuid, d, ret, tt.want, tt.ret)
			}
		})
	}
	t.Run("a lost parent", func(t *testing.T) {
		g.Lose()
		for _, uuid := range []string{m3.UUID(), "MIG-" + g.UUID() + "/3/1"} {
			if d, ret := f.DeviceGetHandleByUUID(uuid); ret != nvml.ERROR_GPU_IS_LOST || d != m3.Device() {
				t.Errorf("DeviceGetHandleByUUID(%q) = %v, %v; want the handle and GPU_IS_LOST", uuid, d, ret)
			}
		}
	})
}

func TestMIGReconfiguration(t *testing.T) {
	f := migFleet(t)
	g := f.GPU(0)
	old := g.MIGDevice(0)
	oldHandle, oldUUID := old.Device(), old.UUID()

	g.RemoveMIGDevice(0)
	g.RemoveMIGDevice(1) // free: nothing happens
	g.RemoveMIGDevice(9) // invalid: nothing happens
	if _, ret := handle(t, f, 0).GetMigDeviceHandleByIndex(0); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("removed slot: %v, want NOT_FOUND", ret)
	}
	if _, ret := oldHandle.GetUUID(); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("old handle: %v, want INVALID_ARGUMENT", ret)
	}
	if _, ret := f.DeviceGetHandleByUUID(oldUUID); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("old UUID: %v, want NOT_FOUND", ret)
	}
	if _, ret := f.SystemGetProcessName(100); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("the removed device's process still runs: %v", ret)
	}
	if err := old.StartProcess(fakegpu.Process{PID: 5}); !errors.Is(err, fakegpu.ErrBadProcess) {
		t.Errorf("StartProcess on a removed device: %v", err)
	}

	m, err := g.AddMIGDevice(fakegpu.MIGSpec{Index: 0, GI: 2, Profile: "3g.40gb", MemoryTotalMiB: 40448,
		Processes: []fakegpu.Process{{PID: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	if m.Device() == oldHandle || m.UUID() == oldUUID || !migUUIDRE.MatchString(m.UUID()) {
		t.Errorf("the new device reuses the old handle or UUID (%s)", m.UUID())
	}
	if got := migHandle(t, f, 0); got != m.Device() {
		t.Error("slot 0 does not answer the new device")
	}
	if _, ret := oldHandle.GetUUID(); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("old handle after the slot was reused: %v, want INVALID_ARGUMENT", ret)
	}
	if m.Parent() != g || m.GI() != 2 || m.CI() != 0 || m.Profile() != "3g.40gb" || m.Slot() != 0 || m.MemoryTotal() != 40448*fakegpu.MiB {
		t.Errorf("new device = GI %d CI %d %s slot %d", m.GI(), m.CI(), m.Profile(), m.Slot())
	}
	if p := m.Processes(); len(p) != 1 || p[0].GPUInstanceID != 2 || p[0].ComputeInstanceID != 0 {
		t.Errorf("new device processes = %+v", p)
	}

	auto, err := g.AddMIGDevice(fakegpu.MIGSpec{Index: -1, GI: 9, Profile: "1g.10gb", UUID: "MIG-AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee"})
	if err != nil {
		t.Fatal(err)
	}
	if auto.Slot() != 1 || auto.UUID() != "MIG-AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee" {
		t.Errorf("Index -1 took slot %d, UUID %s; want the lowest free, 1, and the given UUID", auto.Slot(), auto.UUID())
	}
	if d, ret := f.DeviceGetHandleByUUID(auto.UUID()); ret != nvml.SUCCESS || d != auto.Device() {
		t.Errorf("lookup of an added device: %v", ret)
	}

	g.SetMIGMode(1, 0) // pending disable: the devices stay
	if len(g.MIGDevices()) != 4 {
		t.Errorf("a pending disable removed MIG devices")
	}
	g.SetMIGMode(0, 0)
	if len(g.MIGDevices()) != 0 || len(g.Processes()) != 0 {
		t.Errorf("disabling MIG left %d devices, %d processes", len(g.MIGDevices()), len(g.Processes()))
	}
	if _, err := g.AddMIGDevice(fakegpu.MIGSpec{GI: 1, Profile: "1g.10gb"}); !errors.Is(err, fakegpu.ErrBadMIG) || !strings.Contains(err.Error(), "MIG is disabled") {
		t.Errorf("AddMIGDevice with MIG disabled: %v", err)
	}
	g.SetMIGMode(1, 1)
	if m, err := g.AddMIGDevice(fakegpu.MIGSpec{GI: 1, Profile: "1g.10gb"}); err != nil || m.Slot() != 0 {
		t.Errorf("AddMIGDevice after re-enabling MIG: %v", err)
	}
}

func TestAddMIGDeviceErrors(t *testing.T) {
	tests := []struct {
		name string
		spec fakegpu.MIGSpec
		want string
	}{
		{"a taken slot", fakegpu.MIGSpec{Index: 2, GI: 5, Profile: "1g.10gb"}, "MIGSpec.Index: 2 is also the index of an existing MIG device"},
		{"an index past the last", fakegpu.MIGSpec{Index: 7, GI: 5, Profile: "1g.10gb"}, "MIGSpec.Index: want a MIG device index 0..6, got 7"},
		{"a taken instance pair", fakegpu.MIGSpec{Index: 1, GI: 3, CI: 1, Profile: "1c.2g.20gb"}, "MIGSpec.CI: GPU instance 3, compute instance 1 is also that of an existing MIG device"},
		{"a taken UUID", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g.10gb", UUID: "MIG-11111111-2222-3333-4444-555555555555"}, "MIGSpec.UUID:"},
		{"a UUID of another GPU's device", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g.10gb", UUID: "MIG-99999999-2222-3333-4444-555555555555"}, "also the UUID of GPU 1 MIG device 0"},
		{"a malformed UUID", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g.10gb", UUID: "GPU-11111111-2222-3333-4444-555555555555"}, "MIGSpec.UUID: want MIG-"},
		{"a bad profile", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g"}, `MIGSpec.Profile: want a profile like "1g.10gb" or "1c.3g.40gb" (at most 7 GPU slices), got "1g"`},
		{"too much memory", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "3g.40gb"}, "MIGSpec.MemoryTotalMiB: the GPU instances would have 100592 MiB, more than the GPU's 81920 MiB"},
		{"a negative GI", fakegpu.MIGSpec{Index: 1, GI: -1, Profile: "1g.10gb"}, "MIGSpec.GI: want 0..65535, got -1"},
		{"a graphics process", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 9, Type: fakegpu.Graphics}}},
			`MIGSpec.Processes[0].Type: want "C": MIG devices run only compute processes, got "G"`},
		{"a PID running on the GPU", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 100}}},
			"MIGSpec.Processes[0].PID: 100 is already running on this GPU"},
		{"a bad process", fakegpu.MIGSpec{Index: 1, GI: 5, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 0}}},
			"MIGSpec.Processes[0].PID: want a non-zero PID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(
				fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
					{Index: 0, GI: 2, Profile: "3g.40gb", MemoryTotalMiB: 40448, Processes: []fakegpu.Process{{PID: 100}}},
					{Index: 2, GI: 3, CI: 1, Profile: "1c.2g.20gb", MemoryTotalMiB: 20144, UUID: "MIG-11111111-2222-3333-4444-555555555555"},
				}},
				fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb", UUID: "MIG-99999999-2222-3333-4444-555555555555"}}},
			)
			m, err := f.GPU(0).AddMIGDevice(tt.spec)
			if m != nil || !errors.Is(err, fakegpu.ErrBadMIG) {
				t.Fatalf("AddMIGDevice = %v, %v; want an ErrBadMIG", m, err)
			}
			if want := "fakegpu: bad MIG device: GPU 0: "; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q…%q", err, want, tt.want)
			}
			if n := len(f.GPU(0).MIGDevices()); n != 2 {
				t.Errorf("a failed AddMIGDevice left %d devices", n)
			}
		})
	}
	t.Run("no free slot", func(t *testing.T) {
		f := fakegpu.New(fakegpu.GPUSpec{MIGEnabled: true})
		for gi := 0; gi < 7; gi++ {
			if _, err := f.GPU(0).AddMIGDevice(fakegpu.MIGSpec{Index: -1, GI: gi + 7, Profile: "1g.10gb"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.GPU(0).AddMIGDevice(fakegpu.MIGSpec{Index: -1, GI: 1, Profile: "1g.10gb"}); err == nil || !strings.Contains(err.Error(), "no free MIG device index") {
			t.Errorf("an eighth device: %v", err)
		}
	})
}

func TestMIGProcesses(t *testing.T) {
	f := migFleet(t)
	m := f.GPU(0).MIGDevice(2)
	for _, tt := range []struct {
		p    fakegpu.Process
		want string
	}{
		{fakegpu.Process{PID: 100}, "already running"},
		{fakegpu.Process{PID: 7, Type: fakegpu.ComputeGraphics}, `want "C"`},
		{fakegpu.Process{PID: 7, SM: 101}, "0..100"},
	} {
		if err := m.StartProcess(tt.p); !errors.Is(err, fakegpu.ErrBadProcess) || !strings.Contains(err.Error(), tt.want) ||
			!strings.Contains(err.Error(), "GPU 0 MIG device 2") {
			t.Errorf("StartProcess(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
	if err := m.StartProcess(fakegpu.Process{PID: 7, Type: fakegpu.Compute, GPUInstanceID: 99, UsedMemory: fakegpu.MiB}); err != nil {
		t.Fatal(err)
	}
	if err := m.StartProcess(fakegpu.Process{PID: 8, UsedMemory: fakegpu.NotAvailable}); err != nil {
		t.Fatal(err)
	}
	want := []fakegpu.Process{
		{PID: 7, Type: fakegpu.Compute, GPUInstanceID: 3, ComputeInstanceID: 0, UsedMemory: fakegpu.MiB},
		{PID: 8, GPUInstanceID: 3, UsedMemory: fakegpu.NotAvailable},
	}
	if got := m.Processes(); !slices.Equal(got, want) {
		t.Errorf("Processes() = %+v, want %+v", got, want)
	}
	if mem := must(m.Device().GetMemoryInfo())(t, "GetMemoryInfo"); mem.Used != fakegpu.MiB {
		t.Errorf("used = %d, want 1 MiB (N/A not counted)", mem.Used)
	}
	m.StopProcess(7)
	m.StopProcess(100) // another device's: untouched
	if got := m.Processes(); len(got) != 1 || got[0].PID != 8 {
		t.Errorf("after StopProcess: %+v", got)
	}
	if len(f.GPU(0).MIGDevice(0).Processes()) != 1 {
		t.Error("StopProcess stopped another device's process")
	}
}

func TestMIGSpecValidate(t *testing.T) {
	ok := func(slot, gi int, profile string) fakegpu.MIGSpec {
		return fakegpu.MIGSpec{Index: slot, GI: gi, Profile: profile}
	}
	tests := []struct {
		name string
		spec fakegpu.GPUSpec
		want string // "" for valid
	}{
		{"no MIG", fakegpu.GPUSpec{}, ""},
		{"MIG without devices", fakegpu.GPUSpec{MIGEnabled: true}, ""},
		{"devices by position", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "1g.10gb"), ok(0, 2, "1g.10gb")}}, ""},
		{"devices without MIG", fakegpu.GPUSpec{MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "1g.10gb")}},
			"fakegpu: GPUSpec.MIGDevices: MIG devices need MIGEnabled"},
		{"a repeated slot", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(1, 1, "1g.10gb"), ok(1, 2, "1g.10gb")}},
			"fakegpu: GPUSpec.MIGDevices[1].Index: 1 is also the index of MIG device 0"},
		{"a slot past the last", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(7, 1, "1g.10gb")}},
			"fakegpu: GPUSpec.MIGDevices[0].Index: want a MIG device index 0..6, got 7"},
		{"a negative slot", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(-1, 1, "1g.10gb")}},
			"got -1"},
		{"a repeated instance pair", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "1g.10gb"), ok(1, 1, "1g.10gb")}},
			"fakegpu: GPUSpec.MIGDevices[1].CI: GPU instance 1, compute instance 0 is also that of MIG device 0"},
		{"a repeated UUID in another case", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
			{Index: 0, GI: 1, Profile: "1g.10gb", UUID: "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"},
			{Index: 1, GI: 2, Profile: "1g.10gb", UUID: "MIG-AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee"}}},
			`fakegpu: GPUSpec.MIGDevices[1].UUID: "MIG-AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee" is also the UUID of MIG device 0`},
		{"a GPU UUID", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb", UUID: "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}}},
			"MIGDevices[0].UUID: want MIG-"},
		{"memory beyond the GPU's", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "4g.40gb"), ok(1, 2, "4g.41gb")}},
			"fakegpu: GPUSpec.MIGDevices[1].MemoryTotalMiB: the GPU instances would have 81000 MiB, more than the GPU's 80000 MiB"},
		{"memory beyond a set total", fakegpu.GPUSpec{MemoryTotal: 10000 * fakegpu.MiB, MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb", MemoryTotalMiB: 10001}}},
			"more than the GPU's 10000 MiB"},
		{"a shared GPU instance counts once", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
			{Index: 0, GI: 1, CI: 0, Profile: "1c.7g.80gb"}, {Index: 1, GI: 1, CI: 1, Profile: "6c.7g.80gb"}}}, ""},
		{"a profile of 8 slices", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "8g.80gb")}}, `MIGDevices[0].Profile: want a profile like`},
		{"more compute slices than GPU slices", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "3c.2g.20gb")}}, `got "3c.2g.20gb"`},
		{"a profile without memory", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "1g")}}, `got "1g"`},
		{"a profile in upper case", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "1G.10GB")}}, `got "1G.10GB"`},
		{"a media-extension profile", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{ok(0, 1, "1g.10gb+me")}}, `got "1g.10gb+me"`},
		{"an empty profile", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1}}}, `got ""`},
		{"a graphics process", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
			{GI: 1, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 1}, {PID: 2, Type: fakegpu.Graphics}}}}},
			`fakegpu: GPUSpec.MIGDevices[0].Processes[1].Type: want "C"`},
		{"a PID on two devices", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
			{Index: 0, GI: 1, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 1}}},
			{Index: 1, GI: 2, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 1}}}}},
			"fakegpu: GPUSpec.MIGDevices[1].Processes[0].PID: 1 is already running on this GPU"},
		{"processes beyond the memory", fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
			{GI: 1, Profile: "1g.10gb", Processes: []fakegpu.Process{{PID: 1, UsedMemory: 20 << 30}}}}},
			"fakegpu: GPUSpec.MIGDevices[0].Processes: the processes use 20480 MiB, more than the device's 10000 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.MemoryTotal == 0 {
				tt.spec.MemoryTotal = 80000 * fakegpu.MiB
			}
			err := tt.spec.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
			// New never fails: it leaves out what it cannot use.
			f := fakegpu.New(tt.spec)
			if tt.want == "" && len(f.GPU(0).MIGDevices()) != len(tt.spec.MIGDevices) {
				t.Errorf("New made %d MIG devices of %d", len(f.GPU(0).MIGDevices()), len(tt.spec.MIGDevices))
			}
		})
	}
}

func TestNewFixesBadMIGLayouts(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
		{Index: 1, GI: 1, Profile: "1g.10gb", UUID: "not a UUID", Processes: []fakegpu.Process{{PID: 1}, {PID: 2, Type: fakegpu.Graphics}, {PID: 1}}},
		{Index: 1, GI: 2, Profile: "1g.10gb"}, // slot taken: left out
		{Index: 2, GI: 3, Profile: "bad"},     // left out
		{Index: 3, GI: 1, Profile: "2g.20gb"}, // pair taken: left out
		{Index: 4, GI: 4, Profile: "7g.80gb"}, // too big: left out
		{Index: 5, GI: 5, CI: 2, Profile: "1g.5gb"},
	}}, fakegpu.GPUSpec{MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb"}}})
	ms := f.GPU(0).MIGDevices()
	if len(ms) != 2 || ms[0].Slot() != 1 || ms[1].Slot() != 5 {
		t.Fatalf("New kept %d devices", len(ms))
	}
	if !migUUIDRE.MatchString(ms[0].UUID()) {
		t.Errorf("bad UUID not derived: %q", ms[0].UUID())
	}
	if p := ms[0].Processes(); len(p) != 1 || p[0].PID != 1 {
		t.Errorf("processes kept: %+v", p)
	}
	if ms[1].MemoryTotal() != 5000*fakegpu.MiB {
		t.Errorf("default memory = %d MiB, want 5000", ms[1].MemoryTotal()/fakegpu.MiB)
	}
	if len(f.GPU(1).MIGDevices()) != 0 {
		t.Error("a GPU without MIG got MIG devices")
	}
	if len(f.GPU(0).Spec().MIGDevices) != 2 {
		t.Errorf("Spec().MIGDevices = %+v", f.GPU(0).Spec().MIGDevices)
	}
}

func TestMIGIdentityIsDerived(t *testing.T) {
	specs := []fakegpu.GPUSpec{{}, {MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb"}, {GI: 2, Profile: "1g.10gb"}}}}
	a, b := fakegpu.New(specs...), fakegpu.New(specs...)
	am, bm := a.GPU(1).MIGDevices(), b.GPU(1).MIGDevices()
	if len(am) != 2 || am[0].UUID() != bm[0].UUID() || am[1].UUID() != bm[1].UUID() {
		t.Fatal("two New calls derived different MIG UUIDs")
	}
	if am[0].UUID() == am[1].UUID() || !migUUIDRE.MatchString(am[0].UUID()) {
		t.Errorf("derived UUIDs %q, %q", am[0].UUID(), am[1].UUID())
	}
	p, _ := fakegpu.Preset("dgx-h100-mig")
	q, _ := fakegpu.Preset("dgx-a100-mig")
	if p.GPU(0).MIGDevice(0).UUID() == q.GPU(0).MIGDevice(0).UUID() {
		t.Error("two presets have the same MIG UUID")
	}
	spec := a.GPU(1).Spec()
	spec.MIGDevices[0].Processes = append(spec.MIGDevices[0].Processes, fakegpu.Process{PID: 9})
	spec.MIGDevices[0].GI = 99
	if s := a.GPU(1).Spec(); s.MIGDevices[0].GI != 1 || len(s.MIGDevices[0].Processes) != 0 || s.MIGDevices[0].UUID != am[0].UUID() {
		t.Errorf("Spec() shares its MIG devices: %+v", s.MIGDevices[0])
	}
}

func TestMIGPresets(t *testing.T) {
	type dev struct {
		slot, gi, ci int
		profile      string
		mib          uint64
		pids         []uint32
		uuid         string // pinned: tests elsewhere may name it
	}
	tests := []struct {
		preset string
		gpu0   []dev
	}{
		{"dgx-a100-mig", []dev{
			{0, 2, 0, "3g.40gb", 40192, []uint32{4194404}, "MIG-9eba595e-0c30-93f9-7ca9-21408cda6c64"},
			{1, 3, 0, "2g.20gb", 19968, nil, "MIG-e72f90b4-a3d7-783c-7a02-f42b775f82ea"},
			{3, 9, 0, "1g.10gb", 9728, nil, "MIG-168f7e6b-b0a8-6f2f-200a-260cb35dab96"}}},
		{"dgx-h100-mig", []dev{
			{0, 2, 0, "3g.40gb", 40448, []uint32{4194404}, "MIG-3f1b6608-8661-73a2-1a03-1a2c53266250"},
			{1, 3, 0, "2g.20gb", 20096, nil, "MIG-50a9fd3d-60f6-6af2-1e02-4b157cf217b9"},
			{3, 9, 0, "1g.10gb", 9984, nil, "MIG-94821082-5e18-3b98-b4f5-ad1b495dfc86"}}},
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			f := preset(t, tt.preset)
			base, _ := fakegpu.Preset(strings.TrimSuffix(tt.preset, "-mig"))
			d0 := handle(t, f, 0)
			for slot := 0; slot < 7; slot++ {
				m, ret := d0.GetMigDeviceHandleByIndex(slot)
				i := slices.IndexFunc(tt.gpu0, func(d dev) bool { return d.slot == slot })
				if i < 0 {
					if ret != nvml.ERROR_NOT_FOUND {
						t.Errorf("slot %d: %v, want NOT_FOUND", slot, ret)
					}
					continue
				}
				want := tt.gpu0[i]
				if ret != nvml.SUCCESS {
					t.Fatalf("slot %d: %v", slot, ret)
				}
				if uuid := must(m.GetUUID())(t, "GetUUID"); uuid != want.uuid {
					t.Errorf("slot %d UUID %q, want %q", slot, uuid, want.uuid)
				}
				if gi, _ := m.GetGpuInstanceId(); gi != want.gi {
					t.Errorf("slot %d GI = %d, want %d", slot, gi, want.gi)
				}
				if ci, _ := m.GetComputeInstanceId(); ci != want.ci {
					t.Errorf("slot %d CI = %d, want %d", slot, ci, want.ci)
				}
				if name, _ := m.GetName(); name != base.GPU(0).Name()+" MIG "+want.profile {
					t.Errorf("slot %d name = %q", slot, name)
				}
				if mem, _ := m.GetMemoryInfo(); mem.Total != want.mib*fakegpu.MiB {
					t.Errorf("slot %d memory = %d MiB, want %d", slot, mem.Total/fakegpu.MiB, want.mib)
				}
				var pids []uint32
				for _, p := range must(m.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses") {
					pids = append(pids, p.Pid)
					if p.GpuInstanceId != uint32(want.gi) || p.ComputeInstanceId != uint32(want.ci) {
						t.Errorf("slot %d process %+v", slot, p)
					}
				}
				if !slices.Equal(pids, want.pids) {
					t.Errorf("slot %d PIDs = %v, want %v", slot, pids, want.pids)
				}
			}
			d1 := handle(t, f, 1)
			if cur, _, _ := d1.GetMigMode(); cur != 1 {
				t.Errorf("GPU 1 MIG mode = %d, want 1", cur)
			}
			for slot := 0; slot < 7; slot++ {
				if _, ret := d1.GetMigDeviceHandleByIndex(slot); ret != nvml.ERROR_NOT_FOUND {
					t.Errorf("GPU 1 slot %d: %v, want NOT_FOUND", slot, ret)
				}
			}
			if n, _ := d1.GetMaxMigDeviceCount(); n != 7 {
				t.Errorf("GPU 1 max MIG devices = %d", n)
			}
			for i := 2; i < 8; i++ {
				if cur, _, _ := handle(t, f, i).GetMigMode(); cur != 0 {
					t.Errorf("GPU %d has MIG", i)
				}
				if got, want := len(f.GPU(i).Processes()), len(base.GPU(i).Processes()); got != want {
					t.Errorf("GPU %d has %d processes, the base preset %d", i, got, want)
				}
			}
			if len(f.GPU(1).Processes()) != 0 {
				t.Errorf("GPU 1 (MIG, no devices) runs %+v", f.GPU(1).Processes())
			}
		})
	}
}

func TestEveryMIGMethodAnswersWithoutPanicking(t *testing.T) {
	f, _ := fakegpu.Preset("dgx-h100-mig")
	f.Init()
	m := f.GPU(0).MIGDevice(0).Device()
	callAll(t, m, nil)
	f.GPU(0).RemoveMIGDevice(0)
	callAll(t, m, nil) // a stale handle
	f.GPU(0).Lose()
	callAll(t, f.GPU(0).MIGDevice(1).Device(), nil)
	f.Shutdown()
	if v := f.Violations(); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

// TestConcurrentMIGReconfiguration is meant for -race: readers walk the MIG
// devices while writers add and remove them.
func TestConcurrentMIGReconfiguration(t *testing.T) {
	f := preset(t, "dgx-h100-mig")
	var readers, writers sync.WaitGroup
	stop := make(chan struct{})
	for r := 0; r < 3; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 2; i++ {
					d, _ := f.DeviceGetHandleByIndex(i)
					d.GetComputeRunningProcesses()
					d.GetMemoryInfo_v2()
					for slot := 0; slot < 7; slot++ {
						if m, ret := d.GetMigDeviceHandleByIndex(slot); ret == nvml.SUCCESS {
							m.GetMemoryInfo()
							m.GetComputeRunningProcesses()
							if uuid, ret := m.GetUUID(); ret == nvml.SUCCESS {
								f.DeviceGetHandleByUUID(uuid)
							}
						}
					}
				}
				for _, m := range f.GPU(1).MIGDevices() {
					m.Processes()
				}
			}
		}()
	}
	for w := 0; w < 2; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			g := f.GPU(1)
			for i := 0; i < 100; i++ {
				m, err := g.AddMIGDevice(fakegpu.MIGSpec{Index: -1, GI: 7 + w*3 + i%3, Profile: "1g.10gb"})
				if err != nil {
					continue // another writer took the pair
				}
				m.StartProcess(fakegpu.Process{PID: uint32(1000 + w*1000 + i), UsedMemory: fakegpu.MiB})
				m.SetMemoryUsed(2 * fakegpu.MiB)
				m.Fail("memory", nvml.ERROR_TIMEOUT)
				m.ClearFail("memory")
				g.RemoveMIGDevice(m.Slot())
			}
		}(w)
	}
	writers.Wait()
	close(stop)
	readers.Wait()
}

func TestMIGScenario(t *testing.T) {
	h100mig, _ := fakegpu.Preset("dgx-h100-mig")
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, f *fakegpu.Fleet)
	}{
		{"indices default to positions, and may leave gaps", `{"gpus": [{"mig_enabled": true, "mig_devices": [
			{"gi": 7, "profile": "1g.10gb"}, {"gi": 8, "profile": "1g.10gb"}, {"gi": 2, "profile": "3g.40gb", "index": 4}]}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				var slots []int
				for _, m := range f.GPU(0).MIGDevices() {
					slots = append(slots, m.Slot())
				}
				if !slices.Equal(slots, []int{0, 1, 4}) {
					t.Errorf("slots = %v, want [0 1 4]", slots)
				}
				if m := f.GPU(0).MIGDevice(4); m.MemoryTotal() != 40000*fakegpu.MiB || m.CI() != 0 || !migUUIDRE.MatchString(m.UUID()) {
					t.Errorf("slot 4 = %d MiB CI %d %s", m.MemoryTotal()/fakegpu.MiB, m.CI(), m.UUID())
				}
			}},
		{"mig_mode 1 is mig_enabled", `{"gpus": [{"mig_mode": 1, "mig_devices": [{"gi": 1, "profile": "1g.10gb"}]}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if len(f.GPU(0).MIGDevices()) != 1 {
					t.Error("no MIG device")
				}
			}},
		{"MIG enabled without devices", `{"gpus": [{"mig_enabled": true}, {"mig_enabled": false, "mig_devices": []}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if cur, pend, _ := f.GPU(0).Device().GetMigMode(); cur != 1 || pend != 1 {
					t.Errorf("GPU 0 MIG mode %d/%d", cur, pend)
				}
				if cur, _, _ := f.GPU(1).Device().GetMigMode(); cur != 0 {
					t.Errorf("GPU 1 MIG mode %d", cur)
				}
			}},
		{"a MIG preset as it is", `{"preset": "dgx-h100-mig"}`, func(t *testing.T, f *fakegpu.Fleet) {
			for slot := 0; slot < 7; slot++ {
				a, b := f.GPU(0).MIGDevice(slot), h100mig.GPU(0).MIGDevice(slot)
				if (a == nil) != (b == nil) || a != nil && (a.UUID() != b.UUID() || a.Profile() != b.Profile()) {
					t.Errorf("slot %d differs from the preset", slot)
				}
			}
		}},
		{"other keys keep a preset's MIG devices", `{"preset": "dgx-h100-mig", "gpus": [{"temperature_c": 50}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if len(f.GPU(0).MIGDevices()) != 3 || len(f.GPU(0).MIGDevice(0).Processes()) != 1 {
					t.Error("the preset's MIG devices or their process are gone")
				}
			}},
		{"processes replace a preset GPU's own, not its MIG devices'", `{"preset": "dgx-h100-mig", "gpus": [{"processes": [{"pid": 5}]}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				var pids []uint32
				for _, p := range f.GPU(0).Processes() {
					pids = append(pids, p.PID)
				}
				if !slices.Equal(pids, []uint32{4194404, 5}) {
					t.Errorf("PIDs = %v, want [4194404 5]", pids)
				}
			}},
		{"mig_devices replace a preset's", `{"preset": "dgx-h100-mig", "gpus": [{"mig_devices": [{"gi": 1, "profile": "7g.80gb", "memory_total_mib": 81152}]}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				ms := f.GPU(0).MIGDevices()
				if len(ms) != 1 || ms[0].Profile() != "7g.80gb" || len(f.GPU(0).Processes()) != 0 {
					t.Errorf("MIG devices = %v, %d processes", ms, len(f.GPU(0).Processes()))
				}
			}},
		{"an empty mig_devices clears a preset's", `{"preset": "dgx-h100-mig", "gpus": [{"mig_devices": []}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if len(f.GPU(0).MIGDevices()) != 0 {
					t.Error("MIG devices left")
				}
				if cur, _, _ := f.GPU(0).Device().GetMigMode(); cur != 1 {
					t.Error("MIG disabled")
				}
			}},
		{"disabling MIG on a preset GPU drops its devices; it gets the base preset's load", `{"preset": "dgx-h100-mig", "gpus": [{"mig_enabled": false}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if len(f.GPU(0).MIGDevices()) != 0 {
					t.Error("MIG devices left")
				}
				if p := f.GPU(0).Processes(); len(p) != 1 || p[0].PID != 4194401 {
					t.Errorf("processes = %+v, want the base preset's 4194401", p)
				}
			}},
		{"enabling MIG on a preset GPU leaves it without a process of its own", `{"preset": "dgx-h100", "gpus": [{"mig_mode": 1}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if p := f.GPU(0).Processes(); len(p) != 0 {
					t.Errorf("processes = %+v, want none", p)
				}
			}},
		{"a new model drops a preset's MIG layout", `{"preset": "dgx-h100-mig", "gpus": [{"model": "a100"}]}`,
			func(t *testing.T, f *fakegpu.Fleet) {
				if len(f.GPU(0).MIGDevices()) != 0 || f.GPU(0).Name() != "NVIDIA A100-SXM4-80GB" {
					t.Error("MIG devices left")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fakegpu.ParseScenario([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			initFleet(t, f)
			tt.check(t, f)
		})
	}
}
