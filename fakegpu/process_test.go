//go:build cgo

package fakegpu_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

func TestProcessLists(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	g, d := f.GPU(0), handle(t, f, 0)
	for _, p := range []fakegpu.Process{
		{PID: 10, Type: fakegpu.Compute, UsedMemory: 100 * fakegpu.MiB},
		{PID: 20, Type: fakegpu.Graphics, UsedMemory: 30 * fakegpu.MiB},
		{PID: 30, Type: fakegpu.ComputeGraphics, UsedMemory: 900 * fakegpu.MiB},
		{PID: 40, UsedMemory: fakegpu.NotAvailable, GPUInstanceID: 1, ComputeInstanceID: 0}, // Type "" is compute
		{PID: 50, Type: fakegpu.MPSClient, UsedMemory: 200 * fakegpu.MiB},
	} {
		if err := g.StartProcess(p); err != nil {
			t.Fatal(err)
		}
	}
	const none = 0xFFFFFFFF
	info := func(pid uint32, mem uint64) nvml.ProcessInfo {
		return nvml.ProcessInfo{Pid: pid, UsedGpuMemory: mem, GpuInstanceId: none, ComputeInstanceId: none}
	}
	wantCompute := []nvml.ProcessInfo{info(10, 100*fakegpu.MiB), info(30, 900*fakegpu.MiB), info(40, fakegpu.NotAvailable)}
	wantGraphics := []nvml.ProcessInfo{info(20, 30*fakegpu.MiB), info(30, 4*fakegpu.MiB)}

	if got := must(d.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses"); !reflect.DeepEqual(got, wantCompute) {
		t.Errorf("compute = %+v, want %+v", got, wantCompute)
	}
	if got := must(d.GetGraphicsRunningProcesses())(t, "GetGraphicsRunningProcesses"); !reflect.DeepEqual(got, wantGraphics) {
		t.Errorf("graphics = %+v, want %+v", got, wantGraphics)
	}
	if got, want := must(d.GetMPSComputeRunningProcesses())(t, "GetMPSComputeRunningProcesses"), []nvml.ProcessInfo{info(50, 200*fakegpu.MiB)}; !reflect.DeepEqual(got, want) {
		t.Errorf("MPS = %+v, want %+v", got, want)
	}

	t.Run("with MIG enabled the instance IDs show", func(t *testing.T) {
		g.SetMIGMode(1, 1)
		defer g.SetMIGMode(0, 0)
		got := must(d.GetComputeRunningProcesses())(t, "GetComputeRunningProcesses")
		if got[2].GpuInstanceId != 1 || got[2].ComputeInstanceId != 0 {
			t.Errorf("PID 40 = %+v", got[2])
		}
	})
	t.Run("a stopped process leaves the lists", func(t *testing.T) {
		g.StopProcess(30)
		g.StopProcess(12345) // not running: no-op
		if got := must(d.GetGraphicsRunningProcesses())(t, "GetGraphicsRunningProcesses"); len(got) != 1 || got[0].Pid != 20 {
			t.Errorf("graphics = %+v", got)
		}
		if n := len(g.Processes()); n != 4 {
			t.Errorf("Processes() has %d, want 4", n)
		}
	})
}

func TestStartProcessRejectsBadProcesses(t *testing.T) {
	g := fakegpu.New(fakegpu.GPUSpec{}).GPU(0)
	if err := g.StartProcess(fakegpu.Process{PID: 5}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		p    fakegpu.Process
	}{
		{"PID 0", fakegpu.Process{}},
		{"a repeated PID", fakegpu.Process{PID: 5}},
		{"an unknown type", fakegpu.Process{PID: 6, Type: "X"}},
		{"SM above 100%", fakegpu.Process{PID: 7, SM: 101}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := g.StartProcess(tt.p); !errors.Is(err, fakegpu.ErrBadProcess) {
				t.Errorf("StartProcess(%+v) = %v, want ErrBadProcess", tt.p, err)
			}
		})
	}
}

func TestProcessUtilizationCursor(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	g, d := f.GPU(0), handle(t, f, 0)
	t0 := uint64(f.Now().UnixMicro())

	if _, ret := d.GetProcessUtilization(0); ret != nvml.ERROR_NOT_FOUND {
		t.Fatalf("no processes: %v, want NOT_FOUND", ret)
	}
	g.StartProcess(fakegpu.Process{PID: 1, SM: 40, Mem: 10})
	g.StartProcess(fakegpu.Process{PID: 2}) // idle: no samples

	samples := must(d.GetProcessUtilization(0))(t, "GetProcessUtilization(0)")
	want := []nvml.ProcessUtilizationSample{{Pid: 1, TimeStamp: t0, SmUtil: 40, MemUtil: 10}}
	if !reflect.DeepEqual(samples, want) {
		t.Fatalf("samples = %+v, want %+v", samples, want)
	}
	cursor := samples[0].TimeStamp
	if _, ret := d.GetProcessUtilization(cursor); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("nothing newer than the cursor: %v, want NOT_FOUND", ret)
	}

	f.Advance(500 * time.Millisecond)
	samples = must(d.GetProcessUtilization(cursor))(t, "GetProcessUtilization(cursor)")
	if len(samples) != 1 || samples[0].TimeStamp != t0+500_000 || samples[0].SmUtil != 40 {
		t.Fatalf("after Advance: %+v", samples)
	}
	cursor = samples[0].TimeStamp

	f.Advance(time.Second)
	g.SetProcessUtilization(2, 5, 6, 7, 8)
	g.SetProcessUtilization(1, 90, 20, 0, 0)
	samples = must(d.GetProcessUtilization(cursor))(t, "GetProcessUtilization")
	want = []nvml.ProcessUtilizationSample{
		{Pid: 1, TimeStamp: t0 + 1_500_000, SmUtil: 90, MemUtil: 20},
		{Pid: 2, TimeStamp: t0 + 1_500_000, SmUtil: 5, MemUtil: 6, EncUtil: 7, DecUtil: 8},
	}
	if !reflect.DeepEqual(samples, want) {
		t.Errorf("newest per process = %+v, want %+v", samples, want)
	}

	g.SetMIGMode(1, 1)
	if _, ret := d.GetProcessUtilization(0); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("MIG enabled: %v, want NOT_SUPPORTED", ret)
	}
}
