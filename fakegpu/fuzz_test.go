//go:build cgo

package fakegpu_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// FuzzParseScenario checks that ParseScenario never panics, that its errors
// wrap ErrBadScenario, and that a scenario it accepts gives a usable fleet
// with one GPU per "gpus" entry when there is no preset, whose MIG devices
// answer by index and UUID, and whose vGPU instances have IDs unique in the
// fleet and answer through the handles GetActiveVgpus lists.
func FuzzParseScenario(f *testing.F) {
	for _, file := range []string{"testdata/scenario-h100.json", "testdata/scenario-vgpu.json"} {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(everyKey))
	for _, s := range []string{
		`{}`, `{"gpus": [{}]}`, `{"preset": "dgx-b200"}`,
		`{"preset": "dgx-h100", "gpus": [{"lost": true}, {"mig_mode": 1, "processes": [{"pid": 3, "type": "C+G"}]}]}`,
		`{"gpus": [{"processes": [{"pid": 1, "type": "X"}]}]}`,
		`{"gpus": [{"bus_id": "1:2:3.4", "uuid": "GPU-00000000-0000-0000-0000-000000000000"}]}`,
		`{"init_error": "DRIVER_NOT_LOADED", "missing_symbols": ["nvmlDeviceGetCount"]}`,
		`{"preset": "dgx-a100-mig", "gpus": [{"processes": [{"pid": 2}]}, {"mig_devices": [{"gi": 1, "profile": "1c.7g.80gb", "index": 6}]}]}`,
		`{"gpus": [{"mig_enabled": true, "mig_devices": [{"uuid": "MIG-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "gi": 3, "ci": 1,
			"profile": "1c.2g.20gb", "memory_total_mib": 9856, "index": 2, "processes": [{"pid": 5, "used_memory_mib": 10}]}]}]}`,
		`{"gpus": [{"mig_enabled": true, "mig_devices": [{"gi": 1, "profile": "9g.1gb"}]}]}`,
		`{"preset": "vgpu-h100", "gpus": [{"vgpu_host": false}, {"vgpu_instances": [{"id": 1, "type": "NVIDIA H100-80C"}]}]}`,
		`{"gpus": [{"vgpu_instances": [{"id": 1, "uuid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "type": "NVIDIA H100-20C", "vm_id": "vm",
			"fb_used_mib": 6144, "licensed": true, "sm_util": 40, "processes": [{"pid": 1234, "name": "python3", "sm_util": 35}],
			"accounting": {"enabled": true}}, {"type": "X-4Q", "type_id": 3, "license_expiry": "2030-01-01T00:00:00+02:00"}]},
			{"vgpu_host": true, "vgpu_instances": [{"type_id": 3, "type": "X-4Q"}]}]}`,
		`{"gpus": [{"vgpu_instances": [{"type": "T", "framebuffer_mib": 1, "vm_id_type": "domain", "encoder_capacity": 0}]}]}`,
		`{"gpus": [{"gpu_util": 10, "gpu_util": 90}]}`,
		`{"gpus": [{"processes": [{"pid": 1, "mem_util": 2}], "mem_util": 3}, {"clocks": {"sm": 1, "sm": 2}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fleet, err := fakegpu.ParseScenario(data)
		if err != nil {
			if !errors.Is(err, fakegpu.ErrBadScenario) {
				t.Fatalf("error %v does not wrap ErrBadScenario", err)
			}
			return
		}
		var doc struct {
			Preset         *string           `json:"preset"`
			GPUs           []json.RawMessage `json:"gpus"`
			MissingSymbols []string          `json:"missing_symbols"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("ParseScenario accepted what encoding/json rejects: %v", err)
		}
		fleet.FailInit(nvml.SUCCESS) // an init_error would stop the checks below
		if ret := fleet.Init(); ret != nvml.SUCCESS {
			t.Fatalf("Init = %v", ret)
		}
		// Functions declared missing are refused (and recorded), so only a
		// scenario without missing symbols must answer everything.
		strict := len(doc.MissingSymbols) == 0
		n := fleet.Count()
		vgpuIDs := map[uint32]bool{}
		if got, ret := fleet.DeviceGetCount(); strict && (ret != nvml.SUCCESS || got != n) {
			t.Fatalf("DeviceGetCount = %d, %v; want %d", got, ret, n)
		}
		if doc.Preset == nil && n != len(doc.GPUs) {
			t.Fatalf("fleet has %d GPUs, want %d", n, len(doc.GPUs))
		}
		for i := 0; i < n; i++ {
			d := fleet.GPU(i).Device()
			d.GetName()
			d.GetPciInfo()
			d.GetMemoryInfo()
			d.GetMemoryInfo_v2()
			d.GetUtilizationRates()
			d.GetComputeRunningProcesses()
			d.GetGraphicsRunningProcesses()
			d.GetProcessUtilization(0)
			d.GetFieldValues([]nvml.FieldValue{{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: 1}, {FieldId: nvml.FI_DEV_POWER_INSTANT}})
			for slot := -1; slot <= 7; slot++ {
				m, ret := d.GetMigDeviceHandleByIndex(slot)
				if ret != nvml.SUCCESS {
					continue
				}
				if mig := fleet.GPU(i).MIGDevice(slot); mig == nil || mig.Device() != m {
					t.Fatalf("GPU %d GetMigDeviceHandleByIndex(%d) answers %v, not MIGDevice(%d)", i, slot, m, slot)
				}
				m.GetName()
				m.GetMemoryInfo_v2()
				m.GetAttributes()
				m.GetComputeRunningProcesses()
				if !strict {
					continue
				}
				if p, _ := m.GetDeviceHandleFromMigDeviceHandle(); p != d {
					t.Fatalf("GPU %d MIG device %d: wrong parent", i, slot)
				}
				uuid, _ := m.GetUUID()
				if h, _ := fleet.DeviceGetHandleByUUID(uuid); h != m {
					t.Fatalf("GPU %d MIG device %d not found by its UUID %q", i, slot, uuid)
				}
			}
			if !strict {
				continue
			}
			d.GetVirtualizationMode()
			d.GetVgpuUtilization(0)
			d.GetVgpuProcessUtilization(0)
			list, ret := d.GetActiveVgpus()
			if ret == nvml.SUCCESS != fleet.GPU(i).VgpuHost() {
				t.Fatalf("GPU %d GetActiveVgpus = %v, VgpuHost() = %v", i, ret, fleet.GPU(i).VgpuHost())
			}
			for j, h := range list {
				id := h.(interface{ Handle() uint32 }).Handle()
				if vgpuIDs[id] {
					t.Fatalf("GPU %d vGPU instance %d: ID %d repeats another's", i, j, id)
				}
				vgpuIDs[id] = true
				if v := fleet.GPU(i).Vgpu(id); v == nil || v.Instance() != h {
					t.Fatalf("GPU %d vGPU instance %d (ID %d) is not Vgpu(%d)", i, j, id, id)
				}
				for _, ret := range []nvml.Return{
					func() nvml.Return { _, r := h.GetUUID(); return r }(),
					func() nvml.Return { _, r := h.GetFbUsage(); return r }(),
					func() nvml.Return { _, r := h.GetLicenseInfo(); return r }(),
					func() nvml.Return { typ, r := h.GetType(); typ.GetName(); typ.GetMaxInstances(d); return r }(),
				} {
					if ret != nvml.SUCCESS {
						t.Fatalf("GPU %d vGPU instance %d: %v", i, j, ret)
					}
				}
			}
			if h, _ := fleet.DeviceGetHandleByUUID(fleet.GPU(i).UUID()); h != d {
				t.Fatalf("GPU %d not found by its UUID", i)
			}
			if h, _ := fleet.DeviceGetHandleByPciBusId(fleet.GPU(i).BusID()); h != d {
				t.Fatalf("GPU %d not found by its bus ID", i)
			}
		}
		fleet.Shutdown()
		if v := fleet.Violations(); strict && len(v) > 0 {
			t.Fatalf("violations: %q", v)
		}
	})
}
