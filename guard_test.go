//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// After a failed Init, any NVML call (even Shutdown) kills a real process:
// every public call must fail with the Init error and not one further call
// may reach the library.
func TestFailedInitMakesNoFurtherNVMLCall(t *testing.T) {
	inits := []struct {
		name string
		ret  nvml.Return
		want error
	}{
		{"library not found", nvml.ERROR_LIBRARY_NOT_FOUND, nvgo.ErrLibraryNotFound},
		{"driver not loaded", nvml.ERROR_DRIVER_NOT_LOADED, nvgo.ErrDriverNotLoaded},
		{"driver/library mismatch", nvml.ERROR_LIB_RM_VERSION_MISMATCH, nvgo.ErrDriverMismatch},
		{"no permission", nvml.ERROR_NO_PERMISSION, nvgo.ErrNoPermission},
	}
	for _, in := range inits {
		t.Run(in.name, func(t *testing.T) {
			fleet, err := fakegpu.Preset("dgx-h100")
			if err != nil {
				t.Fatal(err)
			}
			fleet.FailInit(in.ret)
			lib := openOn(t, fleet)
			calls := []struct {
				name string
				call func() error
			}{
				{"Available", lib.Available},
				{"Devices", func() error { _, err := lib.Devices(); return err }},
				{"DeviceCount", func() error { _, err := lib.DeviceCount(); return err }},
				{"DeviceByIndex", func() error { _, err := lib.DeviceByIndex(0); return err }},
				{"DeviceByUUID", func() error { _, err := lib.DeviceByUUID("GPU-1"); return err }},
				{"DeviceByBusID", func() error { _, err := lib.DeviceByBusID("0000:18:00.0"); return err }},
				{"DriverVersion", func() error { _, err := lib.DriverVersion(); return err }},
				{"CUDADriverVersion", func() error { _, err := lib.CUDADriverVersion(); return err }},
				{"NVMLVersion", func() error { _, err := lib.NVMLVersion(); return err }},
				{"Snapshot", func() error { _, err := lib.Snapshot(context.Background()); return err }},
				{"Available again", lib.Available},
			}
			for _, c := range calls {
				if err := c.call(); !errors.Is(err, in.want) {
					t.Errorf("%s: err = %v, want %v", c.name, err, in.want)
				}
			}
			lib.Close()
			if got := fleet.TotalCalls() - fleet.CallCount("Init"); got != 0 {
				t.Errorf("%d NVML calls after the failed Init: %v", got, fleet.Calls())
			}
			if got := fleet.CallCount("Init"); got != 1 {
				t.Errorf("Init called %d times, want once", got)
			}
		})
	}
}

// A function missing from an older driver kills a real process when called:
// it must read as N/A with reason FunctionMissing, and never be called.
func TestMissingSymbolsAreNAAndNeverCalled(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	fleet.MissingSymbols("nvmlDeviceGetTemperature", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetFieldValues",
		"nvmlDeviceGetProcessUtilization", "nvmlDeviceGetSerial", "nvmlDeviceGetPowerManagementDefaultLimit")
	lib := openOn(t, fleet)
	d, err := lib.DeviceByIndex(0)
	if err != nil {
		t.Fatal(err)
	}
	s := d.Snapshot(nvgo.FieldsAll)
	for name, v := range map[string]interface {
		IsNA() bool
		Reason() nvgo.Reason
	}{"temperature": s.Temperature, "serial": s.Serial, "default power limit": s.DefaultPowerLimit} {
		if !v.IsNA() || v.Reason() != nvgo.FunctionMissing {
			t.Errorf("%s: N/A=%v reason=%v, want N/A function missing", name, v.IsNA(), v.Reason())
		}
	}
	if !errors.Is(s.Temperature.Err(), nvgo.ErrNotSupported) {
		t.Errorf("a missing function should also match ErrNotSupported: %v", s.Temperature.Err())
	}
	// Fallbacks: memory from the v1 call (no reserved figure), power from the single calls.
	if s.MemoryTotal.IsNA() || !s.MemoryReserved.IsNA() {
		t.Errorf("memory total %v reserved %v: want v1 fallback", s.MemoryTotal, s.MemoryReserved)
	}
	if s.PowerUsage.IsNA() || s.PowerLimit.IsNA() {
		t.Errorf("power %v / %v: want the single-call fallback", s.PowerUsage, s.PowerLimit)
	}
	for _, m := range []string{"Device.GetTemperature", "Device.GetMemoryInfo_v2", "Device.GetFieldValues", "Device.GetProcessUtilization", "Device.GetSerial", "Device.GetPowerManagementDefaultLimit"} {
		if n := fleet.CallCount(m); n != 0 {
			t.Errorf("%s called %d times although the driver lacks it", m, n)
		}
	}
}

func TestOneLostGPUOfEight(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	fleet.GPU(3).Lose()
	snap, err := lib.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Devices) != 8 {
		t.Fatalf("%d devices, want 8", len(snap.Devices))
	}
	for _, d := range snap.Devices {
		lost := d.Index == 3
		if got := errors.Is(d.Err, nvgo.ErrGPULost); got != lost {
			t.Errorf("GPU %d: Err = %v, lost = %v", d.Index, d.Err, lost)
		}
		if lost {
			if !d.GPUUtilization.IsNA() || d.GPUUtilization.Reason() != nvgo.GPULost {
				t.Errorf("GPU 3 utilization = %v (%v), want N/A GPU lost", d.GPUUtilization, d.GPUUtilization.Reason())
			}
			if d.Error == "" {
				t.Error("a lost GPU has no error text in its snapshot")
			}
			continue
		}
		if d.GPUUtilization.IsNA() || d.MemoryUsed.IsNA() {
			t.Errorf("GPU %d lost its metrics with GPU 3: util %v mem %v", d.Index, d.GPUUtilization, d.MemoryUsed)
		}
	}
}

func TestPerMethodErrorsBecomeNAWithReason(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	fleet.GPU(1).Fail("temperature", nvml.ERROR_NO_PERMISSION)
	fleet.GPU(1).Fail("power", nvml.ERROR_UNKNOWN)
	d, _ := lib.DeviceByIndex(1)
	s := d.Snapshot(nvgo.FieldsAll)
	if s.Temperature.Reason() != nvgo.NoPermission || !errors.Is(s.Temperature.Err(), nvgo.ErrNoPermission) {
		t.Errorf("temperature = %v (%v)", s.Temperature, s.Temperature.Err())
	}
	var nerr *nvgo.NVMLError
	if !errors.As(s.PowerUsage.Err(), &nerr) || nerr.Code != 999 {
		t.Errorf("power err = %v, want the raw NVML code 999 via errors.As", s.PowerUsage.Err())
	}
	if s.Err != nil {
		t.Errorf("one failing metric failed the device: %v", s.Err)
	}
}

func TestClosedLibrary(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	d, _ := lib.DeviceByIndex(0)
	lib.Close()
	before := fleet.TotalCalls()
	if _, err := lib.Devices(); !errors.Is(err, nvgo.ErrClosed) {
		t.Errorf("Devices after Close: %v", err)
	}
	if v := d.GPUUtilization(); !v.IsNA() {
		t.Errorf("utilization after Close = %v, want N/A", v)
	}
	if fleet.TotalCalls() != before {
		t.Errorf("NVML called after Close: %v", fleet.Calls())
	}
	if fleet.CallCount("Shutdown") != 1 {
		t.Errorf("Shutdown called %d times, want 1", fleet.CallCount("Shutdown"))
	}
}

func TestLibrariesShareOneRefcountedInit(t *testing.T) {
	fleet, _ := fakegpu.Preset("dgx-a100")
	a, _ := nvgo.Open(nvgo.WithNVML(fleet))
	b, _ := nvgo.Open(nvgo.WithNVML(fleet))
	if err := a.Available(); err != nil {
		t.Fatal(err)
	}
	if err := b.Available(); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := b.DeviceCount(); err != nil {
		t.Fatalf("closing one Library broke the other: %v", err)
	}
	b.Close()
	if i, s := fleet.CallCount("Init"), fleet.CallCount("Shutdown"); i != 1 || s != 1 {
		t.Errorf("Init %d, Shutdown %d; want one each", i, s)
	}
	if v := fleet.Violations(); len(v) > 0 {
		t.Error(v)
	}
}

// On this machine (and CI) there is no NVIDIA driver: the real go-nvml path
// must report it as an error, not kill the test binary.
func TestRealNVMLWithoutDriverIsAnError(t *testing.T) {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		if _, err := os.Stat(filepath.Join(dir, "libnvidia-ml.so.1")); err == nil {
			t.Skip("an NVIDIA driver is installed here")
		}
	}
	lib, err := nvgo.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	for i := 0; i < 3; i++ { // again and again: no call after the failed Init
		if _, err := lib.Devices(); !errors.Is(err, nvgo.ErrLibraryNotFound) || !nvgo.IsNVMLUnavailable(err) {
			t.Fatalf("Devices() = %v, want ErrLibraryNotFound", err)
		}
	}
}
