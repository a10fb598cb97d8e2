//go:build cgo

package fakegpu_test

import (
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

func TestMemoryInfo(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	initFleet(t, f)
	g, d := f.GPU(0), handle(t, f, 0)
	total := uint64(81920) * fakegpu.MiB
	reserved := uint64(409) * fakegpu.MiB // 0.5%, whole MiB

	tests := []struct {
		name      string
		setup     func()
		allocated uint64
	}{
		{"an idle GPU has only reserved memory in use", func() {}, 0},
		{"processes add their memory", func() {
			g.StartProcess(fakegpu.Process{PID: 1, UsedMemory: 1 << 30})
			g.StartProcess(fakegpu.Process{PID: 2, UsedMemory: fakegpu.NotAvailable})
			g.StartProcess(fakegpu.Process{PID: 3, Type: fakegpu.Graphics, UsedMemory: 512 * fakegpu.MiB})
		}, 1<<30 + 512*fakegpu.MiB},
		{"SetMemoryUsed overrides the sum", func() { g.SetMemoryUsed(10 << 30) }, 10 << 30},
		{"SetMemoryUsed is capped at the usable memory", func() { g.SetMemoryUsed(1 << 50) }, total - reserved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup()
			v2 := must(d.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2")
			want2 := nvml.Memory_v2{Version: v2.Version, Total: total, Reserved: reserved, Used: tt.allocated, Free: total - reserved - tt.allocated}
			if v2 != want2 || v2.Version == 0 {
				t.Errorf("v2 = %+v, want %+v", v2, want2)
			}
			v1 := must(d.GetMemoryInfo())(t, "GetMemoryInfo")
			want1 := nvml.Memory{Total: total, Used: reserved + tt.allocated, Free: total - reserved - tt.allocated}
			if v1 != want1 {
				t.Errorf("v1 = %+v, want %+v", v1, want1)
			}
		})
	}
}

func TestDeviceReportsWhatWasSet(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{Model: "a100"})
	initFleet(t, f)
	g, d := f.GPU(0), handle(t, f, 0)
	g.SetUtilization(55, 120) // clamped
	g.SetEncoderDecoder(7, 9)
	g.SetTemperature(71)
	g.SetPower(250_000, 300_000)
	g.SetClocks(1200, 1210, 1593, 1100)
	g.SetMaxClocks(1410, 1411, 1593, 1290)
	g.SetPState(2)
	g.SetComputeMode(nvml.COMPUTEMODE_EXCLUSIVE_PROCESS)
	g.SetPersistence(false)
	g.SetDisplay(true, true)
	g.SetECCErrors(3)
	g.SetPCIe(1000, 2000)
	g.SetBAR1Used(64 * fakegpu.MiB)

	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("utilization", must(d.GetUtilizationRates())(t, "GetUtilizationRates"), nvml.Utilization{Gpu: 55, Memory: 100})
	enc, period, _ := d.GetEncoderUtilization()
	check("encoder", enc, uint32(7))
	check("sampling period", period, uint32(167000))
	dec, _, _ := d.GetDecoderUtilization()
	check("decoder", dec, uint32(9))
	check("temperature", must(d.GetTemperature(nvml.TEMPERATURE_GPU))(t, "GetTemperature"), uint32(71))
	check("power", must(d.GetPowerUsage())(t, "GetPowerUsage"), uint32(250_000))
	check("limit", must(d.GetPowerManagementLimit())(t, "GetPowerManagementLimit"), uint32(300_000))
	check("enforced limit", must(d.GetEnforcedPowerLimit())(t, "GetEnforcedPowerLimit"), uint32(300_000))
	check("default limit", must(d.GetPowerManagementDefaultLimit())(t, "GetPowerManagementDefaultLimit"), uint32(400_000))
	check("SM clock", must(d.GetClockInfo(nvml.CLOCK_SM))(t, "GetClockInfo"), uint32(1210))
	check("video clock", must(d.GetClockInfo(nvml.CLOCK_VIDEO))(t, "GetClockInfo"), uint32(1100))
	check("max SM clock", must(d.GetMaxClockInfo(nvml.CLOCK_SM))(t, "GetMaxClockInfo"), uint32(1411))
	check("pstate", must(d.GetPerformanceState())(t, "GetPerformanceState"), nvml.PSTATE_2)
	check("compute mode", must(d.GetComputeMode())(t, "GetComputeMode"), nvml.COMPUTEMODE_EXCLUSIVE_PROCESS)
	check("persistence", must(d.GetPersistenceMode())(t, "GetPersistenceMode"), nvml.FEATURE_DISABLED)
	check("display active", must(d.GetDisplayActive())(t, "GetDisplayActive"), nvml.FEATURE_ENABLED)
	check("display mode", must(d.GetDisplayMode())(t, "GetDisplayMode"), nvml.FEATURE_ENABLED)
	check("ECC", must(d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC))(t, "GetTotalEccErrors"), uint64(3))
	check("corrected ECC", must(d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC))(t, "GetTotalEccErrors"), uint64(0))
	check("PCIe TX", must(d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES))(t, "GetPcieThroughput"), uint32(1000))
	check("PCIe RX", must(d.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES))(t, "GetPcieThroughput"), uint32(2000))
	bar1 := must(d.GetBAR1MemoryInfo())(t, "GetBAR1MemoryInfo")
	check("BAR1", bar1, nvml.BAR1Memory{Bar1Total: 128 << 30, Bar1Used: 64 * fakegpu.MiB, Bar1Free: 128<<30 - 64*fakegpu.MiB})
	check("brand", must(d.GetBrand())(t, "GetBrand"), nvml.BRAND_NVIDIA)
	check("max MIG devices with MIG disabled", must(d.GetMaxMigDeviceCount())(t, "GetMaxMigDeviceCount"), 0)
	check("is MIG handle", must(d.IsMigDeviceHandle())(t, "IsMigDeviceHandle"), false)
	pci := must(d.GetPciInfo())(t, "GetPciInfo")
	check("PCI device ID", pci.PciDeviceId, uint32(0x20B210DE))
	check("PCI bus", pci.Bus, uint32(0x18))

	if _, ret := d.GetClockInfo(nvml.CLOCK_COUNT); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("bad clock type: %v", ret)
	}
	if _, ret := d.GetTemperature(nvml.TEMPERATURE_COUNT); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("bad sensor: %v", ret)
	}
}

func TestFanNeedsSupport(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{}, fakegpu.GPUSpec{HasFan: true})
	initFleet(t, f)
	f.GPU(0).SetFanSpeed(40)
	if _, ret := handle(t, f, 0).GetFanSpeed(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("fanless board: %v, want NOT_SUPPORTED", ret)
	}
	f.GPU(0).Supported("fan_speed")
	if v, ret := handle(t, f, 0).GetFanSpeed(); ret != nvml.SUCCESS || v != 40 {
		t.Errorf("after Supported: %d %v", v, ret)
	}
	f.GPU(1).SetFanSpeed(55)
	if v, ret := handle(t, f, 1).GetFanSpeed_v2(0); ret != nvml.SUCCESS || v != 55 {
		t.Errorf("board with a fan: %d %v", v, ret)
	}
}

func TestFailAndUnsupported(t *testing.T) {
	tests := []struct {
		name   string
		inject func(g *fakegpu.GPU)
		call   func(d nvml.Device) nvml.Return
		want   nvml.Return
		stub   bool // a method the fake does not model
	}{
		{"Fail by method name",
			func(g *fakegpu.GPU) { g.Fail("GetTemperature", nvml.ERROR_NO_PERMISSION) },
			func(d nvml.Device) nvml.Return { _, r := d.GetTemperature(nvml.TEMPERATURE_GPU); return r },
			nvml.ERROR_NO_PERMISSION, false},
		{"Fail by metric name",
			func(g *fakegpu.GPU) { g.Fail("memory", nvml.ERROR_UNKNOWN) },
			func(d nvml.Device) nvml.Return { _, r := d.GetMemoryInfo(); return r },
			nvml.ERROR_UNKNOWN, false},
		{"Fail by metric reaches every method behind it",
			func(g *fakegpu.GPU) { g.Fail("memory", nvml.ERROR_UNKNOWN) },
			func(d nvml.Device) nvml.Return { _, r := d.GetMemoryInfo_v2(); return r },
			nvml.ERROR_UNKNOWN, false},
		{"ClearFail undoes Fail",
			func(g *fakegpu.GPU) { g.Fail("power", nvml.ERROR_UNKNOWN); g.ClearFail("power") },
			func(d nvml.Device) nvml.Return { _, r := d.GetPowerUsage(); return r },
			nvml.SUCCESS, false},
		{"Fail with a Device. prefix",
			func(g *fakegpu.GPU) { g.Fail("Device.GetName", nvml.ERROR_CORRUPTED_INFOROM) },
			func(d nvml.Device) nvml.Return { _, r := d.GetName(); return r },
			nvml.ERROR_CORRUPTED_INFOROM, false},
		{"Fail reaches a stub too",
			func(g *fakegpu.GPU) { g.Fail("GetNumGpuCores", nvml.ERROR_TIMEOUT) },
			func(d nvml.Device) nvml.Return { _, r := d.GetNumGpuCores(); return r },
			nvml.ERROR_TIMEOUT, true},
		{"Unsupported",
			func(g *fakegpu.GPU) { g.Unsupported("utilization", "GetSerial") },
			func(d nvml.Device) nvml.Return { _, r := d.GetUtilizationRates(); return r },
			nvml.ERROR_NOT_SUPPORTED, false},
		{"Unsupported by method name",
			func(g *fakegpu.GPU) { g.Unsupported("utilization", "GetSerial") },
			func(d nvml.Device) nvml.Return { _, r := d.GetSerial(); return r },
			nvml.ERROR_NOT_SUPPORTED, false},
		{"Supported undoes Unsupported",
			func(g *fakegpu.GPU) { g.Unsupported("pcie"); g.Supported("pcie") },
			func(d nvml.Device) nvml.Return { _, r := d.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); return r },
			nvml.SUCCESS, false},
		{"Lose beats everything",
			func(g *fakegpu.GPU) { g.Fail("GetName", nvml.ERROR_UNKNOWN); g.Lose() },
			func(d nvml.Device) nvml.Return { _, r := d.GetName(); return r },
			nvml.ERROR_GPU_IS_LOST, false},
		{"MIG mode hides utilization",
			func(g *fakegpu.GPU) { g.SetMIGMode(1, 1) },
			func(d nvml.Device) nvml.Return { _, r := d.GetUtilizationRates(); return r },
			nvml.ERROR_NOT_SUPPORTED, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{}, fakegpu.GPUSpec{})
			initFleet(t, f)
			tt.inject(f.GPU(0))
			if got := tt.call(f.GPU(0).Device()); got != tt.want {
				t.Errorf("GPU 0: %v, want %v", got, tt.want)
			}
			untouched := nvml.SUCCESS
			if tt.stub {
				untouched = nvml.ERROR_NOT_SUPPORTED
			}
			if got := tt.call(f.GPU(1).Device()); got != untouched {
				t.Errorf("GPU 1 (untouched): %v, want %v", got, untouched)
			}
		})
	}
}

func TestLostGPU(t *testing.T) {
	f := preset(t, "dgx-h100")
	d := handle(t, f, 2)
	f.GPU(2).Lose()
	if _, ret := d.GetName(); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("held handle: %v", ret)
	}
	if ret := d.GetFieldValues([]nvml.FieldValue{{FieldId: nvml.FI_DEV_POWER_INSTANT}}); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("field values: %v", ret)
	}
	if h, ret := f.DeviceGetHandleByIndex(2); ret != nvml.ERROR_GPU_IS_LOST || h == nil {
		t.Errorf("DeviceGetHandleByIndex = %v, %v; want the handle and GPU_IS_LOST", h, ret)
	}
	if _, ret := f.DeviceGetHandleByUUID(f.GPU(2).UUID()); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("DeviceGetHandleByUUID = %v", ret)
	}
	if n, _ := f.DeviceGetCount(); n != 8 {
		t.Errorf("DeviceGetCount = %d, want 8: a lost GPU is still counted", n)
	}
	if _, ret := handle(t, f, 3).GetName(); ret != nvml.SUCCESS {
		t.Errorf("other GPU: %v", ret)
	}
}

func TestMIGMode(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	f.GPU(0).SetMIGMode(0, 1)
	cur, pend, ret := handle(t, f, 0).GetMigMode()
	if cur != 0 || pend != 1 || ret != nvml.SUCCESS {
		t.Errorf("GetMigMode = %d %d %v", cur, pend, ret)
	}
	f.GPU(0).Unsupported("mig_mode")
	if _, ret := handle(t, f, 0).GetMaxMigDeviceCount(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GetMaxMigDeviceCount on a non-MIG board: %v", ret)
	}
}

func TestAdvanceGrowsCounters(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	g, d := f.GPU(0), handle(t, f, 0)
	g.SetPower(100_000, 0) // 100 W
	g.SetPCIe(1000, 0)     // 1000 KB/s
	start := f.Now()
	f.Advance(10 * time.Second)
	f.Advance(-time.Hour) // ignored
	if got := f.Now().Sub(start); got != 10*time.Second {
		t.Errorf("clock moved %v", got)
	}
	if e := must(d.GetTotalEnergyConsumption())(t, "GetTotalEnergyConsumption"); e != 1_000_000 {
		t.Errorf("energy = %d mJ, want 1000000 (100 W for 10 s)", e)
	}
	fv := []nvml.FieldValue{{FieldId: nvml.FI_DEV_PCIE_COUNT_TX_BYTES}}
	d.GetFieldValues(fv)
	if got := u64(fv[0]); got != 10*1000*1024 {
		t.Errorf("PCIe TX bytes = %d", got)
	}
}
