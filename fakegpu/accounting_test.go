//go:build cgo

package fakegpu_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// accountingFleet returns an initialised one-GPU fleet with accounting on
// and a buffer of size records (0: the default).
func accountingFleet(t *testing.T, size int) (*fakegpu.Fleet, *fakegpu.GPU, nvml.Device) {
	t.Helper()
	f := fakegpu.New(fakegpu.GPUSpec{Accounting: true, AccountingBufferSize: size})
	initFleet(t, f)
	return f, f.GPU(0), handle(t, f, 0)
}

func start(t *testing.T, g *fakegpu.GPU, p fakegpu.Process) {
	t.Helper()
	if err := g.StartProcess(p); err != nil {
		t.Fatal(err)
	}
}

func micros(tm time.Time) uint64 { return uint64(tm.UnixMicro()) }

func TestAccountingStatsAreTimeWeightedMeans(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name string
		// run drives the GPU; the process of interest has PID 10. It
		// returns the record's expected start (µs).
		run  func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64
		want nvml.AccountingStats // StartTime filled from run
	}{
		{"constant utilization while running", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			t0 := micros(f.Now())
			start(t, g, fakegpu.Process{PID: 10, UsedMemory: gib, SM: 50, Mem: 20})
			f.Advance(10 * time.Second)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 50, MemoryUtilization: 20, MaxMemoryUsage: gib, IsRunning: 1}},
		{"two phases weigh by their length", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			t0 := micros(f.Now())
			start(t, g, fakegpu.Process{PID: 10, SM: 90, Mem: 40})
			f.Advance(time.Second)
			g.SetProcessUtilization(10, 10, 0, 0, 0)
			f.Advance(3 * time.Second)
			g.StopProcess(10)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 30, MemoryUtilization: 10, MaxMemoryUsage: 0, Time: 4000}},
		{"means round to the nearest percent", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			t0 := micros(f.Now())
			start(t, g, fakegpu.Process{PID: 10, SM: 1, Mem: 1})
			f.Advance(time.Second)
			g.SetProcessUtilization(10, 0, 1, 0, 0)
			f.Advance(time.Second)
			g.SetProcessUtilization(10, 0, 0, 0, 0)
			f.Advance(time.Second)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 0, MemoryUtilization: 1, IsRunning: 1}}, // 1/3 → 0, 2/3 → 1
		{"a mean of exactly .5 rounds up", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			t0 := micros(f.Now())
			start(t, g, fakegpu.Process{PID: 10, SM: 3, Mem: 0})
			f.Advance(time.Second)
			g.SetProcessUtilization(10, 2, 1, 0, 0)
			f.Advance(time.Second)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 3, MemoryUtilization: 1, IsRunning: 1}}, // 2.5 → 3, 0.5 → 1
		{"accounting turned on later starts the record then", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			g.SetAccountingMode(false)
			start(t, g, fakegpu.Process{PID: 10, SM: 100, Mem: 100})
			f.Advance(5 * time.Second)
			g.SetProcessUtilization(10, 20, 0, 0, 0)
			g.SetAccountingMode(true)
			t0 := micros(f.Now())
			f.Advance(2 * time.Second)
			g.SetProcessUtilization(10, 60, 30, 0, 0)
			f.Advance(2 * time.Second)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 40, MemoryUtilization: 15, IsRunning: 1}},
		{"a stopped process keeps its figures as time passes", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			t0 := micros(f.Now())
			start(t, g, fakegpu.Process{PID: 10, SM: 80, Mem: 8})
			f.Advance(2 * time.Second)
			g.StopProcess(10)
			f.Advance(10 * time.Second)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 80, MemoryUtilization: 8, Time: 2000}},
		{"the running time is in whole ms, rounded down", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			t0 := micros(f.Now())
			start(t, g, fakegpu.Process{PID: 10, SM: 5})
			f.Advance(1999 * time.Microsecond)
			g.StopProcess(10)
			return t0
		}, nvml.AccountingStats{GpuUtilization: 5, Time: 1}},
		{"a lifetime of zero reports the current figures", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			start(t, g, fakegpu.Process{PID: 10, SM: 70, Mem: 30})
			return micros(f.Now())
		}, nvml.AccountingStats{GpuUtilization: 70, MemoryUtilization: 30, IsRunning: 1}},
		{"the maximum memory is the largest seen", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			start(t, g, fakegpu.Process{PID: 10, UsedMemory: gib})
			g.SetProcessMemory(10, 3*gib)
			g.SetProcessMemory(10, fakegpu.NotAvailable)
			g.SetProcessMemory(10, 2*gib)
			return micros(f.Now())
		}, nvml.AccountingStats{MaxMemoryUsage: 3 * gib, IsRunning: 1}},
		{"memory never reported is not available", func(f *fakegpu.Fleet, g *fakegpu.GPU) uint64 {
			start(t, g, fakegpu.Process{PID: 10, UsedMemory: fakegpu.NotAvailable})
			return micros(f.Now())
		}, nvml.AccountingStats{MaxMemoryUsage: fakegpu.NotAvailable, IsRunning: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, g, d := accountingFleet(t, 0)
			want := tt.want
			want.StartTime = tt.run(f, g)
			got := must(d.GetAccountingStats(10))(t, "GetAccountingStats(10)")
			if got != want {
				t.Errorf("GetAccountingStats(10) =\n %+v, want\n %+v", got, want)
			}
		})
	}
}

func TestAccountingModeOffOnAndClear(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	g, d := f.GPU(0), handle(t, f, 0)
	var (
		notSupported = []int(nil) // the PID list answered NOT_SUPPORTED
		none         = []int{}
	)
	steps := []struct {
		name     string
		do       func()
		mode     nvml.EnableState
		pids     []int
		statsFor map[uint32]nvml.Return // GetAccountingStats(pid) codes
	}{
		{"accounting is off by default", func() {}, nvml.FEATURE_DISABLED, notSupported,
			map[uint32]nvml.Return{1: nvml.ERROR_NOT_SUPPORTED}},
		{"a process that ran with accounting off has no record", func() {
			start(t, g, fakegpu.Process{PID: 1, SM: 10})
			f.Advance(time.Second)
			g.StopProcess(1)
			must(0, d.SetAccountingMode(nvml.FEATURE_ENABLED))(t, "SetAccountingMode(on)")
		}, nvml.FEATURE_ENABLED, none, map[uint32]nvml.Return{1: nvml.ERROR_NOT_FOUND}},
		{"processes that run with accounting on get records", func() {
			start(t, g, fakegpu.Process{PID: 2, SM: 10})
			start(t, g, fakegpu.Process{PID: 3, SM: 10})
			f.Advance(time.Second)
			g.StopProcess(2)
		}, nvml.FEATURE_ENABLED, []int{2, 3}, map[uint32]nvml.Return{2: nvml.SUCCESS, 3: nvml.SUCCESS, 4: nvml.ERROR_NOT_FOUND}},
		{"clearing drops only the records of stopped processes", func() {
			must(0, d.ClearAccountingPids())(t, "ClearAccountingPids")
		}, nvml.FEATURE_ENABLED, []int{3}, map[uint32]nvml.Return{2: nvml.ERROR_NOT_FOUND, 3: nvml.SUCCESS}},
		{"turning accounting off deletes every record", func() {
			must(0, d.SetAccountingMode(nvml.FEATURE_DISABLED))(t, "SetAccountingMode(off)")
		}, nvml.FEATURE_DISABLED, notSupported, map[uint32]nvml.Return{3: nvml.ERROR_NOT_SUPPORTED}},
		{"turning it on again accounts the running processes afresh", func() {
			g.SetAccountingMode(true)
		}, nvml.FEATURE_ENABLED, []int{3}, map[uint32]nvml.Return{3: nvml.SUCCESS}},
		{"a mode other than enabled or disabled is refused", func() {
			if ret := d.SetAccountingMode(nvml.EnableState(7)); ret != nvml.ERROR_INVALID_ARGUMENT {
				t.Errorf("SetAccountingMode(7) = %v, want ERROR_INVALID_ARGUMENT", ret)
			}
		}, nvml.FEATURE_ENABLED, []int{3}, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do()
			if got := must(d.GetAccountingMode())(t, "GetAccountingMode"); got != s.mode {
				t.Errorf("GetAccountingMode() = %v, want %v", got, s.mode)
			}
			pids, ret := d.GetAccountingPids()
			switch {
			case s.pids == nil && ret != nvml.ERROR_NOT_SUPPORTED:
				t.Errorf("GetAccountingPids() = %v, %v; want ERROR_NOT_SUPPORTED", pids, ret)
			case s.pids != nil && (ret != nvml.SUCCESS || !slices.Equal(pids, s.pids)):
				t.Errorf("GetAccountingPids() = %v, %v; want %v", pids, ret, s.pids)
			}
			for pid, want := range s.statsFor {
				if _, ret := d.GetAccountingStats(pid); ret != want {
					t.Errorf("GetAccountingStats(%d) = %v, want %v", pid, ret, want)
				}
			}
			if n := must(d.GetAccountingBufferSize())(t, "GetAccountingBufferSize"); n != fakegpu.DefaultAccountingBufferSize {
				t.Errorf("GetAccountingBufferSize() = %d, want %d", n, fakegpu.DefaultAccountingBufferSize)
			}
		})
	}
	t.Run("a record restarted by turning accounting on starts then", func(t *testing.T) {
		s := must(d.GetAccountingStats(3))(t, "GetAccountingStats(3)")
		if want := micros(f.Now()); s.StartTime != want || s.IsRunning != 1 {
			t.Errorf("GetAccountingStats(3) = %+v, want StartTime %d and running", s, want)
		}
	})
}

func TestAccountingBufferEvictsTheOldestRecord(t *testing.T) {
	tests := []struct {
		name     string
		size     int
		run      func(g *fakegpu.GPU)
		wantPIDs []int
		gone     []uint32
	}{
		{"stopped processes beyond the buffer are forgotten", 3, func(g *fakegpu.GPU) {
			for pid := uint32(1); pid <= 5; pid++ {
				start(t, g, fakegpu.Process{PID: pid})
				g.StopProcess(pid)
			}
		}, []int{3, 4, 5}, []uint32{1, 2}},
		{"a running process's record is evicted too, and stays gone", 2, func(g *fakegpu.GPU) {
			start(t, g, fakegpu.Process{PID: 1, SM: 50})
			start(t, g, fakegpu.Process{PID: 2})
			start(t, g, fakegpu.Process{PID: 3})
			g.SetProcessUtilization(1, 10, 0, 0, 0)
			g.StopProcess(1)
		}, []int{2, 3}, []uint32{1}},
		{"an earlier record of a reused PID takes a place in the buffer", 3, func(g *fakegpu.GPU) {
			start(t, g, fakegpu.Process{PID: 7})
			g.StopProcess(7)
			start(t, g, fakegpu.Process{PID: 7})
			start(t, g, fakegpu.Process{PID: 8})
			start(t, g, fakegpu.Process{PID: 9})
		}, []int{7, 8, 9}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, g, d := accountingFleet(t, tt.size)
			tt.run(g)
			f.Advance(time.Second)
			if n := must(d.GetAccountingBufferSize())(t, "GetAccountingBufferSize"); n != tt.size {
				t.Errorf("GetAccountingBufferSize() = %d, want %d", n, tt.size)
			}
			if got := must(d.GetAccountingPids())(t, "GetAccountingPids"); !slices.Equal(got, tt.wantPIDs) {
				t.Errorf("GetAccountingPids() = %v, want %v", got, tt.wantPIDs)
			}
			for _, pid := range tt.gone {
				if _, ret := d.GetAccountingStats(pid); ret != nvml.ERROR_NOT_FOUND {
					t.Errorf("GetAccountingStats(%d) = %v, want ERROR_NOT_FOUND", pid, ret)
				}
			}
		})
	}
}

func TestAccountingReusedPIDGetsANewRecord(t *testing.T) {
	f, g, d := accountingFleet(t, 0)
	first := micros(f.Now())
	start(t, g, fakegpu.Process{PID: 7, SM: 100, Mem: 50, UsedMemory: 4 << 30})
	f.Advance(3 * time.Second)
	g.StopProcess(7)
	f.Advance(time.Second)
	second := micros(f.Now())
	start(t, g, fakegpu.Process{PID: 7, SM: 20, UsedMemory: 1 << 30})
	f.Advance(time.Second)

	if got := must(d.GetAccountingPids())(t, "GetAccountingPids"); !slices.Equal(got, []int{7}) {
		t.Errorf("GetAccountingPids() = %v, want [7] once", got)
	}
	want := nvml.AccountingStats{GpuUtilization: 20, MaxMemoryUsage: 1 << 30, StartTime: second, IsRunning: 1}
	if got := must(d.GetAccountingStats(7))(t, "GetAccountingStats(7)"); got != want {
		t.Errorf("GetAccountingStats(7) = %+v, want the newest record %+v", got, want)
	}
	g.StopProcess(7)
	want.IsRunning, want.Time = 0, 1000
	if got := must(d.GetAccountingStats(7))(t, "GetAccountingStats(7)"); got != want {
		t.Errorf("after stop GetAccountingStats(7) = %+v, want %+v", got, want)
	}
	if second-first != 4_000_000 {
		t.Errorf("records start %d µs apart, want 4 s", second-first)
	}
}

func TestAccountingFaults(t *testing.T) {
	calls := []struct {
		name string
		call func(d nvml.Device) nvml.Return
	}{
		{"GetAccountingMode", func(d nvml.Device) nvml.Return { _, r := d.GetAccountingMode(); return r }},
		{"SetAccountingMode", func(d nvml.Device) nvml.Return { return d.SetAccountingMode(nvml.FEATURE_ENABLED) }},
		{"GetAccountingPids", func(d nvml.Device) nvml.Return { _, r := d.GetAccountingPids(); return r }},
		{"GetAccountingStats", func(d nvml.Device) nvml.Return { _, r := d.GetAccountingStats(1); return r }},
		{"GetAccountingBufferSize", func(d nvml.Device) nvml.Return { _, r := d.GetAccountingBufferSize(); return r }},
		{"ClearAccountingPids", func(d nvml.Device) nvml.Return { return d.ClearAccountingPids() }},
	}
	tests := []struct {
		name   string
		setup  func(f *fakegpu.Fleet) nvml.Device
		want   nvml.Return
		wantOf map[string]nvml.Return // overrides want per method
	}{
		{"a failed SetAccountingMode touches only that method", func(f *fakegpu.Fleet) nvml.Device {
			f.GPU(0).Fail("SetAccountingMode", nvml.ERROR_NO_PERMISSION)
			return f.GPU(0).Device()
		}, nvml.SUCCESS, map[string]nvml.Return{
			"SetAccountingMode":  nvml.ERROR_NO_PERMISSION,
			"GetAccountingStats": nvml.ERROR_NOT_FOUND, // accounting stayed on, PID 1 unknown
		}},
		{"the accounting metric fails every accounting method", func(f *fakegpu.Fleet) nvml.Device {
			f.GPU(0).Fail("accounting", nvml.ERROR_NO_PERMISSION)
			return f.GPU(0).Device()
		}, nvml.ERROR_NO_PERMISSION, nil},
		{"an unsupported accounting metric", func(f *fakegpu.Fleet) nvml.Device {
			f.GPU(0).Unsupported("accounting")
			return f.GPU(0).Device()
		}, nvml.ERROR_NOT_SUPPORTED, nil},
		{"a lost GPU", func(f *fakegpu.Fleet) nvml.Device {
			f.GPU(0).Lose()
			return f.GPU(0).Device()
		}, nvml.ERROR_GPU_IS_LOST, nil},
		{"a MIG device", func(f *fakegpu.Fleet) nvml.Device {
			return f.GPU(0).MIGDevice(0).Device()
		}, nvml.ERROR_NOT_SUPPORTED, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakegpu.New(fakegpu.GPUSpec{Accounting: true, MIGEnabled: true,
				MIGDevices: []fakegpu.MIGSpec{{GI: 1, Profile: "1g.10gb"}}})
			initFleet(t, f)
			d := tt.setup(f)
			for _, c := range calls {
				want := tt.want
				if w, ok := tt.wantOf[c.name]; ok {
					want = w
				}
				if got := c.call(d); got != want {
					t.Errorf("%s = %v, want %v", c.name, got, want)
				}
			}
		})
	}
	if !slices.Contains(fakegpu.MetricNames(), "accounting") {
		t.Errorf("MetricNames() = %v, want it to include accounting", fakegpu.MetricNames())
	}
}

func TestAccountingScenario(t *testing.T) {
	const presetPID = 4194401 // GPU 0's process in the dgx presets
	tests := []struct {
		name     string
		json     string
		wantMode []nvml.EnableState // per GPU
		wantPIDs []int              // of GPU 0, when on
	}{
		{"the accounting key turns it on for its GPU only",
			`{"gpus": [{"accounting": true, "processes": [{"pid": 5, "sm_util": 40}]}, {"accounting": false}, {}]}`,
			[]nvml.EnableState{nvml.FEATURE_ENABLED, nvml.FEATURE_DISABLED, nvml.FEATURE_DISABLED}, []int{5}},
		{"a preset's processes are accounted from the start",
			`{"preset": "dgx-h100", "gpus": [{"accounting": true}]}`,
			[]nvml.EnableState{nvml.FEATURE_ENABLED, nvml.FEATURE_DISABLED}, []int{presetPID}},
		{"processes a scenario replaces leave no record",
			`{"preset": "dgx-h100", "gpus": [{"accounting": true, "processes": [{"pid": 9}]}]}`,
			[]nvml.EnableState{nvml.FEATURE_ENABLED}, []int{9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := fakegpu.ParseScenario([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			initFleet(t, f)
			for i, want := range tt.wantMode {
				if got := must(handle(t, f, i).GetAccountingMode())(t, "GetAccountingMode"); got != want {
					t.Errorf("GPU %d: GetAccountingMode() = %v, want %v", i, got, want)
				}
				if on := f.GPU(i).Spec().Accounting; on != (want == nvml.FEATURE_ENABLED) {
					t.Errorf("GPU %d: Spec().Accounting = %t", i, on)
				}
			}
			d := handle(t, f, 0)
			if got := must(d.GetAccountingPids())(t, "GetAccountingPids"); !slices.Equal(got, tt.wantPIDs) {
				t.Errorf("GetAccountingPids() = %v, want %v", got, tt.wantPIDs)
			}
			s := must(d.GetAccountingStats(uint32(tt.wantPIDs[0])))(t, "GetAccountingStats")
			if s.StartTime != micros(f.Now()) || s.IsRunning != 1 {
				t.Errorf("GetAccountingStats(%d) = %+v, want a running record from the start", tt.wantPIDs[0], s)
			}
		})
	}

	t.Run("a value that is not a bool names its key", func(t *testing.T) {
		_, err := fakegpu.ParseScenario([]byte(`{"gpus": [{}, {"accounting": "yes"}]}`))
		var se *fakegpu.ScenarioError
		if !errors.Is(err, fakegpu.ErrBadScenario) || !errors.As(err, &se) {
			t.Fatalf("error = %v, want a *ScenarioError", err)
		}
		if se.Path != "gpus[1].accounting" || !strings.Contains(err.Error(), "want true or false, got string") {
			t.Errorf("error = %q (path %q), want gpus[1].accounting: want true or false", err, se.Path)
		}
	})
	t.Run("a negative buffer size is not a valid spec", func(t *testing.T) {
		err := fakegpu.GPUSpec{AccountingBufferSize: -1}.Validate()
		if err == nil || !strings.Contains(err.Error(), "GPUSpec.AccountingBufferSize") {
			t.Errorf("Validate() = %v", err)
		}
		if got := fakegpu.New(fakegpu.GPUSpec{AccountingBufferSize: -1}).GPU(0).Spec().AccountingBufferSize; got != fakegpu.DefaultAccountingBufferSize {
			t.Errorf("resolved AccountingBufferSize = %d, want the default", got)
		}
	})
}
