//go:build cgo

package fakegpu_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

var (
	uuidRE   = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	serialRE = regexp.MustCompile(`^[0-9]{13}$`)
)

func TestPresetsHaveEightDistinctGPUsOfTheirModel(t *testing.T) {
	tests := []struct {
		preset   string
		name     string
		memMiB   uint64
		arch     nvml.DeviceArchitecture
		ccMajor  int
		busyPIDs []uint32
	}{
		{"dgx-a100", "NVIDIA A100-SXM4-80GB", 81920, nvml.DEVICE_ARCH_AMPERE, 8, []uint32{4194401, 4194402, 4194403}},
		{"dgx-h100", "NVIDIA H100 80GB HBM3", 81920, nvml.DEVICE_ARCH_HOPPER, 9, []uint32{4194401, 4194402, 4194403}},
		{"dgx-h200", "NVIDIA H200 141GB HBM3e", 144384, nvml.DEVICE_ARCH_HOPPER, 9, []uint32{4194401, 4194402, 4194403}},
		{"dgx-b200", "NVIDIA B200 180GB HBM3e", 184320, nvml.DEVICE_ARCH_BLACKWELL, 10, []uint32{4194401, 4194402, 4194403}},
		// GPU 0's process runs on a MIG device; GPU 1 has MIG and none.
		{"dgx-a100-mig", "NVIDIA A100-SXM4-80GB", 81920, nvml.DEVICE_ARCH_AMPERE, 8, []uint32{4194404, 4194403}},
		{"dgx-h100-mig", "NVIDIA H100 80GB HBM3", 81920, nvml.DEVICE_ARCH_HOPPER, 9, []uint32{4194404, 4194403}},
	}
	if got, want := fakegpu.PresetNames(), []string{"dgx-a100", "dgx-a100-mig", "dgx-b200", "dgx-h100", "dgx-h100-mig", "dgx-h200", "vgpu-h100"}; !slices.Equal(got, want) {
		t.Errorf("PresetNames() = %v, want %v", got, want)
	}
	wantBuses := []string{"18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			f := preset(t, tt.preset)
			if n := must(f.DeviceGetCount())(t, "DeviceGetCount"); n != 8 {
				t.Fatalf("DeviceGetCount() = %d, want 8", n)
			}
			if v := must(f.SystemGetDriverVersion())(t, "SystemGetDriverVersion"); v != "580.95.05" {
				t.Errorf("driver = %q", v)
			}
			if v := must(f.SystemGetNVMLVersion())(t, "SystemGetNVMLVersion"); v != "13.580.95.05" {
				t.Errorf("NVML version = %q", v)
			}
			if v := must(f.SystemGetCudaDriverVersion_v2())(t, "SystemGetCudaDriverVersion_v2"); v != 13000 {
				t.Errorf("CUDA = %d", v)
			}
			uuids := map[string]bool{}
			var pids []uint32
			for i := 0; i < 8; i++ {
				d := handle(t, f, i)
				if name := must(d.GetName())(t, "GetName"); name != tt.name {
					t.Errorf("GPU %d name = %q, want %q", i, name, tt.name)
				}
				uuid := must(d.GetUUID())(t, "GetUUID")
				if !uuidRE.MatchString(uuid) || uuids[uuid] {
					t.Errorf("GPU %d UUID %q is malformed or repeated", i, uuid)
				}
				uuids[uuid] = true
				if s := must(d.GetSerial())(t, "GetSerial"); !serialRE.MatchString(s) {
					t.Errorf("GPU %d serial %q is not 13 digits", i, s)
				}
				pci := must(d.GetPciInfo())(t, "GetPciInfo")
				if got, want := cString(pci.BusId[:]), "00000000:"+wantBuses[i]+":00.0"; got != want {
					t.Errorf("GPU %d BusId = %q, want %q", i, got, want)
				}
				if got, want := cString(pci.BusIdLegacy[:]), "0000:"+wantBuses[i]+":00.0"; got != want {
					t.Errorf("GPU %d BusIdLegacy = %q, want %q", i, got, want)
				}
				if minor := must(d.GetMinorNumber())(t, "GetMinorNumber"); minor != i {
					t.Errorf("GPU %d minor = %d", i, minor)
				}
				mem := must(d.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2")
				if mem.Total != tt.memMiB*fakegpu.MiB {
					t.Errorf("GPU %d total = %d MiB, want %d", i, mem.Total/fakegpu.MiB, tt.memMiB)
				}
				if arch := must(d.GetArchitecture())(t, "GetArchitecture"); arch != tt.arch {
					t.Errorf("GPU %d arch = %v", i, arch)
				}
				if major, _, _ := d.GetCudaComputeCapability(); major != tt.ccMajor {
					t.Errorf("GPU %d CC major = %d, want %d", i, major, tt.ccMajor)
				}
				if _, ret := d.GetFanSpeed(); ret != nvml.ERROR_NOT_SUPPORTED {
					t.Errorf("GPU %d GetFanSpeed = %v, want NOT_SUPPORTED on an SXM board", i, ret)
				}
				for _, p := range must(d.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses") {
					pids = append(pids, p.Pid)
				}
			}
			if !slices.Equal(pids, tt.busyPIDs) {
				t.Errorf("compute PIDs = %v, want %v", pids, tt.busyPIDs)
			}
		})
	}
}

func TestPresetIsDeterministic(t *testing.T) {
	a, _ := fakegpu.Preset("dgx-h100")
	b, _ := fakegpu.Preset("dgx-h100")
	c, _ := fakegpu.Preset("dgx-a100")
	for i := 0; i < a.Count(); i++ {
		if a.GPU(i).UUID() != b.GPU(i).UUID() || a.GPU(i).Serial() != b.GPU(i).Serial() {
			t.Errorf("GPU %d identity differs between two Preset calls", i)
		}
		if a.GPU(i).UUID() == c.GPU(i).UUID() {
			t.Errorf("GPU %d has the same UUID in dgx-h100 and dgx-a100", i)
		}
	}
}

func TestNewIsDeterministic(t *testing.T) {
	specs := []fakegpu.GPUSpec{{Model: "h100"}, {Model: "a100"}, {}}
	a, b := fakegpu.New(specs...), fakegpu.New(specs...)
	for i := range specs {
		if a.GPU(i).UUID() != b.GPU(i).UUID() {
			t.Errorf("GPU %d: UUID %s then %s", i, a.GPU(i).UUID(), b.GPU(i).UUID())
		}
		if !uuidRE.MatchString(a.GPU(i).UUID()) {
			t.Errorf("GPU %d: UUID %q malformed", i, a.GPU(i).UUID())
		}
	}
	if got := a.GPU(2).Name(); got != "NVIDIA H100 80GB HBM3" {
		t.Errorf("a GPUSpec without model is %q, want an H100", got)
	}
}

func TestNewUsesSpecIdentityAndDerivesBusIDsPastEightGPUs(t *testing.T) {
	specs := make([]fakegpu.GPUSpec, 10)
	specs[1] = fakegpu.GPUSpec{UUID: "GPU-11111111-2222-3333-4444-555555555555", BusID: "0000:c1:00.0", Serial: "1234567890123", Name: "Custom"}
	specs[2] = fakegpu.GPUSpec{Model: "nonsense", BusID: "not a bus"} // New falls back to defaults
	f := fakegpu.New(specs...)
	if g := f.GPU(1); g.UUID() != specs[1].UUID || g.BusID() != "00000000:C1:00.0" || g.Serial() != "1234567890123" || g.Name() != "Custom" {
		t.Errorf("GPU 1 identity = %s %s %s %s", g.UUID(), g.BusID(), g.Serial(), g.Name())
	}
	if g := f.GPU(2); g.BusID() != "00000000:3A:00.0" || g.Spec().Model != "h100" {
		t.Errorf("GPU 2 = %s %s, want the defaults", g.BusID(), g.Spec().Model)
	}
	if err := specs[2].Validate(); err == nil {
		t.Error("Validate() accepted an unknown model")
	}
	if got := f.GPU(9).BusID(); got != "00000001:2A:00.0" {
		t.Errorf("GPU 9 bus ID = %s, want 00000001:2A:00.0", got)
	}
	if f.GPU(10) != nil || f.GPU(-1) != nil {
		t.Error("GPU(out of range) is not nil")
	}
}

func TestUnknownPresetIsAnError(t *testing.T) {
	if _, err := fakegpu.Preset("dgx-1"); err == nil || !strings.Contains(err.Error(), "dgx-1") {
		t.Errorf("Preset(dgx-1) error = %v", err)
	}
}

func TestLookup(t *testing.T) {
	f := preset(t, "dgx-h100")
	g5 := f.GPU(5)
	tests := []struct {
		name   string
		lookup func() (nvml.Device, nvml.Return)
		want   int // index, or -1 for no device
		ret    nvml.Return
	}{
		{"by UUID", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByUUID(g5.UUID()) }, 5, nvml.SUCCESS},
		{"by unknown UUID", func() (nvml.Device, nvml.Return) {
			return f.DeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000")
		}, -1, nvml.ERROR_NOT_FOUND},
		{"by serial", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleBySerial(g5.Serial()) }, 5, nvml.SUCCESS},
		{"by bus ID as NVML prints it", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("00000000:AB:00.0") }, 5, nvml.SUCCESS},
		{"by bus ID in lower case", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("00000000:ab:00.0") }, 5, nvml.SUCCESS},
		{"by bus ID with a 4-digit domain", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("0000:ab:00.0") }, 5, nvml.SUCCESS},
		{"by bus ID without domain", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("AB:00.0") }, 5, nvml.SUCCESS},
		{"by bus ID without function", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("0:ab:0") }, 5, nvml.SUCCESS},
		{"by absent bus ID", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("0000:01:00.0") }, -1, nvml.ERROR_NOT_FOUND},
		{"by malformed bus ID", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByPciBusId("bus 5") }, -1, nvml.ERROR_INVALID_ARGUMENT},
		{"by index past the end", func() (nvml.Device, nvml.Return) { return f.DeviceGetHandleByIndex(8) }, -1, nvml.ERROR_INVALID_ARGUMENT},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ret := tt.lookup()
			if ret != tt.ret {
				t.Fatalf("ret = %v, want %v", ret, tt.ret)
			}
			if tt.want < 0 {
				if d != nil {
					t.Errorf("got a device, want none")
				}
				return
			}
			if idx := must(d.GetIndex())(t, "GetIndex"); idx != tt.want {
				t.Errorf("found GPU %d, want %d", idx, tt.want)
			}
		})
	}
}

func TestVersionsCanBeSet(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	f.SetDriverVersion("535.104.05")
	f.SetCUDADriverVersion(12020)
	if v, _ := f.SystemGetNVMLVersion(); v != "12.535.104.05" {
		t.Errorf("NVML version = %q, want derived 12.535.104.05", v)
	}
	f.SetNVMLVersion("12.535.104")
	if v, _ := f.SystemGetNVMLVersion(); v != "12.535.104" {
		t.Errorf("NVML version = %q after SetNVMLVersion", v)
	}
	if v, _ := f.SystemGetCudaDriverVersion(); v != 12020 {
		t.Errorf("CUDA = %d", v)
	}
}

func TestSystemGetProcessName(t *testing.T) {
	f := preset(t, "dgx-h100")
	if err := f.GPU(4).StartProcess(fakegpu.Process{PID: 777, Name: "/usr/bin/Xorg", Type: fakegpu.Graphics}); err != nil {
		t.Fatal(err)
	}
	if name, _ := f.SystemGetProcessName(4194401); name != "python3" {
		t.Errorf("name of 4194401 = %q", name)
	}
	if name, _ := f.SystemGetProcessName(777); name != "/usr/bin/Xorg" {
		t.Errorf("name of 777 = %q", name)
	}
	if _, ret := f.SystemGetProcessName(1); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("unknown pid: %v, want NOT_FOUND", ret)
	}
}
