//go:build cgo

package fakegpu_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

func TestCallsAreCountedPerFunction(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{}, fakegpu.GPUSpec{})
	initFleet(t, f)
	f.ResetCalls()
	f.DeviceGetCount()
	for i := 0; i < 2; i++ {
		d := handle(t, f, i)
		d.GetMemoryInfo_v2()
		d.GetFanSpeed() // NOT_SUPPORTED still counts
	}
	f.DeviceGetName(handle(t, f, 0)) // the twin forwards to the handle

	want := map[string]int{
		"DeviceGetCount":          1,
		"DeviceGetHandleByIndex":  3,
		"Device.GetMemoryInfo_v2": 2,
		"Device.GetFanSpeed":      2,
		"DeviceGetName":           1,
		"Device.GetName":          1,
	}
	if got := f.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("Calls() = %v, want %v", got, want)
	}
	if got := f.CallCount("Device.GetMemoryInfo_v2"); got != 2 {
		t.Errorf("CallCount = %d, want 2", got)
	}
	if got := f.TotalCalls(); got != 10 {
		t.Errorf("TotalCalls() = %d, want 10", got)
	}
	calls := f.Calls()
	calls["DeviceGetCount"] = 99 // a copy
	if f.CallCount("DeviceGetCount") != 1 {
		t.Error("Calls() returned the fleet's own map")
	}
	f.ResetCalls()
	if f.TotalCalls() != 0 || len(f.Calls()) != 0 {
		t.Error("ResetCalls left counts behind")
	}
}

func TestViolations(t *testing.T) {
	tests := []struct {
		name    string
		run     func(f *fakegpu.Fleet, d nvml.Device) nvml.Return
		wantRet nvml.Return
		want    string
	}{
		{
			name:    "a call before Init",
			run:     func(f *fakegpu.Fleet, _ nvml.Device) nvml.Return { _, r := f.DeviceGetCount(); return r },
			wantRet: nvml.ERROR_UNINITIALIZED,
			want:    "DeviceGetCount called before Init",
		},
		{
			name:    "Shutdown before Init",
			run:     func(f *fakegpu.Fleet, _ nvml.Device) nvml.Return { return f.Shutdown() },
			wantRet: nvml.ERROR_UNINITIALIZED,
			want:    "Shutdown called before Init",
		},
		{
			name: "a device call after a failed Init",
			run: func(f *fakegpu.Fleet, d nvml.Device) nvml.Return {
				f.FailInit(nvml.ERROR_LIBRARY_NOT_FOUND)
				if r := f.Init(); r != nvml.ERROR_LIBRARY_NOT_FOUND {
					return r
				}
				_, r := d.GetFanSpeed()
				return r
			},
			wantRet: nvml.ERROR_UNINITIALIZED,
			want:    "Device.GetFanSpeed called after failed Init",
		},
		{
			name: "Shutdown after a failed Init",
			run: func(f *fakegpu.Fleet, _ nvml.Device) nvml.Return {
				f.FailInit(nvml.ERROR_DRIVER_NOT_LOADED)
				f.Init()
				return f.Shutdown()
			},
			wantRet: nvml.ERROR_UNINITIALIZED,
			want:    "Shutdown called after failed Init",
		},
		{
			name: "a call after the final Shutdown",
			run: func(f *fakegpu.Fleet, d nvml.Device) nvml.Return {
				f.Init()
				f.Init()
				f.Shutdown()
				if _, r := d.GetName(); r != nvml.SUCCESS { // one Init still held
					return r
				}
				f.Shutdown()
				_, r := d.GetName()
				return r
			},
			wantRet: nvml.ERROR_UNINITIALIZED,
			want:    "Device.GetName called after final Shutdown",
		},
		{
			name: "a call to a missing symbol",
			run: func(f *fakegpu.Fleet, d nvml.Device) nvml.Return {
				f.MissingSymbols("nvmlDeviceGetMemoryInfo_v2")
				f.Init()
				defer f.Shutdown()
				_, r := d.GetMemoryInfo_v2()
				return r
			},
			wantRet: nvml.ERROR_FUNCTION_NOT_FOUND,
			want:    "Device.GetMemoryInfo_v2 called but the driver lacks nvmlDeviceGetMemoryInfo_v2",
		},
		{
			name: "a library-level call to a missing symbol",
			run: func(f *fakegpu.Fleet, d nvml.Device) nvml.Return {
				f.MissingSymbols("nvmlSystemGetCudaDriverVersion_v2")
				f.Init()
				defer f.Shutdown()
				_, r := f.SystemGetCudaDriverVersion_v2()
				return r
			},
			wantRet: nvml.ERROR_FUNCTION_NOT_FOUND,
			want:    "SystemGetCudaDriverVersion_v2 called but the driver lacks nvmlSystemGetCudaDriverVersion_v2",
		},
		{
			name: "a process list whose every version is missing",
			run: func(f *fakegpu.Fleet, d nvml.Device) nvml.Return {
				f.MissingSymbols("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses_v3")
				f.Init()
				defer f.Shutdown()
				_, r := d.GetComputeRunningProcesses()
				return r
			},
			wantRet: nvml.ERROR_FUNCTION_NOT_FOUND,
			want:    "Device.GetComputeRunningProcesses called but the driver lacks nvmlDeviceGetComputeRunningProcesses, nvmlDeviceGetComputeRunningProcesses_v2, nvmlDeviceGetComputeRunningProcesses_v3",
		},
		{
			name: "a typo in the control API",
			run: func(f *fakegpu.Fleet, _ nvml.Device) nvml.Return {
				f.GPU(0).Fail("GetTemprature", nvml.ERROR_UNKNOWN)
				return nvml.SUCCESS
			},
			wantRet: nvml.SUCCESS,
			want:    `fakegpu: GPU(0).Fail: no nvml.Device method or metric named "GetTemprature"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{})
			if ret := tt.run(f, f.GPU(0).Device()); ret != tt.wantRet {
				t.Errorf("ret = %v, want %v", ret, tt.wantRet)
			}
			if got := f.Violations(); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("Violations() = %q, want [%q]", got, tt.want)
			}
		})
	}
}

func TestNoViolations(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fakegpu.Fleet, d nvml.Device)
	}{
		{"Init, calls, Shutdown, Init again", func(f *fakegpu.Fleet, d nvml.Device) {
			f.Init()
			d.GetName()
			f.Shutdown()
			f.Init()
			d.GetName()
			f.Shutdown()
		}},
		{"a failed Init then a good one", func(f *fakegpu.Fleet, d nvml.Device) {
			f.FailInit(nvml.ERROR_DRIVER_NOT_LOADED)
			f.Init()
			f.FailInit(nvml.SUCCESS)
			f.Init()
			d.GetName()
			f.Shutdown()
		}},
		{"Go-only calls before Init", func(f *fakegpu.Fleet, _ nvml.Device) {
			f.Extensions().LookupSymbol("nvmlInit_v2")
			f.ErrorString(nvml.ERROR_NOT_FOUND)
		}},
		{"a process list with only its v3 symbol left", func(f *fakegpu.Fleet, d nvml.Device) {
			f.MissingSymbols("nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2")
			f.Init()
			d.GetComputeRunningProcesses()
			f.Shutdown()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{})
			tt.run(f, f.GPU(0).Device())
			if v := f.Violations(); len(v) > 0 {
				t.Errorf("Violations() = %q, want none", v)
			}
		})
	}
}

func TestLookupSymbol(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	ext := f.Extensions()
	if err := ext.LookupSymbol("nvmlDeviceGetCount_v2"); err == nil || !strings.Contains(err.Error(), "library not loaded") {
		t.Errorf("before Init: %v, want library not loaded", err)
	}
	f.MissingSymbols("nvmlDeviceGetMemoryInfo_v2")
	initFleet(t, f)
	if err := ext.LookupSymbol("nvmlDeviceGetCount_v2"); err != nil {
		t.Errorf("present symbol: %v", err)
	}
	if err := ext.LookupSymbol("nvmlDeviceGetMemoryInfo_v2"); err == nil {
		t.Error("missing symbol found")
	}
}

func TestFailInitReturnsTheCode(t *testing.T) {
	for _, ret := range []nvml.Return{nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED, nvml.ERROR_LIB_RM_VERSION_MISMATCH} {
		t.Run(ret.Error(), func(t *testing.T) {
			f := fakegpu.New()
			f.FailInit(ret)
			if got := f.Init(); got != ret {
				t.Errorf("Init() = %v", got)
			}
			if got := f.InitWithFlags(0); got != ret {
				t.Errorf("InitWithFlags() = %v", got)
			}
			if !errors.Is(f.Init(), ret) {
				t.Error("errors.Is does not match the code")
			}
		})
	}
}

func TestFleetFail(t *testing.T) {
	f := preset(t, "dgx-h100")
	f.Fail("SystemGetProcessName", nvml.ERROR_NO_PERMISSION)
	if _, ret := f.SystemGetProcessName(4194401); ret != nvml.ERROR_NO_PERMISSION {
		t.Errorf("ret = %v, want NO_PERMISSION", ret)
	}
	f.ClearFail("SystemGetProcessName")
	if _, ret := f.SystemGetProcessName(4194401); ret != nvml.SUCCESS {
		t.Errorf("after ClearFail: %v", ret)
	}
	typo := fakegpu.New()
	typo.Fail("NoSuchFunction", nvml.ERROR_UNKNOWN)
	if v := typo.Violations(); len(v) != 1 || !strings.Contains(v[0], "NoSuchFunction") {
		t.Errorf("Violations() = %q", v)
	}
}

// callAll calls every method of v's type with zero arguments.
func callAll(t *testing.T, v any, skip map[string]bool) {
	t.Helper()
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	for i := 0; i < rt.NumMethod(); i++ {
		m := rt.Method(i)
		if skip[m.Name] || strings.HasSuffix(m.Name, "Calls") {
			continue // moq's call recorders are not NVML methods
		}
		mt := rv.Method(i).Type()
		args := make([]reflect.Value, mt.NumIn())
		for j := range args {
			args[j] = reflect.Zero(mt.In(j))
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", m.Name, r)
				}
			}()
			if mt.IsVariadic() {
				rv.Method(i).CallSlice(args)
			} else {
				rv.Method(i).Call(args)
			}
		}()
	}
}

func TestEveryMethodAnswersWithoutPanicking(t *testing.T) {
	f, _ := fakegpu.Preset("dgx-h100")
	f.GPU(1).Lose()
	f.Init()
	for _, i := range []int{0, 1} {
		callAll(t, f.GPU(i).Device(), nil)
	}
	// Every library-level function, except those that end the session.
	callAll(t, f, map[string]bool{"Shutdown": true})
	f.Shutdown()
	// And everything once more without Init: refused, not crashed.
	callAll(t, f.GPU(0).Device(), nil)
	if len(f.Violations()) == 0 {
		t.Error("calls without Init recorded no violations")
	}
}

func TestStubsAnswerNotSupported(t *testing.T) {
	f := preset(t, "dgx-h100")
	d := handle(t, f, 0)
	if _, ret := d.GetNumGpuCores(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GetNumGpuCores = %v", ret)
	}
	if _, ret := d.GetMigDeviceHandleByIndex(0); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GetMigDeviceHandleByIndex = %v", ret)
	}
	if _, ret := f.DeviceGetNumGpuCores(d); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("DeviceGetNumGpuCores = %v", ret)
	}
	if _, ret := f.EventSetCreate(); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("EventSetCreate = %v", ret)
	}
}

func TestTwinsRejectForeignDevices(t *testing.T) {
	f := preset(t, "dgx-h100")
	other := fakegpu.New(fakegpu.GPUSpec{})
	if _, ret := f.DeviceGetName(other.GPU(0).Device()); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("foreign device: %v", ret)
	}
	if _, ret := f.DeviceGetName(nil); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("nil device: %v", ret)
	}
	if name, ret := f.DeviceGetName(handle(t, f, 3)); ret != nvml.SUCCESS || name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("own device: %q %v", name, ret)
	}
}
