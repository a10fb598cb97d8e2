//go:build cgo

package fakegpu_test

import (
	"encoding/binary"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// The methods the library finds on the fake's handles by type assertion.
type (
	handler       interface{ Handle() uint32 }
	placementIDer interface {
		GetPlacementId() (nvml.VgpuPlacementId, nvml.Return)
	}
)

var vgpuUUIDRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// vgpuFleet returns an initialised fleet of one H100 in host-vGPU mode with
// the given instances.
func vgpuFleet(t *testing.T, specs ...fakegpu.VgpuSpec) (*fakegpu.Fleet, *fakegpu.GPU, nvml.Device) {
	t.Helper()
	f := fakegpu.New(fakegpu.GPUSpec{VgpuHost: true, Vgpus: specs})
	initFleet(t, f)
	return f, f.GPU(0), handle(t, f, 0)
}

// addVgpu adds an instance, failing the test on error.
func addVgpu(t *testing.T, g *fakegpu.GPU, s fakegpu.VgpuSpec) *fakegpu.Vgpu {
	t.Helper()
	v, err := g.AddVgpu(s)
	if err != nil {
		t.Fatalf("AddVgpu(%+v): %v", s, err)
	}
	return v
}

func u32(b [8]byte) uint32 { return binary.LittleEndian.Uint32(b[:4]) }

// vgpuUtil is a GetVgpuUtilization sample decoded.
type vgpuUtil struct {
	id               uint32
	ts               uint64
	sm, fb, enc, dec uint32
}

func decodeVgpuUtil(s []nvml.VgpuInstanceUtilizationSample) []vgpuUtil {
	var out []vgpuUtil
	for _, x := range s {
		out = append(out, vgpuUtil{x.VgpuInstance, x.TimeStamp, u32(x.SmUtil), u32(x.MemUtil), u32(x.EncUtil), u32(x.DecUtil)})
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestVgpuCallsOnGPUsThatAreNoHosts(t *testing.T) {
	tests := []struct {
		name     string
		dev      func(f *fakegpu.Fleet) nvml.Device
		wantMode nvml.GpuVirtualizationMode
		modeRet  nvml.Return
	}{
		{"a GPU outside host mode", func(f *fakegpu.Fleet) nvml.Device { return f.GPU(0).Device() },
			nvml.GPU_VIRTUALIZATION_MODE_NONE, nvml.SUCCESS},
		{"a MIG device of a GPU outside host mode", func(f *fakegpu.Fleet) nvml.Device { return f.GPU(0).MIGDevice(0).Device() },
			nvml.GPU_VIRTUALIZATION_MODE_NONE, nvml.ERROR_NOT_SUPPORTED},
		{"a MIG device of a host GPU", func(f *fakegpu.Fleet) nvml.Device { return f.GPU(1).MIGDevice(0).Device() },
			nvml.GPU_VIRTUALIZATION_MODE_NONE, nvml.ERROR_NOT_SUPPORTED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mig := fakegpu.GPUSpec{MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb"}}}
			host := mig
			host.VgpuHost = true
			f := fakegpu.New(mig, host)
			initFleet(t, f)
			d := tt.dev(f)
			if mode, ret := d.GetVirtualizationMode(); mode != tt.wantMode || ret != tt.modeRet {
				t.Errorf("GetVirtualizationMode = %v, %v; want %v, %v", mode, ret, tt.wantMode, tt.modeRet)
			}
			if l, ret := d.GetActiveVgpus(); l != nil || ret != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("GetActiveVgpus = %v, %v; want NOT_SUPPORTED", l, ret)
			}
			if _, s, ret := d.GetVgpuUtilization(0); s != nil || ret != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("GetVgpuUtilization = %v, %v; want NOT_SUPPORTED", s, ret)
			}
			if s, ret := d.GetVgpuProcessUtilization(0); s != nil || ret != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("GetVgpuProcessUtilization = %v, %v; want NOT_SUPPORTED", s, ret)
			}
			if _, ret := d.GetVgpuInstancesUtilizationInfo(); ret != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("GetVgpuInstancesUtilizationInfo = %v", ret)
			}
		})
	}
}

func TestVgpuHostWithoutInstances(t *testing.T) {
	f, g, d := vgpuFleet(t)
	if mode := must(d.GetVirtualizationMode())(t, "GetVirtualizationMode"); mode != nvml.GPU_VIRTUALIZATION_MODE_HOST_VGPU {
		t.Errorf("mode = %v, want HOST_VGPU", mode)
	}
	if l := must(d.GetActiveVgpus())(t, "GetActiveVgpus"); l == nil || len(l) != 0 {
		t.Errorf("GetActiveVgpus = %#v, want an empty non-nil list", l)
	}
	vt, s, ret := d.GetVgpuUtilization(0)
	if ret != nvml.SUCCESS || len(s) != 0 || vt != nvml.VALUE_TYPE_UNSIGNED_INT {
		t.Errorf("GetVgpuUtilization = %v, %v, %v; want no samples, SUCCESS", vt, s, ret)
	}
	if _, ret := d.GetVgpuProcessUtilization(0); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("GetVgpuProcessUtilization = %v, want NOT_FOUND", ret)
	}
	for _, name := range []string{"GetVgpuInstancesUtilizationInfo", "GetVgpuProcessesUtilizationInfo"} {
		ret := reflect.ValueOf(d).MethodByName(name).Call(nil)[1].Interface().(nvml.Return)
		if ret != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("%s = %v, want the NOT_SUPPORTED stub", name, ret)
		}
	}
	if g.Vgpus() != nil || !g.VgpuHost() || f.GPU(0).Vgpu(1) != nil {
		t.Errorf("Vgpus() = %v, VgpuHost() = %v", g.Vgpus(), g.VgpuHost())
	}
}

func TestVgpuListing(t *testing.T) {
	f, g, d := vgpuFleet(t, fakegpu.VgpuSpec{ID: 7}, fakegpu.VgpuSpec{}, fakegpu.VgpuSpec{ID: 3})
	v := g.Vgpus()
	added := addVgpu(t, g, fakegpu.VgpuSpec{Type: "NVIDIA H100-10C"})
	list := must(d.GetActiveVgpus())(t, "GetActiveVgpus")
	again := must(f.DeviceGetActiveVgpus(d))(t, "DeviceGetActiveVgpus")
	want := []nvml.VgpuInstance{v[0].Instance(), v[1].Instance(), v[2].Instance(), added.Instance()}
	if !slices.Equal(list, want) || !slices.Equal(again, want) {
		t.Fatalf("GetActiveVgpus = %v, %v; want the instances in creation order, the same handles", list, again)
	}
	for i, h := range list {
		id := h.(handler).Handle()
		if inst := g.Vgpu(id); inst == nil || inst.Instance() != h || inst.ID() != id || inst.Parent() != g {
			t.Errorf("handle %d: Vgpu(%d) = %v", i, id, inst)
		}
	}
	if v[0].ID() != 7 || v[2].ID() != 3 || v[1].ID() == 0 || added.ID() == 0 || added.ID() == v[1].ID() {
		t.Errorf("IDs = %d %d %d %d", v[0].ID(), v[1].ID(), v[2].ID(), added.ID())
	}
	if got := g.Vgpus(); !slices.Equal(got, append(v, added)) {
		t.Errorf("Vgpus() = %v", got)
	}
	if f.CallCount("VgpuInstance.Handle") != 0 {
		t.Error("Handle() was counted as an NVML call")
	}
}

func TestVgpuInstanceMethods(t *testing.T) {
	expiry := time.Date(2027, time.March, 4, 5, 6, 7, 0, time.FixedZone("CET", 3600))
	full := fakegpu.VgpuSpec{
		ID: 42, UUID: "AABBCCDD-0011-2233-4455-66778899aabb", Type: "NVIDIA H100-8Q", TypeID: 1077,
		VMID: "3", VMIDType: "domain", VMDriverVersion: "550.54.15", FBUsedMiB: 3000,
		Licensed: true, LicenseExpiry: expiry, FrameRateLimit: 60, EncoderCapacity: 50,
		ECC: ptr(false), PlacementID: 6, GPUInstanceID: ptr(uint32(2)),
	}
	f, g, _ := vgpuFleet(t, full, fakegpu.VgpuSpec{})
	f.SetDriverVersion("550.54.14")
	h, dflt := g.Vgpus()[0].Instance(), g.Vgpus()[1].Instance()
	type answer struct {
		v   any
		ret nvml.Return
	}
	a := func(v any, ret nvml.Return) answer { return answer{v, ret} }
	a3 := func(v any, w any, ret nvml.Return) answer { return answer{[2]any{v, w}, ret} }
	tests := []struct {
		name     string
		call     func(h nvml.VgpuInstance) answer
		want     answer // of the fully specified instance
		wantDflt answer // of the instance with every default
	}{
		{"GetUUID", func(h nvml.VgpuInstance) answer { return a(h.GetUUID()) },
			a("AABBCCDD-0011-2233-4455-66778899aabb", nvml.SUCCESS), a(g.Vgpus()[1].UUID(), nvml.SUCCESS)},
		{"GetMdevUUID", func(h nvml.VgpuInstance) answer { return a(h.GetMdevUUID()) },
			a("AABBCCDD-0011-2233-4455-66778899aabb", nvml.SUCCESS), a(g.Vgpus()[1].UUID(), nvml.SUCCESS)},
		{"GetVmDriverVersion", func(h nvml.VgpuInstance) answer { return a(h.GetVmDriverVersion()) },
			a("550.54.15", nvml.SUCCESS), a("550.54.14", nvml.SUCCESS)},
		{"GetFbUsage", func(h nvml.VgpuInstance) answer { return a(h.GetFbUsage()) },
			a(uint64(3000*fakegpu.MiB), nvml.SUCCESS), a(uint64(0), nvml.SUCCESS)},
		{"GetFrameRateLimit", func(h nvml.VgpuInstance) answer { return a(h.GetFrameRateLimit()) },
			a(uint32(60), nvml.SUCCESS), a(uint32(0), nvml.ERROR_NOT_SUPPORTED)},
		{"GetEccMode", func(h nvml.VgpuInstance) answer { return a(h.GetEccMode()) },
			a(nvml.FEATURE_DISABLED, nvml.SUCCESS), a(nvml.FEATURE_ENABLED, nvml.SUCCESS)},
		{"GetEncoderCapacity", func(h nvml.VgpuInstance) answer { return a(h.GetEncoderCapacity()) },
			a(50, nvml.SUCCESS), a(100, nvml.SUCCESS)},
		{"GetGpuInstanceId", func(h nvml.VgpuInstance) answer { return a(h.GetGpuInstanceId()) },
			a(2, nvml.SUCCESS), a(int(0xFFFFFFFF), nvml.SUCCESS)},
		{"GetGpuPciId", func(h nvml.VgpuInstance) answer { return a(h.GetGpuPciId()) },
			a("00000000:00:08.0", nvml.SUCCESS), a("00000000:00:09.0", nvml.SUCCESS)},
		{"GetLicenseStatus", func(h nvml.VgpuInstance) answer { return a(h.GetLicenseStatus()) },
			a(1, nvml.SUCCESS), a(0, nvml.SUCCESS)},
		{"GetAccountingMode", func(h nvml.VgpuInstance) answer { return a(h.GetAccountingMode()) },
			a(nvml.FEATURE_DISABLED, nvml.SUCCESS), a(nvml.FEATURE_DISABLED, nvml.SUCCESS)},
		{"GetPlacementId", func(h nvml.VgpuInstance) answer { return a(h.(placementIDer).GetPlacementId()) },
			a(nvml.VgpuPlacementId{Version: nvml.STRUCT_VERSION(nvml.VgpuPlacementId{}, 1), PlacementId: 6}, nvml.SUCCESS),
			a(nvml.VgpuPlacementId{Version: nvml.STRUCT_VERSION(nvml.VgpuPlacementId{}, 1)}, nvml.SUCCESS)},
		{"GetMetadata (a stub)", func(h nvml.VgpuInstance) answer { _, r := h.GetMetadata(); return a(nil, r) },
			a(nil, nvml.ERROR_NOT_SUPPORTED), a(nil, nvml.ERROR_NOT_SUPPORTED)},
		{"GetEncoderStats (a stub)", func(h nvml.VgpuInstance) answer { n, _, _, r := h.GetEncoderStats(); return a(n, r) },
			a(0, nvml.ERROR_NOT_SUPPORTED), a(0, nvml.ERROR_NOT_SUPPORTED)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.call(h); got != tt.want {
				t.Errorf("full: %v, want %v", got, tt.want)
			}
			if got := tt.call(dflt); got != tt.wantDflt {
				t.Errorf("defaults: %v, want %v", got, tt.wantDflt)
			}
		})
	}
	t.Run("GetVmID", func(t *testing.T) {
		if got := a3(h.GetVmID()); got != a3("3", nvml.VGPU_VM_ID_DOMAIN_ID, nvml.SUCCESS) {
			t.Errorf("full: %v", got)
		}
		id, typ, ret := dflt.GetVmID()
		if !vgpuUUIDRE.MatchString(id) || typ != nvml.VGPU_VM_ID_UUID || ret != nvml.SUCCESS {
			t.Errorf("defaults: %q %v %v, want a derived UUID", id, typ, ret)
		}
	})
	t.Run("GetType", func(t *testing.T) {
		typ := must(h.GetType())(t, "GetType")
		if typ.(handler).Handle() != 1077 || g.Vgpus()[0].TypeID() != 1077 {
			t.Errorf("type ID = %d", typ.(handler).Handle())
		}
		if name := must(typ.GetName())(t, "GetName"); name != "NVIDIA H100-8Q" || g.Vgpus()[0].Type() != name {
			t.Errorf("type name = %q", name)
		}
		if name := must(must(dflt.GetType())(t, "GetType").GetName())(t, "GetName"); name != "NVIDIA H100-20C" {
			t.Errorf("default type = %q, want NVIDIA H100-20C", name)
		}
	})
	t.Run("SetEncoderCapacity", func(t *testing.T) {
		for _, c := range []struct {
			set  int
			ret  nvml.Return
			want int
		}{{0, nvml.SUCCESS, 0}, {101, nvml.ERROR_INVALID_ARGUMENT, 0}, {-1, nvml.ERROR_INVALID_ARGUMENT, 0}, {75, nvml.SUCCESS, 75}} {
			if ret := h.SetEncoderCapacity(c.set); ret != c.ret {
				t.Errorf("SetEncoderCapacity(%d) = %v, want %v", c.set, ret, c.ret)
			}
			if got := must(h.GetEncoderCapacity())(t, "GetEncoderCapacity"); got != c.want {
				t.Errorf("after SetEncoderCapacity(%d): %d, want %d", c.set, got, c.want)
			}
		}
	})
	t.Run("control setters", func(t *testing.T) {
		v := g.Vgpus()[1]
		v.SetFBUsed(5 << 30)
		if got := must(dflt.GetFbUsage())(t, "GetFbUsage"); got != 5<<30 {
			t.Errorf("GetFbUsage = %d", got)
		}
		v.SetFBUsed(1 << 40)
		if got := must(dflt.GetFbUsage())(t, "GetFbUsage"); got != 20<<30 {
			t.Errorf("GetFbUsage = %d, want it capped at the 20 GiB framebuffer", got)
		}
		v.SetVMDriverVersion("535.1")
		if got := must(dflt.GetVmDriverVersion())(t, "GetVmDriverVersion"); got != "535.1" {
			t.Errorf("GetVmDriverVersion = %q", got)
		}
		v.SetVMDriverVersion("")
		if got := must(dflt.GetVmDriverVersion())(t, "GetVmDriverVersion"); got != "550.54.14" {
			t.Errorf("GetVmDriverVersion = %q, want the fleet's again", got)
		}
		v.SetLicense(true, time.Time{})
		if got := must(dflt.GetLicenseStatus())(t, "GetLicenseStatus"); got != 1 {
			t.Errorf("GetLicenseStatus = %d", got)
		}
	})
	t.Run("library twins forward to the handle", func(t *testing.T) {
		if got := must(f.VgpuInstanceGetUUID(h))(t, "VgpuInstanceGetUUID"); got != "AABBCCDD-0011-2233-4455-66778899aabb" {
			t.Errorf("VgpuInstanceGetUUID = %q", got)
		}
		other, _ := fakegpu.Preset("vgpu-h100")
		if _, ret := f.VgpuInstanceGetUUID(other.GPU(0).Vgpus()[0].Instance()); ret != nvml.ERROR_INVALID_ARGUMENT {
			t.Errorf("another fleet's instance: %v", ret)
		}
		if _, ret := f.VgpuInstanceGetFbUsage(nil); ret != nvml.ERROR_INVALID_ARGUMENT {
			t.Errorf("nil instance: %v", ret)
		}
	})
}

func TestVgpuLicenseInfo(t *testing.T) {
	cet := time.FixedZone("CET", 3600)
	tests := []struct {
		name     string
		licensed bool
		expiry   time.Time
		want     nvml.VgpuLicenseInfo
	}{
		{"unlicensed", false, time.Time{}, nvml.VgpuLicenseInfo{CurrentState: nvml.GRID_LICENSE_STATE_UNLICENSED}},
		{"unlicensed with an expiry", false, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			nvml.VgpuLicenseInfo{CurrentState: nvml.GRID_LICENSE_STATE_UNLICENSED}},
		{"permanent", true, time.Time{}, nvml.VgpuLicenseInfo{IsLicensed: 1, CurrentState: nvml.GRID_LICENSE_STATE_LICENSED,
			LicenseExpiry: nvml.VgpuLicenseExpiry{Status: 4}}},
		{"expiring, in UTC", true, time.Date(2027, time.January, 1, 0, 30, 9, 0, cet), nvml.VgpuLicenseInfo{
			IsLicensed: 1, CurrentState: nvml.GRID_LICENSE_STATE_LICENSED,
			LicenseExpiry: nvml.VgpuLicenseExpiry{Year: 2026, Month: 12, Day: 31, Hour: 23, Min: 30, Sec: 9, Status: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, g, _ := vgpuFleet(t, fakegpu.VgpuSpec{Licensed: tt.licensed, LicenseExpiry: tt.expiry}, fakegpu.VgpuSpec{})
			h := g.Vgpus()[0].Instance()
			if got := must(h.GetLicenseInfo())(t, "GetLicenseInfo"); got != tt.want {
				t.Errorf("spec: %+v, want %+v", got, tt.want)
			}
			other := g.Vgpus()[1]
			other.SetLicense(tt.licensed, tt.expiry)
			if got := must(other.Instance().GetLicenseInfo())(t, "GetLicenseInfo"); got != tt.want {
				t.Errorf("SetLicense: %+v, want %+v", got, tt.want)
			}
			wantStatus := 0
			if tt.licensed {
				wantStatus = 1
			}
			if got := must(h.GetLicenseStatus())(t, "GetLicenseStatus"); got != wantStatus {
				t.Errorf("GetLicenseStatus = %d, want %d", got, wantStatus)
			}
		})
	}
}

func TestVgpuTypeHandle(t *testing.T) {
	f := fakegpu.New(
		fakegpu.GPUSpec{VgpuHost: true, Vgpus: []fakegpu.VgpuSpec{
			{Type: "NVIDIA H100-20C"}, {Type: "NVIDIA H100-20C"}, {Type: "NVIDIA H100-8Q"},
			{Type: "NVIDIA H100-4B"}, {Type: "Custom", FramebufferMiB: 1000}, {Type: "NVIDIA H100-2A"},
		}},
		fakegpu.GPUSpec{},
		fakegpu.GPUSpec{VgpuHost: true, Model: "h200", MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.18gb"}}},
		fakegpu.GPUSpec{VgpuHost: true},
	)
	initFleet(t, f)
	f.GPU(3).Lose()
	v := f.GPU(0).Vgpus()
	typeOf := func(i int) nvml.VgpuTypeId { return must(v[i].Instance().GetType())(t, "GetType") }
	if typeOf(0) != typeOf(1) || v[0].TypeID() != v[1].TypeID() || typeOf(0) == typeOf(2) {
		t.Error("instances of one type do not share its handle, or two types do")
	}
	tests := []struct {
		inst    int
		name    string
		fb      uint64
		class   string
		license string
		frl     uint32
		frlRet  nvml.Return
		maxGPU0 int
		maxH200 int
	}{
		{0, "NVIDIA H100-20C", 20 << 30, "Compute", "NVIDIA-vComputeServer,9.0", 0, nvml.ERROR_NOT_SUPPORTED, 4, 7},
		{2, "NVIDIA H100-8Q", 8 << 30, "Quadro", "Quadro-Virtual-DWS,5.0", 60, nvml.SUCCESS, 10, 17},
		{3, "NVIDIA H100-4B", 4 << 30, "NVS", "GRID-Virtual-PC,2.0;Quadro-Virtual-DWS,5.0", 45, nvml.SUCCESS, 20, 35},
		{4, "Custom", 1000 * fakegpu.MiB, "Compute", "NVIDIA-vComputeServer,9.0", 0, nvml.ERROR_NOT_SUPPORTED, 81, 144},
		{5, "NVIDIA H100-2A", 2 << 30, "Compute", "NVIDIA-vComputeServer,9.0", 0, nvml.ERROR_NOT_SUPPORTED, 40, 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := typeOf(tt.inst)
			if id := typ.(handler).Handle(); id != v[tt.inst].TypeID() || id == 0 {
				t.Errorf("Handle() = %d, want %d", id, v[tt.inst].TypeID())
			}
			if got := must(typ.GetName())(t, "GetName"); got != tt.name {
				t.Errorf("GetName = %q", got)
			}
			if got := must(typ.GetFramebufferSize())(t, "GetFramebufferSize"); got != tt.fb {
				t.Errorf("GetFramebufferSize = %d, want %d", got, tt.fb)
			}
			if got := must(typ.GetClass())(t, "GetClass"); got != tt.class {
				t.Errorf("GetClass = %q, want %q", got, tt.class)
			}
			if got := must(typ.GetLicense())(t, "GetLicense"); got != tt.license {
				t.Errorf("GetLicense = %q, want %q", got, tt.license)
			}
			if got, ret := typ.GetFrameRateLimit(); got != tt.frl || ret != tt.frlRet {
				t.Errorf("GetFrameRateLimit = %d, %v; want %d, %v", got, ret, tt.frl, tt.frlRet)
			}
			if got := must(typ.GetMaxInstancesPerVm())(t, "GetMaxInstancesPerVm"); got != 1 {
				t.Errorf("GetMaxInstancesPerVm = %d", got)
			}
			for _, c := range []struct {
				dev  nvml.Device
				want int
				ret  nvml.Return
			}{
				{f.GPU(0).Device(), tt.maxGPU0, nvml.SUCCESS},
				{f.GPU(2).Device(), tt.maxH200, nvml.SUCCESS},
				{f.GPU(1).Device(), 0, nvml.ERROR_NOT_SUPPORTED},              // not a host
				{f.GPU(2).MIGDevice(0).Device(), 0, nvml.ERROR_NOT_SUPPORTED}, // a MIG device
				{f.GPU(3).Device(), 0, nvml.ERROR_GPU_IS_LOST},                // lost
				{fakegpu.New(fakegpu.GPUSpec{VgpuHost: true}).GPU(0).Device(), 0, nvml.ERROR_INVALID_ARGUMENT},
				{nil, 0, nvml.ERROR_INVALID_ARGUMENT},
			} {
				if got, ret := typ.GetMaxInstances(c.dev); got != c.want || ret != c.ret {
					t.Errorf("GetMaxInstances(%v) = %d, %v; want %d, %v", c.dev, got, ret, c.want, c.ret)
				}
			}
			// The device's and the library's forms forward to the type.
			if got, ret := f.GPU(0).Device().VgpuTypeGetMaxInstances(typ); got != tt.maxGPU0 || ret != nvml.SUCCESS {
				t.Errorf("Device.VgpuTypeGetMaxInstances = %d, %v", got, ret)
			}
			if got, ret := f.VgpuTypeGetMaxInstances(f.GPU(0).Device(), typ); got != tt.maxGPU0 || ret != nvml.SUCCESS {
				t.Errorf("VgpuTypeGetMaxInstances = %d, %v", got, ret)
			}
			if got := must(f.VgpuTypeGetName(typ))(t, "VgpuTypeGetName"); got != tt.name {
				t.Errorf("VgpuTypeGetName = %q", got)
			}
			if _, _, ret := typ.GetResolution(0); ret != nvml.ERROR_NOT_SUPPORTED {
				t.Errorf("GetResolution = %v, want the NOT_SUPPORTED stub", ret)
			}
		})
	}
	if _, ret := f.VgpuTypeGetMaxInstances(f.GPU(0).Device(), nil); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("VgpuTypeGetMaxInstances(nil type) = %v", ret)
	}
	if _, ret := f.GPU(0).Device().VgpuTypeGetMaxInstances(nil); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("Device.VgpuTypeGetMaxInstances(nil) = %v", ret)
	}
	if _, ret := f.VgpuTypeGetClass(nil); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("VgpuTypeGetClass(nil) = %v", ret)
	}
}

func TestVgpuUtilizationCursor(t *testing.T) {
	f, g, d := vgpuFleet(t, fakegpu.VgpuSpec{ID: 1, SM: 40, FB: 20, Enc: 3, Dec: 4}, fakegpu.VgpuSpec{ID: 2})
	t0 := micros(f.Now())
	v1, v2 := g.Vgpus()[0], g.Vgpus()[1]
	tests := []struct {
		name     string
		step     func()
		lastSeen uint64
		want     []vgpuUtil
		ret      nvml.Return
	}{
		{"every instance's first sample is taken at creation", func() {}, 0,
			[]vgpuUtil{{1, t0, 40, 20, 3, 4}, {2, t0, 0, 0, 0, 0}}, nvml.SUCCESS},
		{"samples at lastSeen are not returned", func() {}, t0, nil, nvml.ERROR_NOT_FOUND},
		{"a set replaces the sample of the same time", func() { v2.SetUtilization(9, 8, 7, 6) }, 0,
			[]vgpuUtil{{1, t0, 40, 20, 3, 4}, {2, t0, 9, 8, 7, 6}}, nvml.SUCCESS},
		{"Advance samples every instance", func() { f.Advance(time.Second) }, t0,
			[]vgpuUtil{{1, t0 + 1e6, 40, 20, 3, 4}, {2, t0 + 1e6, 9, 8, 7, 6}}, nvml.SUCCESS},
		{"only the newest sample per instance", func() { f.Advance(time.Second); f.Advance(time.Second) }, 0,
			[]vgpuUtil{{1, t0 + 3e6, 40, 20, 3, 4}, {2, t0 + 3e6, 9, 8, 7, 6}}, nvml.SUCCESS},
		{"a set replaces the Advance sample of its time; percentages clamp", func() { f.Advance(time.Second); v1.SetUtilization(101, 50, 0, 0) }, t0 + 3e6,
			[]vgpuUtil{{1, t0 + 4e6, 100, 50, 0, 0}, {2, t0 + 4e6, 9, 8, 7, 6}}, nvml.SUCCESS},
		{"nothing newer than the newest", func() {}, t0 + 4e6, nil, nvml.ERROR_NOT_FOUND},
		{"an instance created later has only its own samples", func() {
			f.Advance(time.Second)
			v1.SetUtilization(1, 2, 3, 4)
			f.Advance(time.Second)
			addVgpu(t, g, fakegpu.VgpuSpec{ID: 9, SM: 5})
		}, t0 + 4e6, []vgpuUtil{{1, t0 + 6e6, 1, 2, 3, 4}, {2, t0 + 6e6, 9, 8, 7, 6}, {9, t0 + 6e6, 5, 0, 0, 0}}, nvml.SUCCESS},
		{"a destroyed instance is not sampled", func() { v2.Destroy(); f.Advance(time.Second) }, t0 + 6e6,
			[]vgpuUtil{{1, t0 + 7e6, 1, 2, 3, 4}, {9, t0 + 7e6, 5, 0, 0, 0}}, nvml.SUCCESS},
	}
	for _, tt := range tests {
		tt.step()
		vt, s, ret := d.GetVgpuUtilization(tt.lastSeen)
		if got := decodeVgpuUtil(s); ret != tt.ret || !reflect.DeepEqual(got, tt.want) || vt != nvml.VALUE_TYPE_UNSIGNED_INT {
			t.Errorf("%s: GetVgpuUtilization(%d) = %v, %+v, %v; want UNSIGNED_INT, %+v, %v", tt.name, tt.lastSeen, vt, got, ret, tt.want, tt.ret)
		}
	}
	// The ring keeps 120 samples; only the newest is ever returned.
	f.Advance(time.Minute)
	for i := 0; i < 200; i++ {
		f.Advance(time.Millisecond)
	}
	if _, s, _ := d.GetVgpuUtilization(0); len(s) != 2 || s[0].TimeStamp != micros(f.Now()) || s[1].TimeStamp != micros(f.Now()) {
		t.Errorf("after 200 samples: %+v", s)
	}
}

func TestVgpuProcessUtilizationCursor(t *testing.T) {
	f, g, d := vgpuFleet(t,
		fakegpu.VgpuSpec{ID: 1, Processes: []fakegpu.VgpuProcess{{PID: 10, SM: 30, Mem: 5}, {PID: 11}}},
		fakegpu.VgpuSpec{ID: 2})
	t0 := micros(f.Now())
	v1, v2 := g.Vgpus()[0], g.Vgpus()[1]
	type sample struct {
		inst, pid         uint32
		name              string
		ts                uint64
		sm, mem, enc, dec uint32
	}
	decode := func(s []nvml.VgpuProcessUtilizationSample) []sample {
		var out []sample
		for _, x := range s {
			out = append(out, sample{x.VgpuInstance, x.Pid, cString(x.ProcessName[:]), x.TimeStamp, x.SmUtil, x.MemUtil, x.EncUtil, x.DecUtil})
		}
		return out
	}
	longName := strings.Repeat("x", 80)
	tests := []struct {
		name     string
		step     func()
		lastSeen uint64
		want     []sample
		ret      nvml.Return
	}{
		{"a busy process samples when it starts, an idle one does not", func() {}, 0,
			[]sample{{1, 10, "python3", t0, 30, 5, 0, 0}}, nvml.SUCCESS},
		{"samples at lastSeen are not returned", func() {}, t0, nil, nvml.ERROR_NOT_FOUND},
		{"Advance samples busy processes", func() {
			if err := v2.StartProcess(fakegpu.VgpuProcess{PID: 10, Name: longName, Enc: 7}); err != nil {
				t.Fatal(err)
			}
			f.Advance(time.Second)
		}, t0, []sample{{1, 10, "python3", t0 + 1e6, 30, 5, 0, 0}, {2, 10, longName[:63], t0 + 1e6, 0, 0, 7, 0}}, nvml.SUCCESS},
		{"SetProcessUtilization samples, idle or not", func() {
			f.Advance(time.Second)
			v1.SetProcessUtilization(11, 0, 0, 0, 0)
			v1.SetProcessUtilization(10, 200, 50, 1, 2)
		}, t0 + 1e6, []sample{{1, 10, "python3", t0 + 2e6, 100, 50, 1, 2}, {1, 11, "python3", t0 + 2e6, 0, 0, 0, 0}, {2, 10, longName[:63], t0 + 2e6, 0, 0, 7, 0}}, nvml.SUCCESS},
		{"an idle process keeps its last sample", func() { f.Advance(time.Second) }, t0 + 2e6,
			[]sample{{1, 10, "python3", t0 + 3e6, 100, 50, 1, 2}, {2, 10, longName[:63], t0 + 3e6, 0, 0, 7, 0}}, nvml.SUCCESS},
		{"a stopped process and a destroyed instance take their samples along", func() {
			v1.StopProcess(10)
			v2.Destroy()
		}, 0, []sample{{1, 11, "python3", t0 + 2e6, 0, 0, 0, 0}}, nvml.SUCCESS},
	}
	for _, tt := range tests {
		tt.step()
		s, ret := d.GetVgpuProcessUtilization(tt.lastSeen)
		if got := decode(s); ret != tt.ret || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: GetVgpuProcessUtilization(%d) = %+v, %v; want %+v, %v", tt.name, tt.lastSeen, got, ret, tt.want, tt.ret)
		}
	}
	if got := v1.Processes(); !reflect.DeepEqual(got, []fakegpu.VgpuProcess{{PID: 11}}) {
		t.Errorf("Processes() = %+v", got)
	}
	// Guest PIDs are not the host's.
	if _, ret := f.SystemGetProcessName(11); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("SystemGetProcessName(guest PID) = %v, want NOT_FOUND", ret)
	}
}

func TestVgpuStartProcessErrors(t *testing.T) {
	_, g, _ := vgpuFleet(t, fakegpu.VgpuSpec{Processes: []fakegpu.VgpuProcess{{PID: 5}}})
	v := g.Vgpus()[0]
	tests := []struct {
		name string
		p    fakegpu.VgpuProcess
		want string
	}{
		{"PID 0", fakegpu.VgpuProcess{}, "VgpuProcess.PID: want a non-zero PID"},
		{"a PID already running", fakegpu.VgpuProcess{PID: 5}, "VgpuProcess.PID: 5 is already running on this vGPU instance"},
		{"SM above 100", fakegpu.VgpuProcess{PID: 6, SM: 101}, "VgpuProcess.SM: want a percentage 0..100, got 101"},
		{"Dec above 100", fakegpu.VgpuProcess{PID: 6, Dec: 300}, "VgpuProcess.Dec: want a percentage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.StartProcess(tt.p)
			if !errors.Is(err, fakegpu.ErrBadProcess) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("StartProcess(%+v) = %v, want ErrBadProcess saying %q", tt.p, err, tt.want)
			}
		})
	}
	v.Destroy()
	if err := v.StartProcess(fakegpu.VgpuProcess{PID: 9}); !errors.Is(err, fakegpu.ErrBadProcess) || !strings.Contains(err.Error(), "destroyed") {
		t.Errorf("StartProcess on a destroyed instance = %v", err)
	}
}

// vgpuCalls are calls of an instance's handle, one per implemented method
// and a stub.
var vgpuCalls = []struct {
	method string
	call   func(h nvml.VgpuInstance) nvml.Return
}{
	{"GetUUID", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetUUID(); return r }},
	{"GetMdevUUID", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetMdevUUID(); return r }},
	{"GetVmID", func(h nvml.VgpuInstance) nvml.Return { _, _, r := h.GetVmID(); return r }},
	{"GetVmDriverVersion", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetVmDriverVersion(); return r }},
	{"GetFbUsage", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetFbUsage(); return r }},
	{"GetType", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetType(); return r }},
	{"GetEccMode", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetEccMode(); return r }},
	{"GetEncoderCapacity", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetEncoderCapacity(); return r }},
	{"SetEncoderCapacity", func(h nvml.VgpuInstance) nvml.Return { return h.SetEncoderCapacity(10) }},
	{"GetGpuInstanceId", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetGpuInstanceId(); return r }},
	{"GetGpuPciId", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetGpuPciId(); return r }},
	{"GetLicenseStatus", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetLicenseStatus(); return r }},
	{"GetLicenseInfo", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetLicenseInfo(); return r }},
	{"GetAccountingMode", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetAccountingMode(); return r }},
	{"GetAccountingPids", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetAccountingPids(); return r }},
	{"GetAccountingStats", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetAccountingStats(1); return r }},
	{"ClearAccountingPids", func(h nvml.VgpuInstance) nvml.Return { return h.ClearAccountingPids() }},
	{"GetPlacementId", func(h nvml.VgpuInstance) nvml.Return { _, r := h.(placementIDer).GetPlacementId(); return r }},
	{"GetFBCStats", func(h nvml.VgpuInstance) nvml.Return { _, r := h.GetFBCStats(); return r }},
}

func TestVgpuDestroy(t *testing.T) {
	for _, how := range []string{"Destroy", "DestroyOnCall"} {
		for _, c := range vgpuCalls {
			t.Run(how+"/"+c.method, func(t *testing.T) {
				f, g, d := vgpuFleet(t, fakegpu.VgpuSpec{ID: 1, Accounting: true, Processes: []fakegpu.VgpuProcess{{PID: 3, SM: 50}}},
					fakegpu.VgpuSpec{ID: 2, SM: 10})
				v := g.Vgpus()[0]
				h := v.Instance()
				list := must(d.GetActiveVgpus())(t, "GetActiveVgpus") // handed out before
				if how == "Destroy" {
					v.Destroy()
					v.Destroy() // a second time does nothing
				} else {
					v.DestroyOnCall(c.method)
					// Other methods do not trigger it.
					for _, other := range vgpuCalls {
						if other.method == c.method {
							continue
						}
						if r := other.call(h); r == nvml.ERROR_NOT_FOUND && other.method != "GetAccountingStats" {
							t.Fatalf("%s answered NOT_FOUND before %s was called", other.method, c.method)
						}
					}
					if v.Destroyed() {
						t.Fatalf("destroyed before %s was called", c.method)
					}
				}
				if r := c.call(h); r != nvml.ERROR_NOT_FOUND {
					t.Errorf("%s = %v, want NOT_FOUND", c.method, r)
				}
				if r := c.call(list[0]); r != nvml.ERROR_NOT_FOUND {
					t.Errorf("%s on the listed handle = %v, want NOT_FOUND", c.method, r)
				}
				for _, other := range vgpuCalls {
					if r := other.call(h); r != nvml.ERROR_NOT_FOUND {
						t.Errorf("then %s = %v, want NOT_FOUND", other.method, r)
					}
				}
				if !v.Destroyed() || g.Vgpu(1) != nil || len(g.Vgpus()) != 1 {
					t.Errorf("Destroyed() = %v, Vgpu(1) = %v", v.Destroyed(), g.Vgpu(1))
				}
				if l := must(d.GetActiveVgpus())(t, "GetActiveVgpus"); len(l) != 1 || l[0].(handler).Handle() != 2 {
					t.Errorf("GetActiveVgpus = %v, want only instance 2", l)
				}
				f.Advance(time.Second)
				_, s, _ := d.GetVgpuUtilization(0)
				if len(s) != 1 || s[0].VgpuInstance != 2 {
					t.Errorf("GetVgpuUtilization = %+v, want only instance 2", s)
				}
				if _, ret := d.GetVgpuProcessUtilization(0); ret != nvml.ERROR_NOT_FOUND {
					t.Errorf("GetVgpuProcessUtilization = %v, want NOT_FOUND: the process went with the instance", ret)
				}
				// Control calls on a destroyed instance do nothing.
				v.SetUtilization(1, 1, 1, 1)
				v.SetProcessUtilization(3, 1, 1, 1, 1)
				v.SetAccountingMode(false)
				if len(v.Processes()) != 0 {
					t.Errorf("Processes() = %v", v.Processes())
				}
			})
		}
	}
}

func TestVgpuDestroyOnCallBetweenListAndReads(t *testing.T) {
	f, g, d := vgpuFleet(t, fakegpu.VgpuSpec{ID: 1}, fakegpu.VgpuSpec{ID: 2}, fakegpu.VgpuSpec{ID: 3})
	g.Vgpu(2).DestroyOnCall("VgpuInstance.GetFbUsage")
	var read []uint32
	for _, h := range must(d.GetActiveVgpus())(t, "GetActiveVgpus") {
		if _, ret := h.GetFbUsage(); ret == nvml.ERROR_NOT_FOUND {
			continue // gone between the list and the read
		} else if ret != nvml.SUCCESS {
			t.Fatalf("GetFbUsage = %v", ret)
		}
		read = append(read, h.(handler).Handle())
	}
	if !slices.Equal(read, []uint32{1, 3}) {
		t.Errorf("read %v, want [1 3]", read)
	}
	if n := f.CallCount("VgpuInstance.GetFbUsage"); n != 3 {
		t.Errorf("GetFbUsage counted %d times, want 3", n)
	}
}

func TestVgpuFaults(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(f *fakegpu.Fleet, v *fakegpu.Vgpu)
		want   nvml.Return
		wantOf map[string]nvml.Return // overrides want per method
	}{
		{"Fail touches only its method", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			v.Fail("GetFbUsage", nvml.ERROR_UNKNOWN)
		}, nvml.SUCCESS, map[string]nvml.Return{"GetFbUsage": nvml.ERROR_UNKNOWN, "GetFBCStats": nvml.ERROR_NOT_SUPPORTED}},
		{"Fail takes the counted name", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			v.Fail("VgpuInstance.GetPlacementId", nvml.ERROR_TIMEOUT)
		}, nvml.SUCCESS, map[string]nvml.Return{"GetPlacementId": nvml.ERROR_TIMEOUT, "GetFBCStats": nvml.ERROR_NOT_SUPPORTED}},
		{"ClearFail undoes Fail", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			v.Fail("GetUUID", nvml.ERROR_UNKNOWN)
			v.ClearFail("GetUUID")
		}, nvml.SUCCESS, map[string]nvml.Return{"GetFBCStats": nvml.ERROR_NOT_SUPPORTED}},
		{"Fail with SUCCESS undoes Fail", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			v.Fail("GetUUID", nvml.ERROR_UNKNOWN)
			v.Fail("GetUUID", nvml.SUCCESS)
		}, nvml.SUCCESS, map[string]nvml.Return{"GetFBCStats": nvml.ERROR_NOT_SUPPORTED}},
		{"Fail reaches stubs", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			v.Fail("GetFBCStats", nvml.ERROR_NO_PERMISSION)
		}, nvml.SUCCESS, map[string]nvml.Return{"GetFBCStats": nvml.ERROR_NO_PERMISSION}},
		{"the parent's faults do not reach the handle", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			f.GPU(0).Fail("GetUUID", nvml.ERROR_UNKNOWN)
			f.GPU(0).Unsupported("memory")
		}, nvml.SUCCESS, map[string]nvml.Return{"GetFBCStats": nvml.ERROR_NOT_SUPPORTED}},
		{"a lost parent", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) { f.GPU(0).Lose() }, nvml.ERROR_GPU_IS_LOST, nil},
		{"destroyed beats lost", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) { f.GPU(0).Lose(); v.Destroy() }, nvml.ERROR_NOT_FOUND, nil},
		{"lost beats Fail", func(f *fakegpu.Fleet, v *fakegpu.Vgpu) {
			v.Fail("GetUUID", nvml.ERROR_UNKNOWN)
			f.GPU(0).Lose()
		}, nvml.ERROR_GPU_IS_LOST, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, g, _ := vgpuFleet(t, fakegpu.VgpuSpec{Accounting: true, Processes: []fakegpu.VgpuProcess{{PID: 1}}})
			v := g.Vgpus()[0]
			tt.setup(f, v)
			for _, c := range vgpuCalls {
				want := tt.want
				if w, ok := tt.wantOf[c.method]; ok {
					want = w
				}
				if got := c.call(v.Instance()); got != want {
					t.Errorf("%s = %v, want %v", c.method, got, want)
				}
			}
		})
	}
	t.Run("a lost GPU's device calls", func(t *testing.T) {
		_, g, d := vgpuFleet(t, fakegpu.VgpuSpec{})
		g.Lose()
		if _, ret := d.GetActiveVgpus(); ret != nvml.ERROR_GPU_IS_LOST {
			t.Errorf("GetActiveVgpus = %v", ret)
		}
		if _, _, ret := d.GetVgpuUtilization(0); ret != nvml.ERROR_GPU_IS_LOST {
			t.Errorf("GetVgpuUtilization = %v", ret)
		}
		if _, ret := d.GetVgpuProcessUtilization(0); ret != nvml.ERROR_GPU_IS_LOST {
			t.Errorf("GetVgpuProcessUtilization = %v", ret)
		}
	})
	t.Run("device faults reach the device calls", func(t *testing.T) {
		_, g, d := vgpuFleet(t, fakegpu.VgpuSpec{})
		g.Fail("GetActiveVgpus", nvml.ERROR_NO_PERMISSION)
		if _, ret := d.GetActiveVgpus(); ret != nvml.ERROR_NO_PERMISSION {
			t.Errorf("GetActiveVgpus = %v", ret)
		}
	})
}

func TestVgpuControlTyposAreViolations(t *testing.T) {
	tests := []struct {
		name string
		run  func(v *fakegpu.Vgpu)
		want string
	}{
		{"Fail", func(v *fakegpu.Vgpu) { v.Fail("GetFbUse", nvml.ERROR_UNKNOWN) },
			`fakegpu: GPU(0).Vgpu(9).Fail: no nvml.VgpuInstance method named "GetFbUse"`},
		{"ClearFail", func(v *fakegpu.Vgpu) { v.ClearFail("Device.GetUUID") },
			`fakegpu: GPU(0).Vgpu(9).ClearFail: no nvml.VgpuInstance method named "Device.GetUUID"`},
		{"DestroyOnCall", func(v *fakegpu.Vgpu) { v.DestroyOnCall("Handle") },
			`fakegpu: GPU(0).Vgpu(9).DestroyOnCall: no nvml.VgpuInstance method named "Handle"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{ID: 9}}})
			tt.run(f.GPU(0).Vgpu(9))
			if got := f.Violations(); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("Violations() = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestVgpuRulesOfTheLibrary(t *testing.T) {
	tests := []struct {
		name    string
		missing []string
		call    func(f *fakegpu.Fleet) nvml.Return
		want    string // the violation; empty: none, and SUCCESS
	}{
		{"GetActiveVgpus without its symbol", []string{"nvmlDeviceGetActiveVgpus"},
			func(f *fakegpu.Fleet) nvml.Return { _, r := f.GPU(0).Device().GetActiveVgpus(); return r },
			"Device.GetActiveVgpus called but the driver lacks nvmlDeviceGetActiveVgpus"},
		{"GetVgpuUtilization without its symbol", []string{"nvmlDeviceGetVgpuUtilization"},
			func(f *fakegpu.Fleet) nvml.Return { _, _, r := f.GPU(0).Device().GetVgpuUtilization(0); return r },
			"Device.GetVgpuUtilization called but the driver lacks nvmlDeviceGetVgpuUtilization"},
		{"an instance method without its symbol", []string{"nvmlVgpuInstanceGetFbUsage"},
			func(f *fakegpu.Fleet) nvml.Return { _, r := f.GPU(0).Vgpus()[0].Instance().GetFbUsage(); return r },
			"VgpuInstance.GetFbUsage called but the driver lacks nvmlVgpuInstanceGetFbUsage"},
		{"GetPlacementId without its symbol", []string{"nvmlVgpuInstanceGetPlacementId"},
			func(f *fakegpu.Fleet) nvml.Return {
				_, r := f.GPU(0).Vgpus()[0].Instance().(placementIDer).GetPlacementId()
				return r
			},
			"VgpuInstance.GetPlacementId called but the driver lacks nvmlVgpuInstanceGetPlacementId"},
		{"GetLicenseInfo with only its _v2 symbol", []string{"nvmlVgpuInstanceGetLicenseInfo"},
			func(f *fakegpu.Fleet) nvml.Return { _, r := f.GPU(0).Vgpus()[0].Instance().GetLicenseInfo(); return r }, ""},
		{"GetLicenseInfo without either symbol", []string{"nvmlVgpuInstanceGetLicenseInfo", "nvmlVgpuInstanceGetLicenseInfo_v2"},
			func(f *fakegpu.Fleet) nvml.Return { _, r := f.GPU(0).Vgpus()[0].Instance().GetLicenseInfo(); return r },
			"VgpuInstance.GetLicenseInfo called but the driver lacks nvmlVgpuInstanceGetLicenseInfo, nvmlVgpuInstanceGetLicenseInfo_v2"},
		{"a type method without its symbol", []string{"nvmlVgpuTypeGetName"},
			func(f *fakegpu.Fleet) nvml.Return {
				typ, _ := f.GPU(0).Vgpus()[0].Instance().GetType()
				_, r := typ.GetName()
				return r
			},
			"VgpuTypeId.GetName called but the driver lacks nvmlVgpuTypeGetName"},
		{"a library twin without its symbol", []string{"nvmlVgpuInstanceGetUUID"},
			func(f *fakegpu.Fleet) nvml.Return {
				_, r := f.VgpuInstanceGetUUID(f.GPU(0).Vgpus()[0].Instance())
				return r
			},
			"VgpuInstanceGetUUID called but the driver lacks nvmlVgpuInstanceGetUUID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{}}})
			f.MissingSymbols(tt.missing...)
			f.Init()
			defer f.Shutdown()
			ret := tt.call(f)
			if tt.want == "" {
				if ret != nvml.SUCCESS || len(f.Violations()) != 0 {
					t.Errorf("ret = %v, violations %q; want SUCCESS and none", ret, f.Violations())
				}
				return
			}
			if ret != nvml.ERROR_FUNCTION_NOT_FOUND {
				t.Errorf("ret = %v, want FUNCTION_NOT_FOUND", ret)
			}
			if got := f.Violations(); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("Violations() = %q, want [%q]", got, tt.want)
			}
		})
	}
	t.Run("calls before Init", func(t *testing.T) {
		f := fakegpu.New(fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{}}})
		h := f.GPU(0).Vgpus()[0].Instance()
		if _, ret := h.GetUUID(); ret != nvml.ERROR_UNINITIALIZED {
			t.Errorf("GetUUID = %v", ret)
		}
		h.(handler).Handle() // a Go method: no violation
		f.GPU(0).Vgpus()[0].DestroyOnCall("GetUUID")
		h.GetUUID() // refused: does not destroy
		want := []string{"VgpuInstance.GetUUID called before Init", "VgpuInstance.GetUUID called before Init"}
		if got := f.Violations(); !slices.Equal(got, want) {
			t.Errorf("Violations() = %q, want %q", got, want)
		}
		if f.GPU(0).Vgpus()[0].Destroyed() {
			t.Error("a refused call destroyed the instance")
		}
	})
}

func TestVgpuCallsAreCounted(t *testing.T) {
	f, g, d := vgpuFleet(t, fakegpu.VgpuSpec{}, fakegpu.VgpuSpec{})
	f.ResetCalls()
	for _, h := range must(d.GetActiveVgpus())(t, "GetActiveVgpus") {
		h.(handler).Handle()
		h.GetUUID()
		typ, _ := h.GetType()
		typ.GetName()
		typ.(handler).Handle()
		h.(placementIDer).GetPlacementId()
	}
	f.VgpuInstanceGetFbUsage(g.Vgpus()[0].Instance())
	want := map[string]int{
		"Device.GetActiveVgpus":       1,
		"VgpuInstance.GetUUID":        2,
		"VgpuInstance.GetType":        2,
		"VgpuTypeId.GetName":          2,
		"VgpuInstance.GetPlacementId": 2,
		"VgpuInstanceGetFbUsage":      1,
		"VgpuInstance.GetFbUsage":     1,
	}
	if got := f.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("Calls() = %v, want %v", got, want)
	}
}

func TestVgpuAdvanceSamplesAndMemory(t *testing.T) {
	f, g, d := vgpuFleet(t, fakegpu.VgpuSpec{Type: "NVIDIA H100-20C"}, fakegpu.VgpuSpec{Type: "NVIDIA H100-10C"})
	mem := must(d.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2")
	if mem.Used != 30<<30 {
		t.Errorf("used memory = %d MiB, want the instances' 30720", mem.Used/fakegpu.MiB)
	}
	g.Vgpus()[1].Destroy()
	if mem := must(d.GetMemoryInfo_v2())(t, "GetMemoryInfo_v2"); mem.Used != 20<<30 {
		t.Errorf("used memory = %d MiB after Destroy, want 20480", mem.Used/fakegpu.MiB)
	}
	t0 := micros(f.Now())
	f.Advance(-time.Second) // ignored
	if _, s, ret := d.GetVgpuUtilization(t0); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("after a negative Advance: %v %v", s, ret)
	}
}

func TestSetVgpuHost(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{}, fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{ID: 5}}})
	initFleet(t, f)
	g0, g1 := f.GPU(0), f.GPU(1)
	if g0.VgpuHost() || !g1.VgpuHost() || !g1.Spec().VgpuHost {
		t.Fatalf("VgpuHost() = %v, %v; want instances to imply host mode", g0.VgpuHost(), g1.VgpuHost())
	}
	if _, err := g0.AddVgpu(fakegpu.VgpuSpec{}); !errors.Is(err, fakegpu.ErrBadVgpu) || !strings.Contains(err.Error(), "GPU 0: not in host-vGPU mode") {
		t.Errorf("AddVgpu on a GPU outside host mode = %v", err)
	}
	g0.SetVgpuHost(true)
	v := addVgpu(t, g0, fakegpu.VgpuSpec{})
	if m, _ := g0.Device().GetVirtualizationMode(); m != nvml.GPU_VIRTUALIZATION_MODE_HOST_VGPU {
		t.Errorf("mode = %v", m)
	}
	h := g1.Vgpu(5).Instance()
	g1.SetVgpuHost(false)
	if _, ret := h.GetUUID(); ret != nvml.ERROR_NOT_FOUND || g1.Vgpus() != nil || !v.Parent().VgpuHost() {
		t.Errorf("leaving host mode: GetUUID = %v, Vgpus() = %v", ret, g1.Vgpus())
	}
	if m, _ := g1.Device().GetVirtualizationMode(); m != nvml.GPU_VIRTUALIZATION_MODE_NONE {
		t.Errorf("mode = %v, want NONE", m)
	}
	if len(g1.Spec().Vgpus) != 1 {
		t.Errorf("Spec().Vgpus = %v, want the starting instance", g1.Spec().Vgpus)
	}
}

func TestVgpuAccounting(t *testing.T) {
	f, g, _ := vgpuFleet(t,
		fakegpu.VgpuSpec{ID: 1, Accounting: true, AccountingBufferSize: 3, Processes: []fakegpu.VgpuProcess{{PID: 10, SM: 90, Mem: 40}}},
		fakegpu.VgpuSpec{ID: 2})
	v, off := g.Vgpu(1), g.Vgpu(2)
	h := v.Instance()
	t0 := micros(f.Now())
	pids := func() []int { t.Helper(); return must(h.GetAccountingPids())(t, "GetAccountingPids") }
	stats := func(pid int) nvml.AccountingStats {
		t.Helper()
		return must(h.GetAccountingStats(pid))(t, "GetAccountingStats")
	}

	if m := must(h.GetAccountingMode())(t, "GetAccountingMode"); m != nvml.FEATURE_ENABLED {
		t.Errorf("mode = %v", m)
	}
	f.Advance(time.Second)
	v.SetProcessUtilization(10, 10, 0, 0, 0)
	f.Advance(3 * time.Second)
	want := nvml.AccountingStats{GpuUtilization: 30, MemoryUtilization: 10, MaxMemoryUsage: fakegpu.NotAvailable, StartTime: t0, IsRunning: 1}
	if got := stats(10); got != want {
		t.Errorf("running: %+v, want %+v", got, want)
	}
	v.StopProcess(10)
	want.IsRunning, want.Time = 0, 4000
	if got := stats(10); got != want {
		t.Errorf("stopped: %+v, want %+v", got, want)
	}
	if _, ret := h.GetAccountingStats(11); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("unknown PID: %v", ret)
	}
	if _, ret := h.GetAccountingStats(-1); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("negative PID: %v", ret)
	}

	// A reused PID gets a new record; the PID is listed once.
	v.StartProcess(fakegpu.VgpuProcess{PID: 10, SM: 50})
	if got := pids(); !slices.Equal(got, []int{10}) {
		t.Errorf("pids = %v, want [10]", got)
	}
	if s := stats(10); s.IsRunning != 1 || s.GpuUtilization != 50 {
		t.Errorf("the newest record of a reused PID: %+v", s)
	}
	// Clearing keeps the running record, drops the stopped one.
	v.StartProcess(fakegpu.VgpuProcess{PID: 20})
	if ret := h.ClearAccountingPids(); ret != nvml.SUCCESS {
		t.Fatalf("ClearAccountingPids = %v", ret)
	}
	if got := pids(); !slices.Equal(got, []int{10, 20}) {
		t.Errorf("after clearing: %v", got)
	}
	if s := stats(10); s.IsRunning != 1 {
		t.Errorf("clearing dropped the running record: %+v", s)
	}
	// The buffer of 3 evicts the oldest.
	v.StopProcess(20)
	v.StartProcess(fakegpu.VgpuProcess{PID: 30})
	v.StartProcess(fakegpu.VgpuProcess{PID: 40})
	if got := pids(); !slices.Equal(got, []int{20, 30, 40}) {
		t.Errorf("after eviction: %v, want [20 30 40]", got)
	}
	// The running process whose record was evicted keeps none.
	if _, ret := h.GetAccountingStats(10); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("evicted record: %v", ret)
	}
	// Faults.
	v.Fail("ClearAccountingPids", nvml.ERROR_NO_PERMISSION)
	if ret := h.ClearAccountingPids(); ret != nvml.ERROR_NO_PERMISSION {
		t.Errorf("ClearAccountingPids = %v, want the injected NO_PERMISSION", ret)
	}
	if got := pids(); len(got) != 3 {
		t.Errorf("a refused clear cleared: %v", got)
	}
	// Off deletes every record; on again starts records for running ones.
	v.SetAccountingMode(false)
	for _, c := range []struct {
		name string
		ret  nvml.Return
	}{
		{"GetAccountingPids", func() nvml.Return { _, r := h.GetAccountingPids(); return r }()},
		{"GetAccountingStats", func() nvml.Return { _, r := h.GetAccountingStats(30); return r }()},
	} {
		if c.ret != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("%s with accounting off = %v, want NOT_SUPPORTED", c.name, c.ret)
		}
	}
	if m := must(h.GetAccountingMode())(t, "GetAccountingMode"); m != nvml.FEATURE_DISABLED {
		t.Errorf("mode = %v", m)
	}
	v.ClearFail("ClearAccountingPids")
	if ret := h.ClearAccountingPids(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("ClearAccountingPids with accounting off = %v", ret)
	}
	f.Advance(time.Second)
	v.SetAccountingMode(true)
	if got := pids(); !slices.Equal(got, []int{10, 30, 40}) {
		t.Errorf("on again: %v, want the running processes' [10 30 40]", got)
	}
	if s := stats(30); s.StartTime != micros(f.Now()) {
		t.Errorf("a record started by turning accounting on starts then: %+v", s)
	}
	// An instance with accounting off.
	if _, ret := off.Instance().GetAccountingPids(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GetAccountingPids of an instance with accounting off = %v", ret)
	}
}

func TestVgpuPreset(t *testing.T) {
	f := preset(t, "vgpu-h100")
	if !slices.Contains(fakegpu.PresetNames(), "vgpu-h100") {
		t.Errorf("PresetNames() = %v", fakegpu.PresetNames())
	}
	type inst struct {
		typ      string
		licensed bool
		busy     bool
		pids     []uint32
		acct     bool
	}
	want := [][]inst{
		{
			{"NVIDIA H100-20C", true, true, []uint32{2817, 2854}, false},
			{"NVIDIA H100-20C", true, true, []uint32{1733}, false},
			{"NVIDIA H100-20C", true, false, nil, false},
			{"NVIDIA H100-20C", false, false, nil, false},
		},
		{
			{"NVIDIA H100-40C", true, true, []uint32{4120}, true},
			{"NVIDIA H100-40C", true, true, []uint32{991}, true},
		},
	}
	ids := map[uint32]bool{}
	for i := 0; i < 8; i++ {
		d := handle(t, f, i)
		if m := must(d.GetVirtualizationMode())(t, "GetVirtualizationMode"); m != nvml.GPU_VIRTUALIZATION_MODE_HOST_VGPU {
			t.Errorf("GPU %d mode = %v", i, m)
		}
		if p := must(d.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses"); len(p) != 0 {
			t.Errorf("GPU %d runs host processes %v", i, p)
		}
		list := must(d.GetActiveVgpus())(t, "GetActiveVgpus")
		var w []inst
		if i < len(want) {
			w = want[i]
		}
		if len(list) != len(w) {
			t.Fatalf("GPU %d has %d instances, want %d", i, len(list), len(w))
		}
		var sm uint32
		for j, h := range list {
			id := h.(handler).Handle()
			if ids[id] || id == 0 {
				t.Errorf("GPU %d instance %d: ID %d is zero or repeated", i, j, id)
			}
			ids[id] = true
			typ := must(h.GetType())(t, "GetType")
			if name, _ := typ.GetName(); name != w[j].typ {
				t.Errorf("GPU %d instance %d type %q, want %q", i, j, name, w[j].typ)
			}
			if l, _ := h.GetLicenseStatus(); (l == 1) != w[j].licensed {
				t.Errorf("GPU %d instance %d licence %d", i, j, l)
			}
			if uuid, _ := h.GetUUID(); !vgpuUUIDRE.MatchString(uuid) {
				t.Errorf("GPU %d instance %d UUID %q", i, j, uuid)
			}
			if m, _ := h.GetAccountingMode(); (m == nvml.FEATURE_ENABLED) != w[j].acct {
				t.Errorf("GPU %d instance %d accounting %v", i, j, m)
			}
			v := f.GPU(i).Vgpu(id)
			var pids []uint32
			var procSM uint32
			for _, p := range v.Processes() {
				pids = append(pids, p.PID)
				if p.SM == 0 {
					t.Errorf("GPU %d instance %d process %d is idle", i, j, p.PID)
				}
				procSM += p.SM
			}
			if !slices.Equal(pids, w[j].pids) {
				t.Errorf("GPU %d instance %d PIDs %v, want %v", i, j, pids, w[j].pids)
			}
			_, s, _ := d.GetVgpuUtilization(0)
			if got := u32(s[j].SmUtil); (got != 0) != w[j].busy || got != procSM {
				t.Errorf("GPU %d instance %d SM %d, want busy %v and the processes' %d", i, j, got, w[j].busy, procSM)
			}
			sm += u32(s[j].SmUtil)
			if w[j].acct {
				if p := must(h.GetAccountingPids())(t, "GetAccountingPids"); !slices.Equal(p, []int{int(w[j].pids[0])}) {
					t.Errorf("GPU %d instance %d accounting PIDs %v", i, j, p)
				}
			}
		}
		if u := must(d.GetUtilizationRates())(t, "GetUtilizationRates"); u.Gpu != sm {
			t.Errorf("GPU %d utilization %d, want its instances' %d", i, u.Gpu, sm)
		}
	}
	g0 := f.GPU(0).Vgpus()
	if info, _ := g0[0].Instance().GetLicenseInfo(); info.LicenseExpiry.Status != 2 || info.LicenseExpiry.Year != 2027 {
		t.Errorf("instance 0 licence %+v, want an expiry in 2027", info)
	}
	if info, _ := g0[1].Instance().GetLicenseInfo(); info.LicenseExpiry.Status != 4 {
		t.Errorf("instance 1 licence %+v, want a permanent one", info)
	}
	if v, _ := g0[3].Instance().GetVmDriverVersion(); v != "535.161.08" {
		t.Errorf("instance 3 guest driver %q", v)
	}
	if s, ret := f.GPU(0).Device().GetVgpuProcessUtilization(0); ret != nvml.SUCCESS || len(s) != 3 {
		t.Errorf("GPU 0 process samples = %+v, %v; want 3", s, ret)
	}
	// The same every time, and different from another seed's.
	again, _ := fakegpu.Preset("vgpu-h100")
	for i := 0; i < 2; i++ {
		a, b := f.GPU(i).Vgpus(), again.GPU(i).Vgpus()
		for j := range a {
			if a[j].ID() != b[j].ID() || a[j].UUID() != b[j].UUID() || a[j].TypeID() != b[j].TypeID() {
				t.Errorf("GPU %d instance %d differs between two Preset calls", i, j)
			}
		}
	}
	if f.GPU(0).UUID() == fakegpu.New(fakegpu.GPUSpec{}).GPU(0).UUID() {
		t.Error("the preset's GPU UUIDs are New's")
	}
}

func TestAddVgpu(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{VgpuHost: true, Vgpus: []fakegpu.VgpuSpec{{ID: 5, UUID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", Type: "NVIDIA H100-40C", TypeID: 900}}},
		fakegpu.GPUSpec{VgpuHost: true})
	initFleet(t, f)
	g0, g1 := f.GPU(0), f.GPU(1)
	tests := []struct {
		name string
		g    *fakegpu.GPU
		s    fakegpu.VgpuSpec
		want string
	}{
		{"an ID used on another GPU", g1, fakegpu.VgpuSpec{ID: 5}, "GPU 1: VgpuSpec.ID: 5 is also the ID of GPU 0 vGPU instance 5"},
		{"a UUID used on another GPU", g1, fakegpu.VgpuSpec{UUID: "AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee"}, "VgpuSpec.UUID: \"AAAAAAAA-bbbb-cccc-dddd-eeeeeeeeeeee\" is also the UUID of GPU 0 vGPU instance 5"},
		{"a malformed UUID", g0, fakegpu.VgpuSpec{UUID: "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}, "VgpuSpec.UUID: want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"},
		{"a type ID of another type", g1, fakegpu.VgpuSpec{Type: "NVIDIA H100-20C", TypeID: 900}, `VgpuSpec.TypeID: 900 is also the type ID of "NVIDIA H100-40C" (40960 MiB)`},
		{"a type without a size", g0, fakegpu.VgpuSpec{Type: "NVIDIA H100"}, `VgpuSpec.Type: want a type name ending in "-<GiB><class letter>"`},
		{"a framebuffer beyond the GPU's", g1, fakegpu.VgpuSpec{Type: "NVIDIA H100-90C"}, "VgpuSpec.FramebufferMiB: want at most the GPU's 81920 MiB, got 92160"},
		{"a framebuffer beyond what is left", g0, fakegpu.VgpuSpec{Type: "NVIDIA H100-48C"}, "VgpuSpec.FramebufferMiB: the instances' framebuffers would take 90112 MiB, more than the GPU's 81920 MiB"},
		{"fb used beyond the framebuffer", g0, fakegpu.VgpuSpec{FBUsedMiB: 30000}, "VgpuSpec.FBUsedMiB: 30000 MiB is more than the framebuffer, 20480 MiB"},
		{"a bad VM ID type", g0, fakegpu.VgpuSpec{VMIDType: "name"}, `VgpuSpec.VMIDType: want "uuid" or "domain", got "name"`},
		{"a bad encoder capacity", g0, fakegpu.VgpuSpec{EncoderCapacity: 101}, "VgpuSpec.EncoderCapacity: want a percentage 0..100, got 101"},
		{"a bad FB utilization", g0, fakegpu.VgpuSpec{FB: 101}, "VgpuSpec.FB: want a percentage 0..100, got 101"},
		{"a bad buffer size", g0, fakegpu.VgpuSpec{AccountingBufferSize: -1}, "VgpuSpec.AccountingBufferSize: want a positive size"},
		{"an expiry past year 9999", g0, fakegpu.VgpuSpec{Licensed: true, LicenseExpiry: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "VgpuSpec.LicenseExpiry: want a year 1..9999, got 10000"},
		{"a bad process", g0, fakegpu.VgpuSpec{Processes: []fakegpu.VgpuProcess{{PID: 1}, {PID: 2, Mem: 300}}}, "VgpuSpec.Processes[1].Mem: want a percentage 0..100, got 300"},
		{"a repeated PID", g0, fakegpu.VgpuSpec{Processes: []fakegpu.VgpuProcess{{PID: 1}, {PID: 1}}}, "VgpuSpec.Processes[1].PID: 1 is already running on this vGPU instance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.g.AddVgpu(tt.s)
			if v != nil || !errors.Is(err, fakegpu.ErrBadVgpu) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("AddVgpu = %v, %v; want ErrBadVgpu saying %q", v, err, tt.want)
			}
		})
	}
	if n := len(g0.Vgpus()) + len(g1.Vgpus()); n != 1 {
		t.Errorf("failed AddVgpu calls left %d instances, want 1", n)
	}
	// The same type on another GPU shares the handle.
	v := addVgpu(t, g1, fakegpu.VgpuSpec{Type: "NVIDIA H100-40C", TypeID: 900})
	a, _ := v.Instance().GetType()
	b, _ := g0.Vgpu(5).Instance().GetType()
	if a != b {
		t.Error("two instances of type 900 have different type handles")
	}
	// Derived identities: the n-th instance created on a GPU, whatever
	// was destroyed before.
	w := addVgpu(t, g1, fakegpu.VgpuSpec{})
	w.Destroy()
	x := addVgpu(t, g1, fakegpu.VgpuSpec{})
	if x.ID() == w.ID() || x.UUID() == w.UUID() {
		t.Errorf("a new instance repeats a destroyed one's identity: %d %s", x.ID(), x.UUID())
	}
}

func TestVgpuSpecValidate(t *testing.T) {
	tests := []struct {
		name string
		spec fakegpu.GPUSpec
		want string // empty: valid
	}{
		{"no instances", fakegpu.GPUSpec{}, ""},
		{"instances imply host mode", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{}, {}}}, ""},
		{"a repeated ID", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{ID: 3}, {ID: 3}}},
			"fakegpu: GPUSpec.Vgpus[1].ID: 3 is also the ID of GPUSpec.Vgpus[0]"},
		{"a repeated UUID in another case", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{UUID: "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"}, {UUID: "AAAAAAAA-BBBB-cccc-dddd-eeeeeeeeeeee"}}},
			`fakegpu: GPUSpec.Vgpus[1].UUID: "AAAAAAAA-BBBB-cccc-dddd-eeeeeeeeeeee" is also the UUID of GPUSpec.Vgpus[0]`},
		{"one type ID for two types", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{TypeID: 7}, {TypeID: 7, Type: "NVIDIA H100-10C"}}},
			`fakegpu: GPUSpec.Vgpus[1].TypeID: 7 is also the type ID of "NVIDIA H100-20C" (20480 MiB), set by GPUSpec.Vgpus[0]`},
		{"too many instances for the memory", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{}, {}, {}, {}, {}}},
			"fakegpu: GPUSpec.Vgpus[4].FramebufferMiB: the instances' framebuffers would take 102400 MiB, more than the GPU's 81920 MiB"},
		{"a process percentage", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{Processes: []fakegpu.VgpuProcess{{PID: 1, Enc: 101}}}}},
			"fakegpu: GPUSpec.Vgpus[0].Processes[0].Enc: want a percentage 0..100, got 101"},
		{"PID 0", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{Processes: []fakegpu.VgpuProcess{{}}}}},
			"fakegpu: GPUSpec.Vgpus[0].Processes[0].PID: want a non-zero PID"},
		{"SM above 100", fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{SM: 200}}},
			"fakegpu: GPUSpec.Vgpus[0].SM: want a percentage 0..100, got 200"},
		{"a smaller GPU takes a smaller default type", fakegpu.GPUSpec{MemoryTotal: 16 << 30, Vgpus: []fakegpu.VgpuSpec{{}, {}, {}, {}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.spec.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || err.Error() != tt.want) {
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNewFixesBadVgpus(t *testing.T) {
	f := fakegpu.New(
		fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{
			{ID: 3, UUID: "not-a-uuid", SM: 300, FBUsedMiB: 1 << 20, EncoderCapacity: 500, VMIDType: "x",
				Processes: []fakegpu.VgpuProcess{{PID: 0}, {PID: 4}, {PID: 4, SM: 9}}},
			{ID: 3, Type: "bad"},
			{Type: "NVIDIA H100-80C"}, // does not fit beside the first
		}},
		fakegpu.GPUSpec{Vgpus: []fakegpu.VgpuSpec{{ID: 3}}}, // an ID of GPU 0
	)
	initFleet(t, f)
	v := f.GPU(0).Vgpus()
	if len(v) != 1 {
		t.Fatalf("GPU 0 has %d instances, want the one that could be used", len(v))
	}
	h := v[0].Instance()
	if v[0].ID() != 3 || !vgpuUUIDRE.MatchString(v[0].UUID()) {
		t.Errorf("ID %d, UUID %q", v[0].ID(), v[0].UUID())
	}
	if fb, _ := h.GetFbUsage(); fb != 20<<30 {
		t.Errorf("fb used %d, want the framebuffer", fb)
	}
	if c, _ := h.GetEncoderCapacity(); c != 100 {
		t.Errorf("encoder capacity %d", c)
	}
	if _, typ, _ := h.GetVmID(); typ != nvml.VGPU_VM_ID_UUID {
		t.Errorf("VM ID type %v", typ)
	}
	if p := v[0].Processes(); !reflect.DeepEqual(p, []fakegpu.VgpuProcess{{PID: 4}}) {
		t.Errorf("processes %+v", p)
	}
	if _, s, _ := f.GPU(0).Device().GetVgpuUtilization(0); u32(s[0].SmUtil) != 100 {
		t.Errorf("SM %d, want 100", u32(s[0].SmUtil))
	}
	if w := f.GPU(1).Vgpus(); len(w) != 1 || w[0].ID() == 3 || w[0].ID() == 0 {
		t.Errorf("GPU 1's instance repeating GPU 0's ID has ID %d, want a derived one", w[0].ID())
	}
	if s := f.GPU(0).Spec().Vgpus; len(s) != 1 || s[0].SM != 100 || s[0].ID != 3 || !*s[0].ECC {
		t.Errorf("Spec().Vgpus = %+v", s)
	}
}

func TestVgpuIdentityIsDerived(t *testing.T) {
	specs := []fakegpu.GPUSpec{{Vgpus: []fakegpu.VgpuSpec{{}, {}, {VMIDType: "domain"}}}, {Vgpus: []fakegpu.VgpuSpec{{}}}}
	a, b := fakegpu.New(specs...), fakegpu.New(specs...)
	initFleet(t, a)
	initFleet(t, b)
	seen, seenID := map[string]bool{}, map[uint32]bool{}
	for i := range specs {
		va, vb := a.GPU(i).Vgpus(), b.GPU(i).Vgpus()
		for j := range va {
			if va[j].ID() != vb[j].ID() || va[j].UUID() != vb[j].UUID() {
				t.Errorf("GPU %d instance %d: derived identity differs between two New calls", i, j)
			}
			if seenID[va[j].ID()] || seen[va[j].UUID()] || va[j].ID() == 0 || !vgpuUUIDRE.MatchString(va[j].UUID()) {
				t.Errorf("GPU %d instance %d: ID %d, UUID %q is zero, malformed or repeated", i, j, va[j].ID(), va[j].UUID())
			}
			seenID[va[j].ID()], seen[va[j].UUID()] = true, true
			vm, typ, _ := va[j].Instance().GetVmID()
			vmB, _, _ := vb[j].Instance().GetVmID()
			if vm != vmB {
				t.Errorf("GPU %d instance %d: VM ID %q then %q", i, j, vm, vmB)
			}
			if domain := typ == nvml.VGPU_VM_ID_DOMAIN_ID; domain != regexp.MustCompile(`^[0-9]+$`).MatchString(vm) || domain != (j == 2 && i == 0) {
				t.Errorf("GPU %d instance %d: VM ID %q of type %v", i, j, vm, typ)
			}
		}
	}
	// The same type name gives the same type ID in every fleet.
	p, _ := fakegpu.Preset("vgpu-h100")
	if p.GPU(0).Vgpus()[0].TypeID() != a.GPU(0).Vgpus()[0].TypeID() {
		t.Error("NVIDIA H100-20C has another type ID in another fleet")
	}
}

func TestEveryVgpuMethodAnswersWithoutPanicking(t *testing.T) {
	f, _ := fakegpu.Preset("vgpu-h100")
	f.Init()
	h := f.GPU(0).Vgpus()[0].Instance()
	typ, _ := h.GetType()
	callAll(t, h, nil)
	callAll(t, typ, nil)
	f.GPU(0).Vgpus()[1].Destroy()
	callAll(t, f.GPU(0).Vgpus()[0].Instance(), nil)
	f.Shutdown()
	callAll(t, h, nil)
	if len(f.Violations()) == 0 {
		t.Error("calls without Init recorded no violations")
	}
}

// callLogs are the lengths of the call logs of the moq mocks behind v: the
// …Calls methods the mocks add.
func callLogs(v any) map[string]int {
	logs := map[string]int{}
	rv := reflect.ValueOf(v)
	for i := 0; i < rv.NumMethod(); i++ {
		name := rv.Type().Method(i).Name
		mt := rv.Method(i).Type()
		if strings.HasSuffix(name, "Calls") && mt.NumIn() == 0 && mt.NumOut() == 1 && mt.Out(0).Kind() == reflect.Slice {
			if n := rv.Method(i).Call(nil)[0].Len(); n > 0 {
				logs[name] = n
			}
		}
	}
	return logs
}

func TestMockCallLogsStayEmpty(t *testing.T) {
	f := preset(t, "vgpu-h100")
	d := handle(t, f, 0)
	callAll(t, d, nil)
	f.Extensions().LookupSymbol("nvmlDeviceGetActiveVgpus")
	for _, h := range must(d.GetActiveVgpus())(t, "GetActiveVgpus") {
		callAll(t, h, nil)
		typ, _ := h.GetType()
		callAll(t, typ, nil)
		f.VgpuInstanceGetUUID(h)
		f.VgpuTypeGetName(typ)
	}
	for _, c := range []struct {
		name string
		v    any
	}{
		{"fleet", f}, {"device", d}, {"vGPU instance", f.GPU(0).Vgpus()[0].Instance()},
		{"vGPU type", must(f.GPU(0).Vgpus()[0].Instance().GetType())(t, "GetType")},
	} {
		if logs := callLogs(c.v); len(logs) > 0 {
			t.Errorf("the %s's mock recorded calls: %v", c.name, logs)
		}
	}
}
