//go:build cgo

package fakegpu_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

func TestVgpuScenarioFile(t *testing.T) {
	f, err := fakegpu.LoadScenario("testdata/scenario-vgpu.json")
	if err != nil {
		t.Fatal(err)
	}
	initFleet(t, f)
	d := handle(t, f, 0)
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	mode, _ := d.GetVirtualizationMode()
	check("mode", mode, nvml.GPU_VIRTUALIZATION_MODE_HOST_VGPU)
	list := must(d.GetActiveVgpus())(t, "GetActiveVgpus")
	if len(list) != 3 {
		t.Fatalf("%d instances, want 3", len(list))
	}
	first, second, third := list[0], list[1], list[2]
	check("first ID", first.(handler).Handle(), uint32(1))
	check("second ID", second.(handler).Handle(), uint32(2))
	uuid, _ := first.GetUUID()
	check("UUID", uuid, "0c6b5e4a-7d3f-4b8e-9a21-5f0e3c7d9b12")
	vm, vmType, _ := first.GetVmID()
	check("VM ID", vm, "4a9e2f0c-1b7d-4e3a-8c56-2d9f0b6e7a13")
	check("VM ID type", vmType, nvml.VGPU_VM_ID_UUID)
	drv, _ := first.GetVmDriverVersion()
	check("guest driver (the fleet's)", drv, "550.54.14")
	fb, _ := first.GetFbUsage()
	check("fb used", fb, uint64(6144*fakegpu.MiB))
	info, _ := first.GetLicenseInfo()
	check("licence", info.LicenseExpiry, nvml.VgpuLicenseExpiry{Year: 2026, Month: 9, Day: 30, Hour: 12, Status: 2})
	acct, _ := first.GetAccountingMode()
	check("accounting", acct, nvml.FEATURE_ENABLED)
	pids, _ := first.GetAccountingPids()
	check("accounted PIDs", fmt.Sprint(pids), "[1234 1240]")
	vm, vmType, _ = second.GetVmID()
	check("domain VM ID", vm+" "+fmt.Sprint(vmType), "17 "+fmt.Sprint(nvml.VGPU_VM_ID_DOMAIN_ID))
	drv, _ = second.GetVmDriverVersion()
	check("guest driver", drv, "535.161.08")
	lic, _ := second.GetLicenseStatus()
	check("unlicensed", lic, 0)
	ecap, _ := second.GetEncoderCapacity()
	check("encoder capacity 0", ecap, 0)
	ecc, _ := second.GetEccMode()
	check("ECC", ecc, nvml.FEATURE_DISABLED)
	place, _ := second.(placementIDer).GetPlacementId()
	check("placement", place.PlacementId, uint32(4))
	_, ret := second.GetFrameRateLimit()
	check("no frame rate limit", ret, nvml.ERROR_NOT_SUPPORTED)
	frl, _ := third.GetFrameRateLimit()
	check("frame rate limit", frl, uint32(60))
	typ, _ := third.GetType()
	check("type ID", typ.(handler).Handle(), uint32(1042))
	class, _ := typ.GetClass()
	check("class", class, "Quadro")
	if id := third.(handler).Handle(); id == 0 || id == 1 || id == 2 {
		t.Errorf("derived ID %d", id)
	}
	_, samples, _ := d.GetVgpuUtilization(0)
	got := decodeVgpuUtil(samples)
	t0 := micros(f.Now())
	want := []vgpuUtil{{1, t0, 40, 15, 0, 0}, {2, t0, 15, 12, 30, 5}, {third.(handler).Handle(), t0, 0, 0, 0, 0}}
	check("samples", fmt.Sprint(got), fmt.Sprint(want))
	procs, _ := d.GetVgpuProcessUtilization(0)
	var names []string
	for _, p := range procs {
		names = append(names, fmt.Sprintf("%d/%d/%s", p.VgpuInstance, p.Pid, cString(p.ProcessName[:])))
	}
	check("process samples", strings.Join(names, " "), "1/1234/python3 1/1240/jupyter-lab 2/77/ffmpeg")
	mem, _ := d.GetMemoryInfo_v2()
	check("used memory", mem.Used, uint64(51200*fakegpu.MiB))
	mode, _ = handle(t, f, 1).GetVirtualizationMode()
	check("second GPU mode", mode, nvml.GPU_VIRTUALIZATION_MODE_NONE)
}

func TestVgpuScenarios(t *testing.T) {
	tests := []struct {
		name  string
		json  string
		check func(t *testing.T, f *fakegpu.Fleet)
	}{
		{"vgpu_host alone makes a host without instances", `{"gpus": [{"vgpu_host": true}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if !f.GPU(0).VgpuHost() || f.GPU(0).Vgpus() != nil {
				t.Errorf("host %v, instances %v", f.GPU(0).VgpuHost(), f.GPU(0).Vgpus())
			}
		}},
		{"instances make a host", `{"gpus": [{"vgpu_instances": [{}]}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if !f.GPU(0).VgpuHost() || len(f.GPU(0).Vgpus()) != 1 || f.GPU(0).Vgpus()[0].Type() != "NVIDIA H100-20C" {
				t.Errorf("host %v, instances %v", f.GPU(0).VgpuHost(), f.GPU(0).Vgpus())
			}
		}},
		{"an empty list keeps a GPU out of host mode", `{"gpus": [{"vgpu_instances": []}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if f.GPU(0).VgpuHost() {
				t.Error("host")
			}
		}},
		{"a preset's instances stay", `{"preset": "vgpu-h100", "gpus": [{"gpu_util": 3}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			p, _ := fakegpu.Preset("vgpu-h100")
			if a, b := f.GPU(0).Vgpus(), p.GPU(0).Vgpus(); len(a) != 4 || a[0].ID() != b[0].ID() {
				t.Errorf("instances %v, want the preset's %v", a, b)
			}
		}},
		{"vgpu_instances replace a preset's", `{"preset": "vgpu-h100", "gpus": [{}, {"vgpu_instances": [{"id": 5}]}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if v := f.GPU(1).Vgpus(); len(v) != 1 || v[0].ID() != 5 || len(f.GPU(0).Vgpus()) != 4 {
				t.Errorf("GPU 1 instances %v", v)
			}
		}},
		{"an empty list empties a preset's host", `{"preset": "vgpu-h100", "gpus": [{"vgpu_instances": []}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if !f.GPU(0).VgpuHost() || f.GPU(0).Vgpus() != nil {
				t.Errorf("host %v, instances %v", f.GPU(0).VgpuHost(), f.GPU(0).Vgpus())
			}
		}},
		{"vgpu_host false drops a preset's instances", `{"preset": "vgpu-h100", "gpus": [{"vgpu_host": false}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if f.GPU(0).VgpuHost() || f.GPU(0).Vgpus() != nil {
				t.Errorf("host %v, instances %v", f.GPU(0).VgpuHost(), f.GPU(0).Vgpus())
			}
			if _, ret := f.GPU(0).Device().GetActiveVgpus(); ret != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("GetActiveVgpus = %v", ret)
			}
		}},
		{"a MIG-backed instance", `{"gpus": [{"vgpu_instances": [{"gpu_instance_id": 3}]}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if gi, _ := f.GPU(0).Vgpus()[0].Instance().GetGpuInstanceId(); gi != 3 {
				t.Errorf("GPU instance %d", gi)
			}
		}},
		{"accounting off, explicitly", `{"gpus": [{"vgpu_instances": [{"accounting": {"enabled": false, "buffer_size": 5}}]}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if m, _ := f.GPU(0).Vgpus()[0].Instance().GetAccountingMode(); m != nvml.FEATURE_DISABLED {
				t.Errorf("accounting %v", m)
			}
		}},
		{"a preset GPU made a host", `{"preset": "dgx-h100", "gpus": [{"vgpu_instances": [{"sm_util": 9}]}]}`, func(t *testing.T, f *fakegpu.Fleet) {
			if v := f.GPU(0).Vgpus(); len(v) != 1 {
				t.Errorf("instances %v", v)
			}
			if p, _ := f.GPU(0).Device().GetComputeRunningProcesses(); len(p) != 0 {
				t.Errorf("a vGPU host runs the preset's host process %v", p)
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

func TestMalformedVgpuScenarios(t *testing.T) {
	gpu := func(instances string) string { return `{"gpus": [{"vgpu_instances": [` + instances + `]}]}` }
	tests := []struct {
		name    string
		json    string
		path    string
		problem string
	}{
		{"vgpu_instances not an array", `{"gpus": [{"vgpu_instances": {}}]}`, "gpus[0].vgpu_instances", "want an array, got an object"},
		{"vgpu_host not a bool", `{"gpus": [{"vgpu_host": 1}]}`, "gpus[0].vgpu_host", "want true or false, got number"},
		{"instances without a host", `{"gpus": [{"vgpu_host": false, "vgpu_instances": [{}]}]}`,
			"gpus[0].vgpu_instances", `vGPU instances need a vGPU host, got "vgpu_host": false`},
		{"too many instances", gpu(strings.Repeat(`{},`, 64) + `{}`), "gpus[0].vgpu_instances", "at most 64 vGPU instances per GPU, got 65"},
		{"a null instance", gpu(`null`), "gpus[0].vgpu_instances[0]", "want an object, got null"},
		{"an unknown instance key", gpu(`{"vmid": "x"}`), "gpus[0].vgpu_instances[0].vmid", "unknown key"},
		{"a repeated instance key", gpu(`{}, {"vm_id": "a", "vm_id": "b"}`), "gpus[0].vgpu_instances[1].vm_id", "duplicate key"},
		{"a repeated accounting key", gpu(`{"accounting": {"enabled": true, "enabled": false}}`), "gpus[0].vgpu_instances[0].accounting.enabled", "duplicate key"},
		{"ID 0", gpu(`{"id": 0}`), "gpus[0].vgpu_instances[0].id", "want a non-zero ID"},
		{"a negative ID", gpu(`{"id": -1}`), "gpus[0].vgpu_instances[0].id", "want a whole number 0..4294967295, got number -1"},
		{"a repeated ID", gpu(`{"id": 7}, {"id": 7}`), "gpus[0].vgpu_instances[1].id", "7 is also the ID of gpus[0].vgpu_instances[0]"},
		{"an ID repeated on another GPU", `{"gpus": [{"vgpu_instances": [{"id": 7}]}, {"vgpu_instances": [{"id": 7}]}]}`,
			"gpus[1].vgpu_instances[0].id", "7 is also the ID of gpus[0].vgpu_instances[0]"},
		{"a malformed UUID", gpu(`{"uuid": "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}`), "gpus[0].vgpu_instances[0].uuid",
			`want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (hex, no prefix), got "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"`},
		{"a repeated UUID", gpu(`{"uuid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}, {"uuid": "AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee"}`),
			"gpus[0].vgpu_instances[1].uuid", "is also the UUID of gpus[0].vgpu_instances[0]"},
		{"a UUID repeated on another GPU", `{"gpus": [{"vgpu_instances": [{"uuid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}]},
			{"vgpu_instances": [{}, {"uuid": "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}]}]}`,
			"gpus[1].vgpu_instances[1].uuid", "is also the UUID of gpus[0].vgpu_instances[0]"},
		{"a type without a size", gpu(`{"type": "NVIDIA H100"}`), "gpus[0].vgpu_instances[0].type",
			`want a type name ending in "-<GiB><class letter>" like "NVIDIA H100-20C" (or a "framebuffer_mib"), got "NVIDIA H100"`},
		{"a type of size 0", gpu(`{"type": "NVIDIA H100-0C"}`), "gpus[0].vgpu_instances[0].type", `got "NVIDIA H100-0C"`},
		{"type ID 0", gpu(`{"type_id": 0}`), "gpus[0].vgpu_instances[0].type_id", "want a non-zero type ID"},
		{"one type ID for two types", gpu(`{"type_id": 9}, {"type_id": 9, "type": "NVIDIA H100-10C"}`), "gpus[0].vgpu_instances[1].type_id",
			`9 is also the type ID of "NVIDIA H100-20C" (20480 MiB), set by gpus[0].vgpu_instances[0]`},
		{"one type ID for two types on two GPUs", `{"gpus": [{"vgpu_instances": [{"type_id": 9}]}, {"vgpu_instances": [{"type_id": 9, "framebuffer_mib": 100}]}]}`,
			"gpus[1].vgpu_instances[0].type_id", `9 is also the type ID of "NVIDIA H100-20C" (20480 MiB), set by gpus[0].vgpu_instances[0]`},
		{"a zero framebuffer", gpu(`{"framebuffer_mib": 0}`), "gpus[0].vgpu_instances[0].framebuffer_mib", "want a positive size, got 0"},
		{"a huge framebuffer", gpu(`{"framebuffer_mib": 1099511627777}`), "gpus[0].vgpu_instances[0].framebuffer_mib", "want at most 1073741824 MiB"},
		{"a framebuffer beyond the GPU's", gpu(`{"framebuffer_mib": 90000}`), "gpus[0].vgpu_instances[0].framebuffer_mib",
			"want at most the GPU's 81920 MiB, got 90000"},
		{"a type beyond what is left", gpu(`{"type": "NVIDIA H100-40C"}, {"type": "NVIDIA H100-48C"}`), "gpus[0].vgpu_instances[1].type",
			"the instances' framebuffers would take 90112 MiB, more than the GPU's 81920 MiB"},
		{"a preset's instances beyond a smaller GPU", `{"preset": "vgpu-h100", "gpus": [{"memory_total_mib": 50000}]}`,
			"gpus[0].vgpu_instances[2].framebuffer_mib", "the instances' framebuffers would take 61440 MiB, more than the GPU's 50000 MiB"},
		{"an empty VM ID", gpu(`{"vm_id": ""}`), "gpus[0].vgpu_instances[0].vm_id", "want a VM ID"},
		{"a bad VM ID type", gpu(`{"vm_id_type": "name"}`), "gpus[0].vgpu_instances[0].vm_id_type", `want "uuid" or "domain", got "name"`},
		{"fb used beyond the framebuffer", gpu(`{"fb_used_mib": 30000}`), "gpus[0].vgpu_instances[0].fb_used_mib",
			"30000 MiB is more than the framebuffer, 20480 MiB"},
		{"a huge fb used", gpu(`{"fb_used_mib": 1099511627777}`), "gpus[0].vgpu_instances[0].fb_used_mib", "want at most"},
		{"a licence that is not a bool", gpu(`{"licensed": "yes"}`), "gpus[0].vgpu_instances[0].licensed", "want true or false, got string"},
		{"a bad expiry", gpu(`{"licensed": true, "license_expiry": "2026-13-01T00:00:00Z"}`), "gpus[0].vgpu_instances[0].license_expiry",
			`want an RFC 3339 time like "2026-12-31T23:59:59Z", got "2026-13-01T00:00:00Z"`},
		{"an expiry without a time", gpu(`{"license_expiry": "2026-12-31"}`), "gpus[0].vgpu_instances[0].license_expiry", "want an RFC 3339 time"},
		{"an expiry that is not a string", gpu(`{"license_expiry": 2026}`), "gpus[0].vgpu_instances[0].license_expiry", "want a string, got number"},
		{"SM above 100", gpu(`{"sm_util": 101}`), "gpus[0].vgpu_instances[0].sm_util", "want a percentage 0..100, got 101"},
		{"FB above 100", gpu(`{"fb_util": 200}`), "gpus[0].vgpu_instances[0].fb_util", "want a percentage 0..100, got 200"},
		{"encoder above 100", gpu(`{"enc_util": 101}`), "gpus[0].vgpu_instances[0].enc_util", "0..100"},
		{"decoder above 100", gpu(`{"dec_util": 101}`), "gpus[0].vgpu_instances[0].dec_util", "0..100"},
		{"encoder capacity above 100", gpu(`{"encoder_capacity": 150}`), "gpus[0].vgpu_instances[0].encoder_capacity",
			"want a percentage 0..100, got 150"},
		{"a string for a number", gpu(`{"sm_util": "high"}`), "gpus[0].vgpu_instances[0].sm_util", "want a whole number 0..4294967295, got string"},
		{"ECC not a bool", gpu(`{"ecc": "on"}`), "gpus[0].vgpu_instances[0].ecc", "want true or false"},
		{"a negative placement", gpu(`{"placement_id": -2}`), "gpus[0].vgpu_instances[0].placement_id", "got number -2"},
		{"processes not an array", gpu(`{"processes": {}}`), "gpus[0].vgpu_instances[0].processes", "want an array, got an object"},
		{"a process without PID", gpu(`{"processes": [{"name": "x"}]}`), "gpus[0].vgpu_instances[0].processes[0].pid", "required"},
		{"PID 0", gpu(`{"processes": [{"pid": 0}]}`), "gpus[0].vgpu_instances[0].processes[0].pid", "want a non-zero PID"},
		{"a repeated PID", gpu(`{"processes": [{"pid": 1}, {"pid": 1}]}`), "gpus[0].vgpu_instances[0].processes[1].pid",
			"1 is also the PID of gpus[0].vgpu_instances[0].processes[0]"},
		{"a process type", gpu(`{"processes": [{"pid": 1, "type": "C"}]}`), "gpus[0].vgpu_instances[0].processes[0].type", "unknown key"},
		{"process SM above 100", gpu(`{"processes": [{"pid": 1, "sm_util": 101}]}`), "gpus[0].vgpu_instances[0].processes[0].sm_util", "0..100, got 101"},
		{"process memory above 100", gpu(`{"processes": [{"pid": 1, "mem_util": 101}]}`), "gpus[0].vgpu_instances[0].processes[0].mem_util", "0..100"},
		{"process encoder above 100", gpu(`{"processes": [{"pid": 1, "enc_util": 101}]}`), "gpus[0].vgpu_instances[0].processes[0].enc_util", "0..100"},
		{"process decoder above 100", gpu(`{"processes": [{"pid": 1, "dec_util": 101}]}`), "gpus[0].vgpu_instances[0].processes[0].dec_util", "0..100"},
		{"a null process", gpu(`{"processes": [null]}`), "gpus[0].vgpu_instances[0].processes[0]", "want an object, got null"},
		{"accounting not an object", gpu(`{"accounting": true}`), "gpus[0].vgpu_instances[0].accounting", "want an object, got a boolean"},
		{"an unknown accounting key", gpu(`{"accounting": {"on": true}}`), "gpus[0].vgpu_instances[0].accounting.on", "unknown key"},
		{"accounting enabled not a bool", gpu(`{"accounting": {"enabled": 1}}`), "gpus[0].vgpu_instances[0].accounting.enabled", "want true or false"},
		{"a zero buffer size", gpu(`{"accounting": {"buffer_size": 0}}`), "gpus[0].vgpu_instances[0].accounting.buffer_size", "want a positive size, got 0"},
		{"a negative buffer size", gpu(`{"accounting": {"buffer_size": -1}}`), "gpus[0].vgpu_instances[0].accounting.buffer_size", "got -1"},
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
			if !strings.Contains(err.Error(), tt.path+": "+tt.problem) && !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not say %q", err, tt.problem)
			}
		})
	}
	if slices.Contains(fakegpu.PresetNames(), "vgpu-h100") {
		// A preset's instances keep their IDs: a scenario repeating one is
		// an error naming the scenario's key.
		p, _ := fakegpu.Preset("vgpu-h100")
		id := p.GPU(0).Vgpus()[0].ID()
		_, err := fakegpu.ParseScenario([]byte(fmt.Sprintf(`{"preset": "vgpu-h100", "gpus": [{}, {}, {"vgpu_instances": [{"id": %d}]}]}`, id)))
		var se *fakegpu.ScenarioError
		if !errors.As(err, &se) || se.Path != "gpus[2].vgpu_instances[0].id" || !strings.Contains(se.Problem, "is also the ID of gpus[0].vgpu_instances[0]") {
			t.Errorf("an ID of a preset's instance: %v", err)
		}
	}
}
