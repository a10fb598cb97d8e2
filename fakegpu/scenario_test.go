//go:build cgo

package fakegpu_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

func TestLoadScenarioFile(t *testing.T) {
	f, err := fakegpu.LoadScenario("testdata/scenario-h100.json")
	if err != nil {
		t.Fatal(err)
	}
	initFleet(t, f)
	if n, _ := f.DeviceGetCount(); n != 1 {
		t.Fatalf("DeviceGetCount = %d, want 1", n)
	}
	if v, _ := f.SystemGetNVMLVersion(); v != "13.580.95.05" {
		t.Errorf("NVML version = %q", v)
	}
	d, ret := f.DeviceGetHandleByUUID("GPU-3f1c9a7e-52d4-8b61-0c2e-9d47a5b18e63")
	if ret != nvml.SUCCESS {
		t.Fatalf("lookup by the scenario's UUID: %v", ret)
	}
	if _, ret := f.DeviceGetHandleByPciBusId("0000:17:00.0"); ret != nvml.SUCCESS {
		t.Errorf("lookup by the scenario's bus ID: %v", ret)
	}
	if name := must(d.GetName())(t, "GetName"); name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("name = %q", name)
	}
	mem := must(d.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2")
	if mem.Total != 81559*fakegpu.MiB || mem.Used != 1024*fakegpu.MiB || mem.Reserved != 407*fakegpu.MiB {
		t.Errorf("memory = %+v", mem)
	}
	if u := must(d.GetUtilizationRates())(t, "GetUtilizationRates"); u != (nvml.Utilization{Gpu: 37, Memory: 12}) {
		t.Errorf("utilization = %+v", u)
	}
	if c := must(d.GetTemperature(nvml.TEMPERATURE_GPU))(t, "GetTemperature"); c != 41 {
		t.Errorf("temperature = %d", c)
	}
	if p := must(d.GetPowerUsage())(t, "GetPowerUsage"); p != 72000 {
		t.Errorf("power = %d", p)
	}
	if l := must(d.GetEnforcedPowerLimit())(t, "GetEnforcedPowerLimit"); l != 700000 {
		t.Errorf("limit = %d", l)
	}
	if _, ret := d.GetFanSpeed(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("fan = %v", ret)
	}
	procs := must(d.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses")
	if len(procs) != 1 || procs[0].Pid != 4242 || procs[0].UsedGpuMemory != 512*fakegpu.MiB {
		t.Errorf("processes = %+v", procs)
	}
	samples := must(d.GetProcessUtilization(0))(t, "GetProcessUtilization")
	if len(samples) != 1 || samples[0].SmUtil != 30 || samples[0].MemUtil != 5 {
		t.Errorf("samples = %+v", samples)
	}
}

func TestLoadScenarioErrorsNameTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, []byte(`{"gpus": [{"gpu_util": 300}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := fakegpu.LoadScenario(path)
	if !errors.Is(err, fakegpu.ErrBadScenario) || !strings.Contains(err.Error(), path+": gpus[0].gpu_util: ") {
		t.Errorf("error = %v", err)
	}
	if _, err := fakegpu.LoadScenario(filepath.Join(t.TempDir(), "absent.json")); err == nil || errors.Is(err, fakegpu.ErrBadScenario) {
		t.Errorf("absent file: %v, want a read error", err)
	}
}

func TestScenarioDefaults(t *testing.T) {
	tests := []struct {
		name  string
		json  string
		count int
		check func(t *testing.T, f *fakegpu.Fleet)
	}{
		{"an empty document has no GPUs", `{}`, 0, nil},
		{"an empty GPU is an idle H100", `{"gpus": [{}]}`, 1, func(t *testing.T, f *fakegpu.Fleet) {
			want := fakegpu.New(fakegpu.GPUSpec{})
			if f.GPU(0).UUID() != want.GPU(0).UUID() || f.GPU(0).Name() != "NVIDIA H100 80GB HBM3" {
				t.Errorf("GPU 0 = %s %s, want New's H100", f.GPU(0).UUID(), f.GPU(0).Name())
			}
			if v, _ := f.SystemGetDriverVersion(); v != fakegpu.DefaultDriverVersion {
				t.Errorf("driver = %q", v)
			}
		}},
		{"a preset alone", `{"preset": "dgx-a100"}`, 8, func(t *testing.T, f *fakegpu.Fleet) {
			p, _ := fakegpu.Preset("dgx-a100")
			for i := 0; i < 8; i++ {
				if f.GPU(i).UUID() != p.GPU(i).UUID() {
					t.Errorf("GPU %d differs from the preset", i)
				}
			}
		}},
		{"gpus override a preset by position and add more", `{"preset": "dgx-h100", "gpus": [
			{"gpu_util": 5, "processes": []}, {}, {"model": "a100"}, {}, {}, {}, {}, {}, {"name": "Extra"}]}`, 9,
			func(t *testing.T, f *fakegpu.Fleet) {
				p, _ := fakegpu.Preset("dgx-h100")
				if f.GPU(0).UUID() != p.GPU(0).UUID() {
					t.Error("an override changed the preset GPU's UUID")
				}
				if u, _ := f.GPU(0).Device().GetUtilizationRates(); u.Gpu != 5 || len(f.GPU(0).Processes()) != 0 {
					t.Errorf("GPU 0: util %d, %d processes", u.Gpu, len(f.GPU(0).Processes()))
				}
				if len(f.GPU(1).Processes()) != 1 {
					t.Error("GPU 1 lost its preset process")
				}
				if f.GPU(2).Name() != "NVIDIA A100-SXM4-80GB" || f.GPU(2).UUID() != p.GPU(2).UUID() {
					t.Errorf("GPU 2 = %s %s", f.GPU(2).Name(), f.GPU(2).UUID())
				}
				if f.GPU(8).Name() != "Extra" || f.GPU(8).Spec().Model != "h100" || f.GPU(8).BusID() != "00000001:18:00.0" {
					t.Errorf("GPU 8 = %+v", f.GPU(8).Spec())
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
			if n, _ := f.DeviceGetCount(); n != tt.count {
				t.Fatalf("DeviceGetCount = %d, want %d", n, tt.count)
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

const everyKey = `{
  "driver_version": "535.104.05",
  "cuda_driver_version": 12020,
  "nvml_version": "12.535.104.05",
  "missing_symbols": ["nvmlDeviceGetMemoryInfo_v2"],
  "gpus": [{
    "model": "b200", "name": "NVIDIA B200", "uuid": "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
    "bus_id": "0000:c1:00.0", "serial": "1650123456789", "compute_capability": "10.0",
    "memory_total_mib": 180000, "memory_reserved_mib": 1000, "memory_used_mib": 2000,
    "bar1_total_mib": 1024, "bar1_used_mib": 10,
    "gpu_util": 1, "mem_util": 2, "enc_util": 3, "dec_util": 4,
    "temperature_c": 50, "power_mw": 500000, "power_limit_mw": 900000,
    "clocks": {"graphics": 1000, "sm": 1001, "memory": 3000, "video": 900},
    "max_clocks": {"graphics": 2000, "sm": 2001},
    "fan_speed": 33, "pstate": 8, "persistence_mode": false, "compute_mode": "Prohibited",
    "display_active": true, "display_mode": true, "ecc_errors": 9,
    "pcie_tx_kbps": 11, "pcie_rx_kbps": 12,
    "nvlink_links": 4, "nvlink_tx_kib": 400, "nvlink_rx_kib": 800,
    "mig_mode": 1, "mig_enabled": true,
    "mig_devices": [{
      "uuid": "MIG-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d", "gi": 1, "ci": 0, "profile": "1c.2g.45gb",
      "memory_total_mib": 45000, "index": 5,
      "processes": [{"pid": 9, "name": "infer", "type": "C", "used_memory_mib": 100, "sm_util": 5, "mem_util": 1,
                     "enc_util": 0, "dec_util": 0, "gpu_instance_id": 1, "compute_instance_id": 0}]
    }],
    "unsupported": ["decoder"],
    "errors": {"temperature": "NO_PERMISSION", "power": "ERROR_UNKNOWN"},
    "lost": false,
    "processes": [
      {"pid": 7, "name": "xorg", "type": "G", "used_memory_mib": -1},
      {"pid": 8, "type": "C+G", "used_memory_mib": 64, "sm_util": 1, "mem_util": 2, "enc_util": 3, "dec_util": 4,
       "gpu_instance_id": 1, "compute_instance_id": 2}
    ]
  }, {"lost": true}]
}`

func TestScenarioEveryKey(t *testing.T) {
	f, err := fakegpu.ParseScenario([]byte(everyKey))
	if err != nil {
		t.Fatal(err)
	}
	if ret := f.Init(); ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	defer f.Shutdown()
	d := handle(t, f, 0)
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	ext := f.Extensions()
	check("symbol missing", ext.LookupSymbol("nvmlDeviceGetMemoryInfo_v2") != nil, true)
	v, _ := f.SystemGetNVMLVersion()
	check("NVML version", v, "12.535.104.05")
	g := f.GPU(0)
	check("UUID", g.UUID(), "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee")
	check("bus ID", g.BusID(), "00000000:C1:00.0")
	check("serial", g.Serial(), "1650123456789")
	check("name", g.Name(), "NVIDIA B200")
	major, minor, _ := d.GetCudaComputeCapability()
	check("CC", [2]int{major, minor}, [2]int{10, 0})
	mem, _ := d.GetMemoryInfo()
	check("memory", mem, nvml.Memory{Total: 180000 * fakegpu.MiB, Used: 3000 * fakegpu.MiB, Free: 177000 * fakegpu.MiB})
	bar1, _ := d.GetBAR1MemoryInfo()
	check("BAR1", bar1, nvml.BAR1Memory{Bar1Total: 1024 * fakegpu.MiB, Bar1Used: 10 * fakegpu.MiB, Bar1Free: 1014 * fakegpu.MiB})
	enc, _, _ := d.GetEncoderUtilization()
	check("encoder", enc, uint32(3))
	_, _, ret := d.GetDecoderUtilization()
	check("decoder", ret, nvml.ERROR_NOT_SUPPORTED)
	_, ret = d.GetTemperature(nvml.TEMPERATURE_GPU)
	check("temperature", ret, nvml.ERROR_NO_PERMISSION)
	_, ret = d.GetPowerUsage()
	check("power", ret, nvml.ERROR_UNKNOWN)
	limit, _ := d.GetPowerManagementLimit()
	check("limit", limit, uint32(900000))
	clk, _ := d.GetClockInfo(nvml.CLOCK_MEM)
	check("memory clock", clk, uint32(3000))
	maxSM, _ := d.GetMaxClockInfo(nvml.CLOCK_SM)
	check("max SM clock", maxSM, uint32(2001))
	maxMem, _ := d.GetMaxClockInfo(nvml.CLOCK_MEM)
	check("max memory clock (model default)", maxMem, uint32(3996))
	fan, _ := d.GetFanSpeed()
	check("fan", fan, uint32(33))
	ps, _ := d.GetPerformanceState()
	check("pstate", ps, nvml.PSTATE_8)
	pm, _ := d.GetPersistenceMode()
	check("persistence", pm, nvml.FEATURE_DISABLED)
	cm, _ := d.GetComputeMode()
	check("compute mode", cm, nvml.COMPUTEMODE_PROHIBITED)
	da, _ := d.GetDisplayActive()
	check("display active", da, nvml.FEATURE_ENABLED)
	ecc, _ := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC)
	check("ECC", ecc, uint64(9))
	rx, _ := d.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES)
	check("PCIe RX", rx, uint32(12))
	fv := []nvml.FieldValue{{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ScopeId: 3}, {FieldId: nvml.FI_DEV_NVLINK_LINK_COUNT}}
	d.GetFieldValues(fv)
	check("NVLink RX link 3", u64(fv[0]), uint64(200))
	check("NVLink links", u64(fv[1]), uint64(4))
	cur, _, _ := d.GetMigMode()
	check("MIG", cur, 1)
	graphics, _ := d.GetGraphicsRunningProcesses()
	check("graphics processes", len(graphics), 2)
	check("N/A memory", graphics[0].UsedGpuMemory, fakegpu.NotAvailable)
	compute, _ := d.GetComputeRunningProcesses()
	check("compute processes", len(compute), 2)
	check("MIG device process", compute[0], nvml.ProcessInfo{Pid: 9, UsedGpuMemory: 100 * fakegpu.MiB, GpuInstanceId: 1, ComputeInstanceId: 0})
	check("compute process", compute[1], nvml.ProcessInfo{Pid: 8, UsedGpuMemory: 64 * fakegpu.MiB, GpuInstanceId: 1, ComputeInstanceId: 2})
	mig, ret := d.GetMigDeviceHandleByIndex(5)
	check("MIG device", ret, nvml.SUCCESS)
	migUUID, _ := mig.GetUUID()
	check("MIG UUID", migUUID, "MIG-0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d")
	migName, _ := mig.GetName()
	check("MIG name", migName, "NVIDIA B200 MIG 1c.2g.45gb")
	migMem, _ := mig.GetMemoryInfo()
	check("MIG memory", migMem, nvml.Memory{Total: 45000 * fakegpu.MiB, Used: 100 * fakegpu.MiB, Free: 44900 * fakegpu.MiB})
	ci, _ := mig.GetComputeInstanceId()
	check("MIG CI", ci, 0)
	migProc, _ := f.SystemGetProcessName(9)
	check("MIG process name", migProc, "infer")
	name, _ := f.SystemGetProcessName(7)
	check("process name", name, "xorg")
	_, ret = f.GPU(1).Device().GetName()
	check("lost GPU", ret, nvml.ERROR_GPU_IS_LOST)
	if v := f.Violations(); len(v) != 0 {
		t.Errorf("violations: %q", v)
	}
}

func TestScenarioInitError(t *testing.T) {
	f, err := fakegpu.ParseScenario([]byte(`{"init_error": "LIB_RM_VERSION_MISMATCH", "gpus": [{}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ret := f.Init(); ret != nvml.ERROR_LIB_RM_VERSION_MISMATCH {
		t.Errorf("Init = %v", ret)
	}
}

func TestMalformedScenarios(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		path    string
		problem string
	}{
		{"not JSON", `{"gpus": [`, "", "invalid JSON"},
		{"an empty document", ``, "", "empty document"},
		{"two documents", `{} {}`, "", "unexpected data"},
		{"an array at the top", `[]`, "", "want an object, got an array"},
		{"an unknown top-level key", `{"gpu": []}`, "gpu", "unknown key"},
		{"keys are case-sensitive", `{"GPUS": []}`, "GPUS", "unknown key"},
		{"gpus not an array", `{"gpus": {}}`, "gpus", "want an array, got an object"},
		{"a repeated top-level key", `{"preset": "dgx-h100", "preset": "dgx-b200"}`, "preset", "duplicate key"},
		{"a repeated GPU key", `{"gpus": [{"gpu_util": 10, "gpu_util": 90}]}`, "gpus[0].gpu_util", "duplicate key"},
		{"a repeated key spelt with an escape", `{"gpus": [{"gpu_util": 10, "gpu\u005futil": 90}]}`, "gpus[0].gpu_util", "duplicate key"},
		{"a repeated key whose values differ in type", `{"gpus": [{}, {"lost": true, "lost": {"a": [1]}}]}`, "gpus[1].lost", "duplicate key"},
		{"a repeated clock", `{"gpus": [{"clocks": {"sm": 1, "graphics": 2, "sm": 3}}]}`, "gpus[0].clocks.sm", "duplicate key"},
		{"a repeated error metric", `{"gpus": [{"errors": {"temperature": "NO_PERMISSION", "temperature": "UNKNOWN"}}]}`,
			"gpus[0].errors.temperature", "duplicate key"},
		{"a repeated process key", `{"gpus": [{}, {"processes": [{"pid": 1}, {"pid": 2, "type": "C", "type": "G"}]}]}`,
			"gpus[1].processes[1].type", "duplicate key"},
		{"a repeated key inside an unknown key", `{"gpus": [{"extra": {"a": 1, "a": 2}}]}`, "gpus[0].extra.a", "duplicate key"},
		{"a repeated MIG process key", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 1, "pid": 2}]}]}]}`,
			"gpus[0].mig_devices[0].processes[0].pid", "duplicate key"},
		{"a number too large for any Go type", `{"gpus": [{"power_mw": 1e400}]}`, "gpus[0].power_mw", "got number 1e400"},
		{"a null GPU", `{"gpus": [null]}`, "gpus[0]", "want an object, got null"},
		{"an unknown GPU key", `{"gpus": [{"util": 3}]}`, "gpus[0].util", "unknown key"},
		{"a string for a number", `{"gpus": [{"gpu_util": "high"}]}`, "gpus[0].gpu_util", "want a whole number 0..4294967295, got string"},
		{"a negative number", `{"gpus": [{"temperature_c": -1}]}`, "gpus[0].temperature_c", "got number -1"},
		{"a fraction", `{"gpus": [{"power_mw": 1.5}]}`, "gpus[0].power_mw", "got number 1.5"},
		{"utilization above 100", `{"gpus": [{"gpu_util": 101}]}`, "gpus[0].gpu_util", "want a percentage 0..100, got 101"},
		{"a string for a bool", `{"gpus": [{"lost": "yes"}]}`, "gpus[0].lost", "want true or false, got string"},
		{"an unknown model", `{"gpus": [{"model": "v100"}]}`, "gpus[0].model", `unknown model "v100"`},
		{"a malformed UUID", `{"gpus": [{"uuid": "GPU-123"}]}`, "gpus[0].uuid", `got "GPU-123"`},
		{"a repeated UUID", `{"gpus": [{"uuid": "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}, {"uuid": "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}]}`,
			"gpus[1].uuid", "also the UUID of GPU 0"},
		{"a malformed bus ID", `{"gpus": [{"bus_id": "zz:00.0"}]}`, "gpus[0].bus_id", `got "zz:00.0"`},
		{"a repeated bus ID in another form", `{"gpus": [{"bus_id": "00000000:17:00.0"}, {"bus_id": "0000:17:00.0"}]}`,
			"gpus[1].bus_id", "also the bus ID of GPU 0"},
		{"a bus ID that repeats a derived one", `{"gpus": [{}, {"bus_id": "0000:18:00.0"}]}`, "gpus[1].bus_id", "also the bus ID of GPU 0"},
		{"a bad compute capability", `{"gpus": [{"compute_capability": "nine"}]}`, "gpus[0].compute_capability", `got "nine"`},
		{"a bad compute mode", `{"gpus": [{"compute_mode": "Exclusive"}]}`, "gpus[0].compute_mode", `got "Exclusive"`},
		{"a bad pstate", `{"gpus": [{"pstate": 16}]}`, "gpus[0].pstate", "want 0..15"},
		{"a bad MIG mode", `{"gpus": [{"mig_mode": 2}]}`, "gpus[0].mig_mode", "got 2"},
		{"too many NVLinks", `{"gpus": [{"nvlink_links": 40}]}`, "gpus[0].nvlink_links", "want 0..36"},
		{"a zero power limit", `{"gpus": [{"power_limit_mw": 0}]}`, "gpus[0].power_limit_mw", "positive"},
		{"a zero memory size", `{"gpus": [{"memory_total_mib": 0}]}`, "gpus[0].memory_total_mib", "positive"},
		{"reserved memory above the total", `{"gpus": [{"memory_reserved_mib": 90000}]}`, "gpus[0].memory_reserved_mib", "not less than the total"},
		{"used memory above the total", `{"gpus": [{"memory_total_mib": 1000, "memory_used_mib": 2000}]}`, "gpus[0].memory_used_mib", "more than"},
		{"processes above the total", `{"gpus": [{"memory_total_mib": 1000, "processes": [{"pid": 1, "used_memory_mib": 5000}]}]}`,
			"gpus[0].processes", "the processes use 5000 MiB"},
		{"BAR1 use above its size", `{"gpus": [{"bar1_total_mib": 10, "bar1_used_mib": 11}]}`, "gpus[0].bar1_used_mib", "more than"},
		{"an unknown clock", `{"gpus": [{"clocks": {"gpu": 1}}]}`, "gpus[0].clocks.gpu", "unknown key"},
		{"a clock of the wrong type", `{"gpus": [{"max_clocks": {"sm": "fast"}}]}`, "gpus[0].max_clocks.sm", "want a whole number"},
		{"an unknown metric", `{"gpus": [{"unsupported": ["temperature", "fan"]}]}`, "gpus[0].unsupported[1]", `unknown metric "fan"`},
		{"unsupported not a list", `{"gpus": [{"unsupported": "fan_speed"}]}`, "gpus[0].unsupported", "want an array, got a string"},
		{"an unknown error name", `{"gpus": [{"errors": {"temperature": "BROKEN"}}]}`, "gpus[0].errors.temperature", `unknown NVML error "BROKEN"`},
		{"an error for an unknown metric", `{"gpus": [{"errors": {"tempo": "NO_PERMISSION"}}]}`, "gpus[0].errors.tempo", "unknown metric"},
		{"an error name that is not a string", `{"gpus": [{"errors": {"temperature": 4}}]}`, "gpus[0].errors.temperature", "want a string, got a number"},
		{"a process type", `{"gpus": [{}, {"processes": [{"pid": 1}, {"pid": 2, "type": "X"}]}]}`, "gpus[1].processes[1].type", `want "C", "G", "C+G" or "M+C", got "X"`},
		{"a host's user", `{"gpus": [{"processes": [{"pid": 1, "host": {"user": "a b"}}]}]}`, "gpus[0].processes[0].host.user", `want a user name`},
		{"a host's age", `{"gpus": [{"processes": [{"pid": 1, "host": {"age": "yesterday"}}]}]}`, "gpus[0].processes[0].host.age", `want a duration`},
		{"a host's CPU", `{"gpus": [{"processes": [{"pid": 1, "host": {"cpu": -1}}]}]}`, "gpus[0].processes[0].host.cpu", `want a CPU percentage`},
		{"an unknown host key", `{"gpus": [{"processes": [{"pid": 1, "host": {"shell": "bash"}}]}]}`, "gpus[0].processes[0].host.shell", `unknown`},
		{"a process without PID", `{"gpus": [{"processes": [{"type": "C"}]}]}`, "gpus[0].processes[0].pid", "required"},
		{"PID 0", `{"gpus": [{"processes": [{"pid": 0}]}]}`, "gpus[0].processes[0].pid", "non-zero"},
		{"a repeated PID", `{"gpus": [{"processes": [{"pid": 1}, {"pid": 1}]}]}`, "gpus[0].processes[1].pid", "also the PID of gpus[0].processes[0]"},
		{"an unknown process key", `{"gpus": [{"processes": [{"pid": 1, "memory": 5}]}]}`, "gpus[0].processes[0].memory", "unknown key"},
		{"process utilization above 100", `{"gpus": [{"processes": [{"pid": 1, "dec_util": 200}]}]}`, "gpus[0].processes[0].dec_util", "0..100"},
		{"a bad process memory", `{"gpus": [{"processes": [{"pid": 1, "used_memory_mib": -2}]}]}`, "gpus[0].processes[0].used_memory_mib", "-1 for not available"},
		{"an unknown preset", `{"preset": "dgx-1"}`, "preset", `unknown preset "dgx-1"`},
		{"an unknown init error", `{"init_error": "OOPS"}`, "init_error", `unknown NVML error "OOPS"`},
		{"a missing symbol that is not one", `{"missing_symbols": ["nvmlGood", "GetName"]}`, "missing_symbols[1]", `got "GetName"`},
		{"missing symbols not a list", `{"missing_symbols": "nvmlX"}`, "missing_symbols", "want an array"},
		{"a negative CUDA version", `{"cuda_driver_version": -5}`, "cuda_driver_version", "non-negative"},
		{"MIG devices without MIG", `{"gpus": [{"mig_devices": [{"gi": 1, "profile": "1g.10gb"}]}]}`,
			"gpus[0].mig_devices", `MIG devices need MIG enabled ("mig_enabled": true)`},
		{"MIG devices with MIG mode 0", `{"gpus": [{"mig_mode": 0, "mig_devices": [{"gi": 1, "profile": "1g.10gb"}]}]}`,
			"gpus[0].mig_devices", "need MIG enabled"},
		{"mig_enabled contradicting mig_mode", `{"gpus": [{"mig_mode": 1, "mig_enabled": false}]}`,
			"gpus[0].mig_enabled", `false contradicts "mig_mode": 1`},
		{"mig_enabled not a bool", `{"gpus": [{"mig_enabled": 1}]}`, "gpus[0].mig_enabled", "want true or false, got number"},
		{"mig_devices not an array", `{"gpus": [{"mig_enabled": true, "mig_devices": {}}]}`, "gpus[0].mig_devices", "want an array, got an object"},
		{"a null MIG device", `{"gpus": [{"mig_enabled": true, "mig_devices": [null]}]}`, "gpus[0].mig_devices[0]", "want an object, got null"},
		{"too many MIG devices", `{"gpus": [{"mig_enabled": true, "mig_devices": [{}, {}, {}, {}, {}, {}, {}, {}]}]}`,
			"gpus[0].mig_devices", "at most 7 MIG devices per GPU, got 8"},
		{"an unknown MIG device key", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "slot": 0}]}]}`,
			"gpus[0].mig_devices[0].slot", "unknown key"},
		{"a MIG device without GI", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"profile": "1g.10gb"}]}]}`,
			"gpus[0].mig_devices[0].gi", "required"},
		{"a MIG device without profile", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1}]}]}`,
			"gpus[0].mig_devices[0].profile", "required"},
		{"a profile that is not a string", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": 5}]}]}`,
			"gpus[0].mig_devices[0].profile", "want a string, got number"},
		{"a GI that is not a number", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": "1", "profile": "1g.10gb"}]}]}`,
			"gpus[0].mig_devices[0].gi", "want an integer, got string"},
		{"a bad profile", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb"}, {"gi": 2, "profile": "1g.10"}]}]}`,
			"gpus[0].mig_devices[1].profile", `want a profile like "1g.10gb" or "1c.3g.40gb" (at most 7 GPU slices), got "1g.10"`},
		{"a repeated index", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "index": 3}, {"gi": 2, "profile": "1g.10gb", "index": 3}]}]}`,
			"gpus[0].mig_devices[1].index", "3 is also the index of gpus[0].mig_devices[0]"},
		{"a repeated index 0", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "index": 0}, {"gi": 2, "profile": "1g.10gb", "index": 0}]}]}`,
			"gpus[0].mig_devices[1].index", "0 is also the index of gpus[0].mig_devices[0]"},
		{"an index a position takes", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "index": 1}, {"gi": 2, "profile": "1g.10gb"}]}]}`,
			"gpus[0].mig_devices[1].index", "1 is also the index of gpus[0].mig_devices[0]"},
		{"an index past the last", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "index": 7}]}]}`,
			"gpus[0].mig_devices[0].index", "want a MIG device index 0..6, got 7"},
		{"a repeated instance pair", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "ci": 1, "profile": "1c.2g.20gb"}, {"gi": 1, "ci": 1, "profile": "1c.2g.20gb"}]}]}`,
			"gpus[0].mig_devices[1].ci", "GPU instance 1, compute instance 1 is also that of MIG device 0"},
		{"a negative CI", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "ci": -1, "profile": "1g.10gb"}]}]}`,
			"gpus[0].mig_devices[0].ci", "want 0..65535, got -1"},
		{"a malformed MIG UUID", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "uuid": "MIG-1"}]}]}`,
			"gpus[0].mig_devices[0].uuid", `got "MIG-1"`},
		{"a MIG UUID repeated on the GPU", `{"gpus": [{"mig_enabled": true, "mig_devices": [
			{"gi": 1, "profile": "1g.10gb", "uuid": "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"},
			{"gi": 2, "profile": "1g.10gb", "uuid": "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}]}]}`,
			"gpus[0].mig_devices[1].uuid", "is also the UUID of MIG device 0"},
		{"a MIG UUID repeated on another GPU", `{"gpus": [
			{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "uuid": "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}]},
			{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "uuid": "MIG-AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee"}]}]}`,
			"gpus[1].mig_devices[0].uuid", "is also the UUID of GPU 0 MIG device 0"},
		{"a zero MIG memory size", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "memory_total_mib": 0}]}]}`,
			"gpus[0].mig_devices[0].memory_total_mib", "positive"},
		{"MIG memory beyond the GPU's", `{"gpus": [{"memory_total_mib": 40000, "mig_enabled": true, "mig_devices": [
			{"gi": 1, "profile": "3g.20gb", "memory_total_mib": 20000}, {"gi": 2, "profile": "3g.20gb", "memory_total_mib": 20001}]}]}`,
			"gpus[0].mig_devices[1].memory_total_mib", "the GPU instances would have 40001 MiB, more than the GPU's 40000 MiB"},
		{"a preset's MIG devices beyond a smaller GPU", `{"preset": "dgx-h100-mig", "gpus": [{"memory_total_mib": 50000}]}`,
			"gpus[0].mig_devices[1].memory_total_mib", "more than the GPU's 50000 MiB"},
		{"a graphics process on a MIG device", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 1, "type": "G"}]}]}]}`,
			"gpus[0].mig_devices[0].processes[0].type", `want "C": MIG devices run only compute processes, got "G"`},
		{"a MIG process with the GPU's PID", `{"gpus": [{"processes": [{"pid": 4}], "mig_enabled": true,
			"mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 4}]}]}]}`,
			"gpus[0].mig_devices[0].processes[0].pid", "4 is also the PID of gpus[0].processes[0]"},
		{"a PID on two MIG devices", `{"gpus": [{"mig_enabled": true, "mig_devices": [
			{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 4}]}, {"gi": 2, "profile": "1g.10gb", "processes": [{"pid": 5}, {"pid": 4}]}]}]}`,
			"gpus[0].mig_devices[1].processes[1].pid", "4 is also the PID of gpus[0].mig_devices[0].processes[0]"},
		{"a MIG process in another GPU instance", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 1, "gpu_instance_id": 2}]}]}]}`,
			"gpus[0].mig_devices[0].processes[0].gpu_instance_id", "want the device's 1 (or leave it out), got 2"},
		{"a MIG process in another compute instance", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 1, "compute_instance_id": 1}]}]}]}`,
			"gpus[0].mig_devices[0].processes[0].compute_instance_id", "want the device's 0 (or leave it out), got 1"},
		{"an unknown MIG process key", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 1, "gpu": 0}]}]}]}`,
			"gpus[0].mig_devices[0].processes[0].gpu", "unknown key"},
		{"MIG processes beyond the device's memory", `{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "1g.10gb", "processes": [{"pid": 1, "used_memory_mib": 10001}]}]}]}`,
			"gpus[0].mig_devices[0].processes", "the processes use 10001 MiB, more than the device's 10000 MiB"},
		{"a GPU process with a preset MIG process's PID", `{"preset": "dgx-h100-mig", "gpus": [{"processes": [{"pid": 4194404}]}]}`,
			"gpus[0].processes[0].pid", "4194404 is already running on this GPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fakegpu.ParseScenario([]byte(tt.json))
			if err == nil {
				t.Fatalf("no error; fleet has %d GPUs", f.Count())
			}
			if !errors.Is(err, fakegpu.ErrBadScenario) {
				t.Errorf("error %v does not wrap ErrBadScenario", err)
			}
			var se *fakegpu.ScenarioError
			if !errors.As(err, &se) || se.Path != tt.path {
				t.Errorf("error %q: path %q, want %q", err, se.Path, tt.path)
			}
			if want := tt.path + ": "; tt.path != "" && !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, tt.path)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not say %q", err, tt.problem)
			}
		})
	}
}

func TestLoadTakesAPresetOrAFile(t *testing.T) {
	if f, err := fakegpu.Load("dgx-h100"); err != nil || f.Count() != 8 {
		t.Fatalf("Load(dgx-h100) = %v, %v", f, err)
	}
	path := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(path, []byte(`{"gpus": [{"model": "a100"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := fakegpu.Load(path); err != nil || f.Count() != 1 {
		t.Fatalf("Load(file) = %v, %v", f, err)
	}
	if _, err := fakegpu.Load("dgx-nope"); err == nil || !strings.Contains(err.Error(), "not a preset") {
		t.Errorf("Load(dgx-nope) error = %v", err)
	}
}

// A process's "host" object becomes its Process.Host.
func TestScenarioProcessHostFacts(t *testing.T) {
	fleet, err := fakegpu.ParseScenario([]byte(`{"gpus": [{"processes": [
		{"pid": 4194500, "host": {"user": "erin", "command": ["python3", "eval.py"], "cpu": 12.5, "memory_mib": 2048, "age": "2h30m"}},
		{"pid": 4194501}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := fleet.HostProcess(4194500)
	want := fakegpu.Host{User: "erin", Command: []string{"python3", "eval.py"}, CPU: 12.5, Memory: 2048 * fakegpu.MiB, Age: 150 * time.Minute}
	if !ok || !reflect.DeepEqual(*p.Host, want) {
		t.Errorf("host of pid 4194500 = %+v, %v; want %+v", p.Host, ok, want)
	}
	if _, ok := fleet.HostProcess(4194501); ok {
		t.Error("a process without a host object has host facts")
	}
}
