//go:build cgo

package nvgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// vgpuHost is one H100 vGPU host running two instances, and a bare-metal
// H100 beside it.
func vgpuHost(t *testing.T) (*nvgo.Library, *fakegpu.Fleet) {
	t.Helper()
	expiry := time.Date(2027, time.March, 4, 5, 6, 7, 0, time.UTC)
	gi := uint32(3)
	fleet := fakegpu.New(
		fakegpu.GPUSpec{VgpuHost: true, Vgpus: []fakegpu.VgpuSpec{
			{
				ID: 101, UUID: "11111111-2222-3333-4444-555555555555", Type: "NVIDIA H100-20C",
				VMID: "9d3c5c1e-0000-4000-8000-000000000001", VMDriverVersion: "580.95.05",
				FBUsedMiB: 6144, Licensed: true, LicenseExpiry: expiry, PlacementID: 4,
				SM: 40, FB: 12, Enc: 1, Dec: 2,
				Processes:  []fakegpu.VgpuProcess{{PID: 1234, Name: "python3", SM: 35, Mem: 10}},
				Accounting: true,
			},
			{
				ID: 102, Type: "NVIDIA H100-40C", VMID: "7", VMIDType: "domain",
				FrameRateLimit: 60, EncoderCapacity: 50, GPUInstanceID: &gi,
			},
		}},
		fakegpu.GPUSpec{},
	)
	return openOn(t, fleet), fleet
}

func instancesOf(t *testing.T, lib *nvgo.Library, gpu int) []*nvgo.VgpuInstance {
	t.Helper()
	d, err := lib.DeviceByIndex(gpu)
	must(t, err)
	vs, err := d.VgpuInstances()
	must(t, err)
	return vs
}

func vgpuCalls(fleet *fakegpu.Fleet) int {
	n := 0
	for name, c := range fleet.Calls() {
		if strings.HasPrefix(name, "VgpuInstance.") || strings.HasPrefix(name, "VgpuTypeId.") ||
			strings.Contains(name, "Vgpu") || strings.Contains(name, "Virtualization") {
			n += c
		}
	}
	return n
}

// On a GPU that is not a vGPU host, listing is empty and not an error, and
// once the virtualization mode is known it costs no NVML call at all.
func TestVgpuInstancesOfABareMetalGPUAreNone(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(*fakegpu.Fleet)
		// calls is how many vGPU-related NVML calls the first listing makes.
		calls int
	}{
		{"mode none", func(*fakegpu.Fleet) {}, 1},
		{"mode unsupported, listing unsupported", func(f *fakegpu.Fleet) {
			f.GPU(0).Unsupported("GetVirtualizationMode")
		}, 2},
		{"old driver without the vGPU functions", func(f *fakegpu.Fleet) {
			f.MissingSymbols("nvmlDeviceGetVirtualizationMode", "nvmlDeviceGetActiveVgpus",
				"nvmlDeviceGetVgpuUtilization", "nvmlDeviceGetVgpuProcessUtilization")
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fleet, err := fakegpu.Preset("dgx-h100")
			must(t, err)
			tc.prepare(fleet)
			lib := openOn(t, fleet)
			d, err := lib.DeviceByIndex(0)
			must(t, err)
			fleet.ResetCalls()
			for round := 0; round < 3; round++ {
				vs, err := d.VgpuInstances()
				if err != nil || len(vs) != 0 {
					t.Fatalf("round %d: VgpuInstances = %v, %v; want none, nil", round, vs, err)
				}
				if round == 0 {
					if got := vgpuCalls(fleet); got != tc.calls {
						t.Errorf("first listing made %d vGPU calls (%v), want %d", got, fleet.Calls(), tc.calls)
					}
					fleet.ResetCalls()
				} else if got := fleet.TotalCalls(); got != 0 {
					t.Errorf("round %d made %d NVML calls (%v), want 0", round, got, fleet.Calls())
				}
			}
			s := d.Snapshot(nvgo.FieldsAll)
			if s.VgpuInstances != nil || s.VgpuInstancesErr != nil || s.Err != nil {
				t.Errorf("snapshot: instances %v, err %v, device err %v; want none", s.VgpuInstances, s.VgpuInstancesErr, s.Err)
			}
			all, err := lib.VgpuInstances()
			if err != nil || len(all) != 0 {
				t.Errorf("Library.VgpuInstances = %v, %v; want none, nil", all, err)
			}
		})
	}
}

func TestVirtualizationMode(t *testing.T) {
	lib, _ := vgpuHost(t)
	for i, want := range []string{"host vgpu", "none"} {
		d, err := lib.DeviceByIndex(i)
		must(t, err)
		if got := d.VirtualizationMode().String(); got != want {
			t.Errorf("GPU %d: VirtualizationMode = %s, want %s", i, got, want)
		}
	}
	if !nvgo.VirtualizationHostVGPU.IsVgpuHost() || nvgo.VirtualizationPassthrough.IsVgpuHost() {
		t.Error("IsVgpuHost is wrong")
	}
}

func TestVgpuInstanceIdentityAndState(t *testing.T) {
	lib, _ := vgpuHost(t)
	vs := instancesOf(t, lib, 0)
	if len(vs) != 2 {
		t.Fatalf("%d instances, want 2", len(vs))
	}
	a, b := vs[0], vs[1]
	str := func(v fmt.Stringer) string { return v.String() }
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"ID", fmt.Sprint(a.ID()), "101"},
		{"Device", fmt.Sprint(a.Device().Index()), "0"},
		{"String", a.String(), "GPU 0 vGPU 101"},
		{"UUID", str(a.UUID()), "11111111-2222-3333-4444-555555555555"},
		{"Type name", nvgo.FlatMap(a.Type(), func(t nvgo.VgpuType) nvgo.Value[string] { return t.Name }).String(), "NVIDIA H100-20C"},
		{"Type class", nvgo.FlatMap(a.Type(), func(t nvgo.VgpuType) nvgo.Value[string] { return t.Class }).String(), "Compute"},
		{"Type framebuffer", a.Type().Or(nvgo.VgpuType{}).Framebuffer.String(), "20.00GiB"},
		{"VM", fmt.Sprint(a.VM().Or(nvgo.VM{})), "{9d3c5c1e-0000-4000-8000-000000000001 uuid}"},
		{"VM of a Xen domain", fmt.Sprint(b.VM().Or(nvgo.VM{})), "{7 domain}"},
		{"VM driver", str(a.VMDriverVersion()), "580.95.05"},
		{"framebuffer used", str(a.FramebufferUsed()), "6144MiB"},
		{"frame-rate limiter off", a.FrameRateLimit().Reason().String(), "not supported"},
		{"frame-rate limit", str(b.FrameRateLimit()), "60"},
		{"encoder capacity", str(b.EncoderCapacity()), "50%"},
		{"ECC", str(a.ECCMode()), "On"},
		{"placement", str(a.PlacementID()), "4"},
		{"not MIG-backed", a.GPUInstanceID().Reason().String(), "not supported"},
		{"MIG-backed", str(b.GPUInstanceID()), "3"},
		{"licensed", fmt.Sprint(a.License().Or(nvgo.VgpuLicense{}).Licensed), "true"},
		{"license state", a.License().Or(nvgo.VgpuLicense{}).State.String(), "licensed"},
		{"license expiry", a.License().Or(nvgo.VgpuLicense{}).Expiry.Or(time.Time{}).Format(time.RFC3339), "2027-03-04T05:06:07Z"},
		{"unlicensed", b.License().Or(nvgo.VgpuLicense{}).State.String(), "unlicensed"},
		{"unlicensed has no expiry", b.License().Or(nvgo.VgpuLicense{}).Expiry.Reason().String(), "not reported"},
		{"accounting on", str(a.AccountingMode()), "On"},
		{"accounting off", str(b.AccountingMode()), "Off"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
	// The same objects come back while the instances live.
	again := instancesOf(t, lib, 0)
	if again[0] != a || again[1] != b {
		t.Error("a second listing returned new objects for the same instances")
	}
}

// Identity is read once; state on every call.
func TestVgpuIdentityIsReadOnce(t *testing.T) {
	lib, fleet := vgpuHost(t)
	v := instancesOf(t, lib, 0)[0]
	_ = v.UUID()
	_ = v.Type()
	_ = v.VM()
	fleet.ResetCalls()
	for i := 0; i < 3; i++ {
		_, _, _ = v.UUID(), v.Type(), v.VM()
	}
	if n := fleet.TotalCalls(); n != 0 {
		t.Errorf("identity re-read: %d calls (%v)", n, fleet.Calls())
	}
	fleet.GPU(0).Vgpu(101).SetFBUsed(1 << 30)
	if got := v.FramebufferUsed().String(); got != "1024MiB" {
		t.Errorf("framebuffer used after a change = %s, want 1024MiB", got)
	}
}

// The utilization cursor: every call asks only for samples newer than the
// newest seen, an instance keeps its newest sample, and one without a newer
// sample keeps the one it had.
func TestVgpuUtilizationFollowsTheCursor(t *testing.T) {
	lib, fleet := vgpuHost(t)
	vs := instancesOf(t, lib, 0)
	a, b := vs[0], vs[1]
	fa, fb := fleet.GPU(0).Vgpu(101), fleet.GPU(0).Vgpu(102)
	describe := func(v *nvgo.VgpuInstance) string {
		u, ok := v.Utilization().Get()
		if !ok {
			return "N/A"
		}
		return fmt.Sprintf("sm %v fb %v enc %v dec %v at +%v", u.SMUtilization, u.FramebufferUtilization, u.EncoderUtilization, u.DecoderUtilization, u.Time.Sub(time.UnixMicro(fleet.Now().UnixMicro())))
	}
	t0 := fleet.Now()
	_ = t0
	steps := []struct {
		name  string
		do    func()
		wantA string
		wantB string
	}{
		{"the samples taken at creation", func() {}, "sm 40% fb 12% enc 1% dec 2% at +0s", "sm 0% fb 0% enc 0% dec 0% at +0s"},
		{"nothing newer: the same sample", func() {}, "sm 40% fb 12% enc 1% dec 2% at +0s", "sm 0% fb 0% enc 0% dec 0% at +0s"},
		{"a new sample of one instance", func() {
			fleet.Advance(time.Second)
			fa.SetUtilization(70, 20, 0, 0)
		}, "sm 70% fb 20% enc 0% dec 0% at +0s", "sm 0% fb 0% enc 0% dec 0% at +0s"},
		{"one more second", func() {
			fb.SetUtilization(15, 5, 0, 0)
			fleet.Advance(time.Second)
		}, "sm 70% fb 20% enc 0% dec 0% at +0s", "sm 15% fb 5% enc 0% dec 0% at +0s"},
	}
	for _, st := range steps {
		st.do()
		if got := describe(a); got != st.wantA {
			t.Errorf("%s: instance 101 %s, want %s", st.name, got, st.wantA)
		}
		if got := describe(b); got != st.wantB {
			t.Errorf("%s: instance 102 %s, want %s", st.name, got, st.wantB)
		}
	}
}

func TestVgpuProcesses(t *testing.T) {
	lib, fleet := vgpuHost(t)
	vs := instancesOf(t, lib, 0)
	a, b := vs[0], vs[1]
	fa := fleet.GPU(0).Vgpu(101)
	must(t, fa.StartProcess(fakegpu.VgpuProcess{PID: 77, Name: "ffmpeg", Enc: 40, Dec: 30}))
	ps, err := a.Processes()
	must(t, err)
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%d %s sm %v mem %v enc %v dec %v on %d", p.PID, p.Name, p.SMUtilization, p.MemoryUtilization, p.EncoderUtilization, p.DecoderUtilization, p.Instance))
	}
	want := []string{"77 ffmpeg sm 0% mem 0% enc 40% dec 30% on 101", "1234 python3 sm 35% mem 10% enc 0% dec 0% on 101"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("processes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps, err := b.Processes(); err != nil || len(ps) != 0 {
		t.Errorf("idle instance: processes %v, %v; want none", ps, err)
	}
	// A process that goes idle is no longer reported once newer samples
	// of others pass it by more than a second.
	fa.SetProcessUtilization(1234, 0, 0, 0, 0)
	fleet.Advance(2 * time.Second)
	ps, err = a.Processes()
	must(t, err)
	if len(ps) != 1 || ps[0].PID != 77 {
		t.Errorf("after 1234 went idle: %v, want only 77", ps)
	}
}

func TestVgpuAccounting(t *testing.T) {
	lib, fleet := vgpuHost(t)
	vs := instancesOf(t, lib, 0)
	a, b := vs[0], vs[1]
	fa := fleet.GPU(0).Vgpu(101)
	fleet.Advance(10 * time.Second)
	must(t, fa.StartProcess(fakegpu.VgpuProcess{PID: 2000, SM: 80, Mem: 40}))
	fleet.Advance(5 * time.Second)
	fa.StopProcess(2000)

	pids, err := a.AccountedPIDs()
	must(t, err)
	if fmt.Sprint(pids) != "[1234 2000]" {
		t.Errorf("AccountedPIDs = %v, want [1234 2000]", pids)
	}
	rec, ok := a.ProcessAccounting(2000).Get()
	if !ok || rec.GPUUtilization.String() != "80%" || rec.MemoryUtilization.String() != "40%" || rec.Running || rec.RunningTime.String() != "5s" {
		t.Errorf("record of 2000 = %+v", a.ProcessAccounting(2000))
	}
	running, ok := a.ProcessAccounting(1234).Get()
	if !ok || !running.Running || running.RunningTime.Reason() != nvgo.NotReported || running.GPUUtilization.String() != "35%" {
		t.Errorf("record of running 1234 = %+v", a.ProcessAccounting(1234))
	}
	if v := a.ProcessAccounting(999); v.Reason() != nvgo.NotReported || !errors.Is(v.Err(), nvgo.ErrNotFound) {
		t.Errorf("no record: %v (%v, %v)", v, v.Reason(), v.Err())
	}
	if v := a.ProcessAccounting(-1); v.Reason() != nvgo.NotReported {
		t.Errorf("negative pid: %v", v.Reason())
	}

	// Clearing needs root: the driver's NO_PERMISSION comes back as ErrNoPermission.
	fa.Fail("ClearAccountingPids", nvml.ERROR_NO_PERMISSION)
	if err := a.ClearAccountedPIDs(); !errors.Is(err, nvgo.ErrNoPermission) {
		t.Errorf("clear without root: %v, want ErrNoPermission", err)
	}
	fa.ClearFail("ClearAccountingPids")
	must(t, a.ClearAccountedPIDs())
	pids, err = a.AccountedPIDs()
	must(t, err)
	if fmt.Sprint(pids) != "[1234]" {
		t.Errorf("after clearing: %v, want the running [1234]", pids)
	}

	// Accounting off: NVML's NOT_SUPPORTED, explained.
	for name, err := range map[string]error{
		"pids":  func() error { _, err := b.AccountedPIDs(); return err }(),
		"stats": b.ProcessAccounting(1).Err(),
		"clear": b.ClearAccountedPIDs(),
	} {
		if !errors.Is(err, nvgo.ErrAccountingOff) || !errors.Is(err, nvgo.ErrNotSupported) {
			t.Errorf("%s with accounting off: %v", name, err)
		}
	}
}

// An instance destroyed after it was listed reads as gone, never as a
// crash or a zero.
func TestVgpuInstanceDestroyedMidRead(t *testing.T) {
	t.Run("between list and read", func(t *testing.T) {
		lib, fleet := vgpuHost(t)
		v := instancesOf(t, lib, 0)[1]
		fleet.GPU(0).Vgpu(102).Destroy()
		reads := map[string]nvgo.Reason{
			"UUID":              v.UUID().Reason(),
			"Type":              v.Type().Reason(),
			"FramebufferUsed":   v.FramebufferUsed().Reason(),
			"License":           v.License().Reason(),
			"AccountingMode":    v.AccountingMode().Reason(),
			"ProcessAccounting": v.ProcessAccounting(1).Reason(),
		}
		for name, r := range reads {
			if r != nvgo.InstanceGone {
				t.Errorf("%s: reason %v, want InstanceGone", name, r)
			}
		}
		err := v.FramebufferUsed().Err()
		if !errors.Is(err, nvgo.ErrVgpuGone) || !errors.Is(err, nvgo.ErrNotFound) {
			t.Errorf("error %v matches neither ErrVgpuGone nor ErrNotFound", err)
		}
		if vs := instancesOf(t, lib, 0); len(vs) != 1 || vs[0].ID() != 101 {
			t.Errorf("after destroying 102 the list is %v", vs)
		}
	})
	t.Run("in the middle of a snapshot", func(t *testing.T) {
		lib, fleet := vgpuHost(t)
		d, err := lib.DeviceByIndex(0)
		must(t, err)
		fleet.GPU(0).Vgpu(102).DestroyOnCall("GetFbUsage")
		s := d.Snapshot(nvgo.FieldVgpuInstances)
		if len(s.VgpuInstances) != 2 {
			t.Fatalf("%d instances, want the 2 listed", len(s.VgpuInstances))
		}
		live, gone := s.VgpuInstances[0], s.VgpuInstances[1]
		if live.Err != nil || live.SMUtilization.String() != "40%" {
			t.Errorf("the live instance: err %v, sm %s", live.Err, live.SMUtilization)
		}
		if !errors.Is(gone.Err, nvgo.ErrVgpuGone) || gone.Error == "" {
			t.Errorf("gone instance err = %v", gone.Err)
		}
		// Read before it vanished: real. From the failing read on: gone.
		if gone.TypeName.String() != "NVIDIA H100-40C" {
			t.Errorf("type read before it vanished = %s", gone.TypeName)
		}
		for name, r := range map[string]nvgo.Reason{
			"framebuffer used": gone.FramebufferUsed.Reason(),
			"licensed":         gone.Licensed.Reason(),
			"accounting":       gone.AccountingMode.Reason(),
			"sm utilization":   gone.SMUtilization.Reason(),
		} {
			if r != nvgo.InstanceGone {
				t.Errorf("%s: reason %v, want InstanceGone", name, r)
			}
		}
		if s.Err != nil {
			t.Errorf("one gone instance failed the whole GPU: %v", s.Err)
		}
		if n := fleet.CallCount("VgpuInstance.GetLicenseInfo"); n != 1 {
			t.Errorf("GetLicenseInfo called %d times, want 1 (only for the live instance)", n)
		}
	})
}

func TestVgpuInstancesOfALostGPU(t *testing.T) {
	lib, fleet := vgpuHost(t)
	d, err := lib.DeviceByIndex(0)
	must(t, err)
	_ = d.VirtualizationMode()
	fleet.GPU(0).Lose()
	if _, err := d.VgpuInstances(); !errors.Is(err, nvgo.ErrGPULost) {
		t.Errorf("VgpuInstances of a lost GPU: %v, want ErrGPULost", err)
	}
	s := d.Snapshot(nvgo.FieldVgpuInstances)
	if !errors.Is(s.VgpuInstancesErr, nvgo.ErrGPULost) || !errors.Is(s.Err, nvgo.ErrGPULost) {
		t.Errorf("snapshot of a lost GPU: instances err %v, err %v", s.VgpuInstancesErr, s.Err)
	}
	all, err := lib.VgpuInstances()
	if !errors.Is(err, nvgo.ErrGPULost) || len(all) != 0 {
		t.Errorf("Library.VgpuInstances = %v, %v; want the other GPU's (none) and ErrGPULost", all, err)
	}
}

// Failing calls are N/A with their reason, one field at a time.
func TestVgpuFailuresAreNA(t *testing.T) {
	cases := []struct {
		method string
		ret    nvml.Return
		read   func(v *nvgo.VgpuInstance) nvgo.Reason
		want   nvgo.Reason
	}{
		{"GetFbUsage", nvml.ERROR_NO_PERMISSION, func(v *nvgo.VgpuInstance) nvgo.Reason { return v.FramebufferUsed().Reason() }, nvgo.NoPermission},
		{"GetLicenseInfo", nvml.ERROR_NOT_SUPPORTED, func(v *nvgo.VgpuInstance) nvgo.Reason { return v.License().Reason() }, nvgo.NotSupported},
		{"GetVmDriverVersion", nvml.ERROR_UNKNOWN, func(v *nvgo.VgpuInstance) nvgo.Reason { return v.VMDriverVersion().Reason() }, nvgo.Failed},
		{"GetPlacementId", nvml.ERROR_NOT_SUPPORTED, func(v *nvgo.VgpuInstance) nvgo.Reason { return v.PlacementID().Reason() }, nvgo.NotSupported},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			lib, fleet := vgpuHost(t)
			fleet.GPU(0).Vgpu(101).Fail(tc.method, tc.ret)
			v := instancesOf(t, lib, 0)[0]
			if got := tc.read(v); got != tc.want {
				t.Errorf("reason %v, want %v", got, tc.want)
			}
			if v.UUID().IsNA() {
				t.Error("one failing call spoiled another")
			}
		})
	}
	t.Run("missing symbols", func(t *testing.T) {
		lib, fleet := vgpuHost(t)
		fleet.MissingSymbols("nvmlVgpuInstanceGetPlacementId", "nvmlVgpuInstanceGetLicenseInfo", "nvmlVgpuInstanceGetLicenseInfo_v2")
		v := instancesOf(t, lib, 0)[0]
		if r := v.PlacementID().Reason(); r != nvgo.FunctionMissing {
			t.Errorf("placement on an old driver: %v, want FunctionMissing", r)
		}
		if r := v.License().Reason(); r != nvgo.FunctionMissing {
			t.Errorf("license on an old driver: %v, want FunctionMissing", r)
		}
	})
}

func TestVgpuSnapshotJSON(t *testing.T) {
	lib, _ := vgpuHost(t)
	s, err := lib.Snapshot(context.Background(), nvgo.WithFields(nvgo.FieldsStatus))
	must(t, err)
	b, err := json.Marshal(s)
	must(t, err)
	var doc struct {
		Devices []struct {
			VirtualizationMode *string          `json:"virtualization_mode"`
			VgpuInstances      []map[string]any `json:"vgpu_instances"`
		} `json:"devices"`
	}
	must(t, json.Unmarshal(b, &doc))
	if m := doc.Devices[0].VirtualizationMode; m == nil || *m != "host vgpu" {
		t.Errorf("virtualization_mode = %v", m)
	}
	if m := doc.Devices[1].VirtualizationMode; m == nil || *m != "none" || doc.Devices[1].VgpuInstances != nil {
		t.Errorf("bare-metal GPU: mode %v, instances %v", m, doc.Devices[1].VgpuInstances)
	}
	in := doc.Devices[0].VgpuInstances
	if len(in) != 2 {
		t.Fatalf("%d instances in JSON", len(in))
	}
	want := map[string]any{
		"id": 101.0, "uuid": "11111111-2222-3333-4444-555555555555", "type_name": "NVIDIA H100-20C",
		"vm_id": "9d3c5c1e-0000-4000-8000-000000000001", "vm_id_type": "uuid", "licensed": true,
		"license_state": "licensed", "license_expiry": "2027-03-04T05:06:07Z", "sm_utilization": 40.0,
		"framebuffer_used": float64(6 << 30), "framebuffer_total": float64(20 << 30), "framebuffer_percent": 30.0,
		"frame_rate_limit": nil, "accounting_mode": true, "device_index": 0.0,
	}
	for k, w := range want {
		if got := in[0][k]; fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("%s = %v, want %v", k, got, w)
		}
	}
	procs, _ := in[0]["processes"].([]any)
	if len(procs) != 1 || fmt.Sprint(procs[0].(map[string]any)["pid"]) != "1234" {
		t.Errorf("processes = %v", in[0]["processes"])
	}
}

// cursorSpy is the fake fleet with its GPU handles wrapped to record the
// lastSeen arguments of the two vGPU sample reads.
type cursorSpy struct {
	*fakegpu.Fleet
	mu         sync.Mutex
	util, proc []uint64
}

func (s *cursorSpy) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	d, r := s.Fleet.DeviceGetHandleByIndex(i)
	if d == nil {
		return d, r
	}
	return spyDevice{Device: d, spy: s}, r
}

type spyDevice struct {
	nvml.Device
	spy *cursorSpy
}

func (d spyDevice) GetVgpuUtilization(lastSeen uint64) (nvml.ValueType, []nvml.VgpuInstanceUtilizationSample, nvml.Return) {
	d.spy.mu.Lock()
	d.spy.util = append(d.spy.util, lastSeen)
	d.spy.mu.Unlock()
	return d.Device.GetVgpuUtilization(lastSeen)
}

func (d spyDevice) GetVgpuProcessUtilization(lastSeen uint64) ([]nvml.VgpuProcessUtilizationSample, nvml.Return) {
	d.spy.mu.Lock()
	d.spy.proc = append(d.spy.proc, lastSeen)
	d.spy.mu.Unlock()
	return d.Device.GetVgpuProcessUtilization(lastSeen)
}

// Every sample read asks only for samples newer than the newest already
// seen, so none is reported twice: the device's reads and the
// accumulator's each keep their own cursor.
func TestVgpuSampleReadsPassTheCursor(t *testing.T) {
	_, fleet := vgpuHost(t)
	spy := &cursorSpy{Fleet: fleet}
	lib, err := nvgo.Open(nvgo.WithNVML(spy))
	must(t, err)
	defer lib.Close()
	us := func(tm time.Time) uint64 { return uint64(tm.UnixMicro()) }
	t0 := us(fleet.Now())
	v := instancesOf(t, lib, 0)[0]

	_ = v.Utilization()
	_ = v.Utilization()
	fleet.Advance(time.Second)
	t1 := us(fleet.Now())
	_ = v.Utilization()
	_ = v.Utilization()
	_, _ = v.Processes()
	_, _ = v.Processes()
	fleet.Advance(time.Second)
	_, _ = v.Processes()

	spy.mu.Lock()
	gotUtil, gotProc := fmt.Sprint(spy.util), fmt.Sprint(spy.proc)
	spy.util, spy.proc = nil, nil
	spy.mu.Unlock()
	if want := fmt.Sprint([]uint64{0, t0, t0, t1}); gotUtil != want {
		t.Errorf("GetVgpuUtilization lastSeen = %s, want %s", gotUtil, want)
	}
	if want := fmt.Sprint([]uint64{0, t1, t1}); gotProc != want {
		t.Errorf("GetVgpuProcessUtilization lastSeen = %s, want %s", gotProc, want)
	}

}

// A snapshot of one instance, and of instances whose device-wide sample
// reads fail: the failure is each instance's N/A, not the snapshot's.
func TestVgpuSnapshotOfOneInstanceAndFailingSampleReads(t *testing.T) {
	lib, _ := vgpuHost(t)
	s := instancesOf(t, lib, 0)[0].Snapshot()
	if s.ID != 101 || s.DeviceIndex != 0 || s.SMUtilization.String() != "40%" || len(s.Processes) != 1 ||
		s.LicensePermanent.String() != "false" || s.FramebufferPercent.String() != "30%" || s.Err != nil {
		t.Errorf("Snapshot() = id %d gpu %d sm %s procs %v permanent %s fb %s err %v",
			s.ID, s.DeviceIndex, s.SMUtilization, s.Processes, s.LicensePermanent, s.FramebufferPercent, s.Err)
	}

	cases := []struct {
		method      string
		ret         nvml.Return
		wantUtil    nvgo.Reason
		wantProcErr bool
	}{
		{"GetVgpuUtilization", nvml.ERROR_NO_PERMISSION, nvgo.NoPermission, false},
		{"GetVgpuProcessUtilization", nvml.ERROR_UNKNOWN, nvgo.Available, true},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			lib, fleet := vgpuHost(t)
			fleet.GPU(0).Fail(tc.method, tc.ret)
			d, err := lib.DeviceByIndex(0)
			must(t, err)
			snap := d.Snapshot(nvgo.FieldVgpuInstances)
			if snap.Err != nil || snap.VgpuInstancesErr != nil || len(snap.VgpuInstances) != 2 {
				t.Fatalf("device err %v, list err %v, %d instances", snap.Err, snap.VgpuInstancesErr, len(snap.VgpuInstances))
			}
			for _, v := range snap.VgpuInstances {
				if got := v.SMUtilization.Reason(); got != tc.wantUtil {
					t.Errorf("instance %d: utilization reason %v, want %v", v.ID, got, tc.wantUtil)
				}
				if got := v.ProcessesErr != nil; got != tc.wantProcErr || got != (v.Processes == nil) || got != (v.ProcessesError != "") {
					t.Errorf("instance %d: processes %v, err %v, text %q", v.ID, v.Processes, v.ProcessesErr, v.ProcessesError)
				}
				if v.UUID.IsNA() || v.Err != nil {
					t.Errorf("instance %d: a failed sample read spoiled its identity: %v", v.ID, v.Err)
				}
			}
		})
	}
}
