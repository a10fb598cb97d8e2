//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/host"
)

// stepClock is an nvgo.Clock that moves only when told to. Its sleepers
// wake when Advance passes their deadline.
type stepClock struct {
	mu        sync.Mutex
	now       time.Time
	pending   []*stepSleeper
	deadlines []time.Time // of every sleep, in order
}

type stepSleeper struct {
	at   time.Time
	wake chan struct{}
}

var clockStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newStepClock() *stepClock { return &stepClock{now: clockStart} }

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	s := &stepSleeper{at: c.now.Add(d), wake: make(chan struct{})}
	c.deadlines = append(c.deadlines, s.at)
	if d <= 0 {
		c.mu.Unlock()
		return ctx.Err()
	}
	c.pending = append(c.pending, s)
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		c.pending = slices.DeleteFunc(c.pending, func(p *stepSleeper) bool { return p == s })
		c.mu.Unlock()
		return ctx.Err()
	}
}

// Set moves the clock to start + d (never backwards) and wakes the
// sleepers due.
func (c *stepClock) Set(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at := clockStart.Add(d); at.After(c.now) {
		c.now = at
	}
	c.pending = slices.DeleteFunc(c.pending, func(s *stepSleeper) bool {
		if s.at.After(c.now) {
			return false
		}
		close(s.wake)
		return true
	})
}

// Advance moves the clock forward by d and wakes the sleepers due.
func (c *stepClock) Advance(d time.Duration) { c.Set(c.Now().Sub(clockStart) + d) }

// waitTimers waits until n sleepers are pending: the goroutine under test
// has finished its work and gone back to sleep.
func (c *stepClock) waitTimers(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		got := len(c.pending)
		c.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sleepers pending, want %d", got, n)
		}
	}
}

// offsets returns the deadlines of the sleeps, as offsets from the start.
func (c *stepClock) offsets() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Duration
	for _, d := range c.deadlines {
		out = append(out, d.Sub(clockStart))
	}
	return out
}

// newCollector opens a one-GPU fleet (80 GiB, no processes) and a Collector
// on a step clock over it.
func newCollector(t *testing.T, opts ...nvgo.CollectorOption) (*nvgo.Collector, *fakegpu.Fleet, *stepClock) {
	t.Helper()
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100", MemoryTotal: 80 << 30})
	clock := newStepClock()
	lib := openOn(t, fleet, nvgo.WithClock(clock), nvgo.WithHostSource(ownPIDs{}))
	c, err := lib.NewCollector(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, fleet, clock
}

func collect(t *testing.T, c *nvgo.Collector) nvgo.Metrics {
	t.Helper()
	m, err := c.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// The mean weighs each value by the time it held, along straight lines
// between samples; N/A is skipped, never counted as 0.
func TestCollectorTimeWeightedStatistics(t *testing.T) {
	const na = -1
	type step struct {
		at   float64 // seconds after the tag's start
		util int     // GPU utilization, or na
	}
	tests := []struct {
		name  string
		steps []step
		want  *nvgo.Stat // nil: no statistics at all
	}{
		{
			name:  "a single value holds since the tag's start",
			steps: []step{{2, 10}},
			want:  &nvgo.Stat{Mean: 10, Min: 10, Max: 10, Last: 10, Count: 1},
		},
		{
			name:  "a value sampled at the tag's start is its own mean",
			steps: []step{{0, 40}},
			want:  &nvgo.Stat{Mean: 40, Min: 40, Max: 40, Last: 40, Count: 1},
		},
		{
			name:  "two values: flat, then a straight line", // (10·2 + 20·2) / 4
			steps: []step{{2, 10}, {4, 30}},
			want:  &nvgo.Stat{Mean: 15, Min: 10, Max: 30, Last: 30, Count: 2},
		},
		{
			name:  "each stretch weighs by its length", // (0·1 + 50·1 + 100·3) / 5
			steps: []step{{1, 0}, {2, 100}, {5, 100}},
			want:  &nvgo.Stat{Mean: 70, Min: 0, Max: 100, Last: 100, Count: 3},
		},
		{
			name:  "an N/A sample is skipped: the line joins its neighbours",
			steps: []step{{2, 10}, {3, na}, {4, 30}},
			want:  &nvgo.Stat{Mean: 15, Min: 10, Max: 30, Last: 30, Count: 2},
		},
		{
			name:  "N/A at the end: the mean stops at the last value",
			steps: []step{{2, 10}, {4, 30}, {6, na}},
			want:  &nvgo.Stat{Mean: 15, Min: 10, Max: 30, Last: 30, Count: 2},
		},
		{
			name:  "first seen after the first sample: counts from its first value", // (30+10)/2·2 / 2
			steps: []step{{2, na}, {4, 30}, {6, 10}},
			want:  &nvgo.Stat{Mean: 20, Min: 10, Max: 30, Last: 10, Count: 2},
		},
		{
			name:  "first seen in the last sample: its value",
			steps: []step{{2, na}, {4, 30}},
			want:  &nvgo.Stat{Mean: 30, Min: 30, Max: 30, Last: 30, Count: 1},
		},
		{
			name:  "never a value: no statistics, not zeros",
			steps: []step{{1, na}, {2, na}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, fleet, clock := newCollector(t)
			g := fleet.GPU(0)
			must(t, c.Activate("run"))
			var m nvgo.Metrics
			for _, s := range tt.steps {
				clock.Set(sec(s.at))
				if s.util == na {
					g.Fail("utilization", nvml.ERROR_UNKNOWN)
				} else {
					g.ClearFail("utilization")
					g.SetUtilization(uint32(s.util), 0)
				}
				m = collect(t, c)
			}
			got, ok := m.Stats["run/gpu:0/gpu_utilization (%)"]
			switch {
			case tt.want == nil && ok:
				t.Errorf("got %+v, want no statistics", got)
			case tt.want != nil && !ok:
				t.Errorf("no statistics; keys: %v", keys(m.Stats))
			case tt.want != nil && got != *tt.want:
				t.Errorf("got %+v, want %+v", got, *tt.want)
			}
			if span := m.Tags[0]; span.Samples != len(tt.steps) {
				t.Errorf("%d samples, want %d", span.Samples, len(tt.steps))
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Every sample feeds every active tag; each tag counts from its own start.
func TestCollectorNestedTags(t *testing.T) {
	c, fleet, clock := newCollector(t)
	g := fleet.GPU(0)
	must(t, c.Activate("train"))
	g.SetUtilization(10, 0)
	clock.Set(sec(2))
	collect(t, c)
	must(t, c.Activate("epoch1"))
	g.SetUtilization(30, 0)
	clock.Set(sec(4))
	m := collect(t, c)

	wantTags := []nvgo.TagSpan{
		{Tag: "train", Start: clockStart, LastSample: clockStart.Add(sec(4)), Samples: 2},
		{Tag: "train/epoch1", Start: clockStart.Add(sec(2)), LastSample: clockStart.Add(sec(4)), Samples: 1},
	}
	if !slices.Equal(m.Tags, wantTags) {
		t.Errorf("tags = %+v, want %+v", m.Tags, wantTags)
	}
	for key, want := range map[string]nvgo.Stat{
		"train/gpu:0/gpu_utilization (%)":        {Mean: 15, Min: 10, Max: 30, Last: 30, Count: 2},
		"train/epoch1/gpu:0/gpu_utilization (%)": {Mean: 30, Min: 30, Max: 30, Last: 30, Count: 1},
	} {
		if got := m.Stats[key]; got != want {
			t.Errorf("%s = %+v, want %+v", key, got, want)
		}
	}

	t.Run("an active tag cannot be activated again, even nested", func(t *testing.T) {
		for _, tag := range []string{"train", "epoch1"} {
			if err := c.Activate(tag); !errors.Is(err, nvgo.ErrInvalidArgument) {
				t.Errorf("Activate(%q) = %v, want ErrInvalidArgument", tag, err)
			}
		}
	})
	t.Run("Clear restarts one tag and leaves the others", func(t *testing.T) {
		clock.Set(sec(5))
		must(t, c.Clear("train"))
		clock.Set(sec(6))
		m := collect(t, c)
		if got := m.Tags[0]; got.Start != clockStart.Add(sec(5)) || got.Samples != 1 {
			t.Errorf("train after Clear = %+v, want start at 5s and 1 sample", got)
		}
		if got := m.Tags[1].Samples; got != 2 {
			t.Errorf("epoch1 has %d samples, want 2", got)
		}
	})
	t.Run("Deactivate ends the tags nested in it too", func(t *testing.T) {
		must(t, c.Deactivate("train"))
		_, err := c.Collect(context.Background())
		if !errors.Is(err, nvgo.ErrNotFound) {
			t.Errorf("Collect with no tag = %v, want ErrNotFound", err)
		}
		if err := c.Deactivate("epoch1"); !errors.Is(err, nvgo.ErrNotFound) {
			t.Errorf("Deactivate(epoch1) = %v, want ErrNotFound", err)
		}
		if err := c.Clear("train"); !errors.Is(err, nvgo.ErrNotFound) {
			t.Errorf("Clear(train) = %v, want ErrNotFound", err)
		}
	})
}

func TestCollectorRejectsBadArguments(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100")
	for _, tt := range []struct {
		name string
		opt  nvgo.CollectorOption
		want error
	}{
		{"a zero interval", nvgo.WithCollectorInterval(0), nvgo.ErrInvalidArgument},
		{"a negative interval", nvgo.WithCollectorInterval(-time.Second), nvgo.ErrInvalidArgument},
		{"a root PID that no process holds", nvgo.WithRootPIDs(os.Getpid(), 0), nvgo.ErrProcessGone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := lib.NewCollector(tt.opt); !errors.Is(err, tt.want) {
				t.Errorf("NewCollector = %v, want %v", err, tt.want)
			}
		})
	}
	c, err := lib.NewCollector()
	must(t, err)
	for _, tag := range []string{"", "a/b"} {
		t.Run(fmt.Sprintf("the tag %q", tag), func(t *testing.T) {
			if err := c.Activate(tag); !errors.Is(err, nvgo.ErrInvalidArgument) {
				t.Errorf("Activate = %v, want ErrInvalidArgument", err)
			}
		})
	}
}

// Every device metric is collected under "gpu:<i>", a MIG device's under
// "gpu:<i>:<MIG index>", and what a device does not report is left out.
func TestCollectorDeviceMetrics(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	g := fleet.GPU(2)
	g.SetMemoryUsed(20 << 30)
	g.SetUtilization(37, 12)
	g.SetTemperature(41)
	g.SetPower(72500, 700000)
	c, err := lib.NewCollector()
	must(t, err)
	must(t, c.Activate("run"))
	m := collect(t, c)

	for key, want := range map[string]float64{
		"run/gpu:2/memory_used (MiB)":      20480,
		"run/gpu:2/memory_percent (%)":     25, // of 80 GiB
		"run/gpu:2/gpu_utilization (%)":    37,
		"run/gpu:2/memory_utilization (%)": 12,
		"run/gpu:2/temperature (C)":        41,
		"run/gpu:2/memory_temperature (C)": 44, // the fake's HBM: the core plus 3
		"run/gpu:2/power_usage (W)":        72.5,
		"run/gpu:2/power_limit (W)":        700,
	} {
		if got, ok := m.Stats[key]; !ok || got.Last != want || got.Mean != want {
			t.Errorf("%s = %+v (present: %v), want %v", key, got, ok, want)
		}
	}
	if s, ok := m.Stats["run/gpu:2/memory_total (MiB)"]; !ok || s.Last != s.Max {
		t.Errorf("memory_total = %+v (present: %v)", s, ok)
	}
	for _, key := range []string{"run/gpu:0:0/memory_used (MiB)", "run/gpu:0:1/memory_used (MiB)", "run/gpu:0:3/memory_used (MiB)", "run/gpu:0/temperature (C)", "run/host/memory_percent (%)"} {
		if _, ok := m.Stats[key]; !ok {
			t.Errorf("%s missing", key)
		}
	}
	// SXM boards have no fan; MIG devices have no utilization or
	// temperature of their own: N/A, so no statistics.
	for _, key := range []string{"run/gpu:2/fan_speed (%)", "run/gpu:0:0/gpu_utilization (%)", "run/gpu:0:0/temperature (C)", "run/gpu:0:2/memory_used (MiB)"} {
		if s, ok := m.Stats[key]; ok {
			t.Errorf("%s = %+v, want none", key, s)
		}
	}
}

// With no device, only the host is sampled and NVML is not called.
func TestCollectorHostOnly(t *testing.T) {
	c, fleet, _ := newCollector(t, nvgo.WithCollectorDevices())
	must(t, c.Activate("run"))
	m := collect(t, c)
	if n := fleet.TotalCalls(); n != 0 {
		t.Errorf("%d NVML calls, want none: %v", n, fleet.Calls())
	}
	for _, k := range keys(m.Stats) {
		if !strings.HasPrefix(k, "run/host/") {
			t.Errorf("unexpected key %s", k)
		}
	}
	for _, k := range []string{"cpu_percent (%)", "memory_percent (%)", "swap_percent (%)", "memory_used (GiB)", "load_average (1 min)", "load_average (5 min)", "load_average (15 min)"} {
		if _, ok := m.Stats["run/host/"+k]; !ok {
			t.Errorf("run/host/%s missing; have %v", k, keys(m.Stats))
		}
	}
}

// Without a driver the host is still collected, and Collect says why the
// GPUs are missing.
func TestCollectorWithoutDriver(t *testing.T) {
	c, fleet, _ := newCollector(t)
	fleet.FailInit(nvml.ERROR_LIBRARY_NOT_FOUND)
	must(t, c.Activate("run"))
	m, err := c.Collect(context.Background())
	if !errors.Is(err, nvgo.ErrLibraryNotFound) {
		t.Errorf("Collect error = %v, want ErrLibraryNotFound", err)
	}
	if _, ok := m.Stats["run/host/memory_percent (%)"]; !ok {
		t.Errorf("no host statistics: %v", keys(m.Stats))
	}
	for _, k := range keys(m.Stats) {
		if strings.Contains(k, "gpu:") {
			t.Errorf("unexpected key %s", k)
		}
	}
}

// ownPIDs is this machine's /proc, whose PIDs are the fake GPUs' PIDs: the
// tests put their own children on the GPUs, so the PIDs can be looked up
// in a container too, where a real driver's (the host's) could not.
type ownPIDs struct{ host.ProcFS }

func (ownPIDs) HostPIDs() bool { return true }

// Processes descended from the roots are collected, others are not. (nvitop's
// collector loses its roots to the garbage collector and reports none.)
func TestCollectorProcessesOfRootsOnly(t *testing.T) {
	child := startSleep(t).Process.Pid
	sibling := startSleep(t).Process.Pid
	const initPID = 1 // our ancestor, not our descendant
	tests := []struct {
		name      string
		roots     []int // nil: the default, this process
		collected []int
	}{
		{name: "by default, this process's children", roots: nil, collected: []int{child}},
		{name: "a root itself", roots: []int{child}, collected: []int{child}},
		{name: "every process descends from init", roots: []int{initPID}, collected: []int{child, initPID}},
		{name: "not a sibling's", roots: []int{sibling}, collected: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []nvgo.CollectorOption
			if tt.roots != nil {
				opts = append(opts, nvgo.WithRootPIDs(tt.roots...))
			}
			c, fleet, _ := newCollector(t, opts...)
			g := fleet.GPU(0)
			must(t, g.StartProcess(fakegpu.Process{PID: uint32(child), UsedMemory: 8192 * miB, SM: 30, Mem: 5}))
			must(t, g.StartProcess(fakegpu.Process{PID: initPID, UsedMemory: 1024 * miB}))
			must(t, c.Activate("run"))
			m := collect(t, c)

			var pids []int
			for _, pid := range []int{child, initPID} {
				if _, ok := m.Stats[fmt.Sprintf("run/pid:%d/gpu:0/gpu_memory (MiB)", pid)]; ok {
					pids = append(pids, pid)
				}
			}
			if !slices.Equal(pids, tt.collected) {
				t.Errorf("collected %v, want %v (child %d)", pids, tt.collected, child)
			}
			for _, k := range keys(m.Stats) {
				if pid, ok := pidOf(k); ok && !slices.Contains(tt.collected, pid) {
					t.Errorf("unexpected key %s", k)
				}
			}
			if !slices.Contains(tt.collected, child) {
				return
			}
			p := fmt.Sprintf("run/pid:%d/", child)
			for key, want := range map[string]float64{
				"gpu:0/gpu_memory (MiB)":           8192,
				"gpu:0/gpu_memory_percent (%)":     10,
				"gpu:0/gpu_sm_utilization (%)":     30,
				"gpu:0/gpu_memory_utilization (%)": 5,
			} {
				if got := m.Stats[p+key]; got != (nvgo.Stat{Mean: want, Min: want, Max: want, Last: want, Count: 1}) {
					t.Errorf("%s = %+v, want %v", p+key, got, want)
				}
			}
			for _, key := range []string{"host/cpu_percent (%)", "host/host_memory (MiB)", "host/host_memory_percent (%)", "host/running_time (min)"} {
				if s, ok := m.Stats[p+key]; !ok || s.Count != 1 {
					t.Errorf("%s = %+v (present: %v)", p+key, s, ok)
				}
			}
			if s := m.Stats[p+"host/host_memory (MiB)"]; s.Last <= 0 {
				t.Errorf("host memory of a live sleep = %v MiB", s.Last)
			}
			flat := m.Flatten()
			if _, ok := flat[p+"host/running_time (min)"]; !ok {
				t.Errorf("Flatten has no %shost/running_time (min)", p)
			}
		})
	}
}

// pidOf returns p from a key "<tag>/pid:<p>/…".
func pidOf(key string) (int, bool) {
	_, rest, ok := strings.Cut(key, "/pid:")
	if !ok {
		return 0, false
	}
	var pid int
	_, err := fmt.Sscanf(rest, "%d/", &pid)
	return pid, err == nil
}

func TestMetricsFlatten(t *testing.T) {
	m := nvgo.Metrics{
		Timestamp: clockStart.Add(sec(90)),
		Tags: []nvgo.TagSpan{
			{Tag: "train", Start: clockStart, LastSample: clockStart.Add(sec(89.5)), Samples: 3},
			{Tag: "train/eval", Start: clockStart.Add(sec(60))},
		},
		Stats: map[string]nvgo.Stat{
			"train/gpu:0/gpu_utilization (%)":      {Mean: 15, Min: 10, Max: 30, Last: 20, Count: 3},
			"train/pid:42/host/running_time (min)": {Mean: 1.5, Min: 1, Max: 2, Last: 2, Count: 3},
		},
	}
	ts := float64(clockStart.Unix()) + 90
	want := map[string]float64{
		"train/gpu:0/gpu_utilization (%)/mean": 15,
		"train/gpu:0/gpu_utilization (%)/min":  10,
		"train/gpu:0/gpu_utilization (%)/max":  30,
		"train/gpu:0/gpu_utilization (%)/last": 20,
		"train/pid:42/host/running_time (min)": 2,
		"train/duration (s)":                   90,
		"train/timestamp":                      ts,
		"train/last_timestamp":                 ts - 0.5,
		"train/eval/duration (s)":              30,
		"train/eval/timestamp":                 ts,
	}
	got := m.Flatten()
	if len(got) != len(want) {
		t.Errorf("keys %v, want %v", keys(got), keys(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s = %v (present: %v), want %v", k, g, ok, w)
		}
	}
}

// The sampler keeps to start + n·interval and skips the deadlines it missed.
func TestCollectorStartSamplesOnSchedule(t *testing.T) {
	c, _, clock := newCollector(t)
	must(t, c.Activate("run"))
	ctx, cancel := context.WithCancel(context.Background())
	done := c.Start(ctx)

	clock.waitTimers(t, 1) // sampled at 0, asleep until 1s
	clock.Set(sec(1))
	clock.waitTimers(t, 1)
	clock.Set(sec(1.3)) // not yet due
	clock.Set(sec(4.5)) // due at 2s; 3s and 4s missed
	clock.waitTimers(t, 1)
	if got, want := clock.offsets(), []time.Duration{sec(1), sec(2), sec(5)}; !slices.Equal(got, want) {
		t.Errorf("deadlines %v, want %v", got, want)
	}
	m := collect(t, c) // at 4.5s: the sampler's sample is fresh
	if got := m.Tags[0]; got.Samples != 3 || got.LastSample != clockStart.Add(sec(4.5)) {
		t.Errorf("span %+v, want 3 samples, the last at 4.5s", got)
	}
	cancel()
	waitClosed(t, done)
}

// CollectInBackground reports every interval until its callback says stop.
func TestCollectorCollectInBackground(t *testing.T) {
	c, fleet, clock := newCollector(t) // samples every second
	fleet.GPU(0).SetUtilization(50, 0)
	must(t, c.Activate("run"))
	type report struct {
		at      time.Duration
		samples int
		mean    float64
	}
	var (
		mu      sync.Mutex
		reports []report
	)
	done := c.CollectInBackground(context.Background(), 2*time.Second, func(m nvgo.Metrics, err error) bool {
		if err != nil {
			t.Error(err)
		}
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, report{m.Timestamp.Sub(clockStart), m.Tags[0].Samples, m.Stats["run/gpu:0/gpu_utilization (%)"].Mean})
		return len(reports) < 3
	})
	for i := 1; i <= 6; i++ {
		clock.waitTimers(t, 1)
		clock.Set(sec(float64(i)))
	}
	waitClosed(t, done)
	want := []report{{sec(2), 3, 50}, {sec(4), 5, 50}, {sec(6), 7, 50}}
	if !slices.Equal(reports, want) {
		t.Errorf("reports %v, want %v", reports, want)
	}
}

func waitClosed(t *testing.T, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("background goroutine still running")
	}
}

// No goroutine outlives the context it was started with.
func TestCollectorGoroutinesStopWithTheirContext(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100")
	c, err := lib.NewCollector(nvgo.WithCollectorInterval(2 * time.Millisecond))
	must(t, err)
	must(t, c.Activate("run"))
	collect(t, c) // let the Library start whatever it keeps running
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	var calls sync.WaitGroup
	calls.Add(3)
	n := 0 // the callback runs in one goroutine
	doneStart := c.Start(ctx)
	doneBackground := c.CollectInBackground(ctx, 3*time.Millisecond, func(nvgo.Metrics, error) bool {
		if n < 3 {
			n++
			calls.Done()
		}
		return true
	})
	calls.Wait() // both goroutines are running
	cancel()
	waitClosed(t, doneStart)
	waitClosed(t, doneBackground)
	// Either goroutine has closed its channel but may not have returned yet.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
	}

	// A context that has ended already starts nothing that lasts.
	waitClosed(t, c.Start(ctx))
	waitClosed(t, c.CollectInBackground(ctx, 0, func(nvgo.Metrics, error) bool { return true }))
}
