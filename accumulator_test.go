//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// accRig is an accumulator over a fake fleet on a fake clock.
//
// The fake processes of these tests have PIDs above Linux's PID_MAX_LIMIT
// (2^22), as the presets' do: the accumulator reads every PID's host facts,
// so a fake PID that a real process on the test machine happens to hold
// would be read as that process (a real PID 900 once made the accounting
// record look like an earlier process's, the fake clock being in 2025).
type accRig struct {
	t     *testing.T
	fleet *fakegpu.Fleet
	clock *fleetclock.Stepped
	acc   *nvgo.Accumulator
	stop  context.CancelFunc
}

func startRig(t *testing.T, fleet *fakegpu.Fleet, opts ...nvgo.AccumulatorOption) *accRig {
	t.Helper()
	clk := fleetclock.NewStepped(fleet)
	lib := openOn(t, fleet, nvgo.WithClock(clk))
	ctx, cancel := context.WithCancel(context.Background())
	acc, err := lib.StartAccumulator(ctx, opts...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-acc.Done() })
	return &accRig{t: t, fleet: fleet, clock: clk, acc: acc, stop: cancel}
}

// tick advances the clock by d, which must reach the next tick, and waits
// for that tick to be published.
func (r *accRig) tick(d time.Duration) nvgo.Counters {
	r.t.Helper()
	want := r.acc.Counters().Ticks + 1
	ch := r.acc.Updated()
	r.clock.Advance(d)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		r.t.Fatalf("tick %d was not published", want)
	}
	c := r.acc.Counters()
	if c.Ticks != want {
		r.t.Fatalf("after the tick: Ticks = %d, want %d", c.Ticks, want)
	}
	return c
}

func gpuOf(t *testing.T, c nvgo.Counters, i int) nvgo.GPUCounters {
	t.Helper()
	g, ok := c.GPU(i)
	if !ok {
		t.Fatalf("no counters for GPU %d", i)
	}
	return g
}

func procOf(t *testing.T, g nvgo.GPUCounters, pid int) nvgo.ProcessCounters {
	t.Helper()
	for _, p := range g.Processes {
		if p.PID == pid {
			return p
		}
	}
	t.Fatalf("GPU %d: no counters for pid %d (have %d processes)", g.Index, pid, len(g.Processes))
	return nvgo.ProcessCounters{}
}

func sumOf(t *testing.T, v nvgo.Value[float64]) float64 {
	t.Helper()
	s, ok := v.Get()
	if !ok {
		t.Fatalf("sum is N/A: %v", v.Err())
	}
	return s
}

func twoH100() *fakegpu.Fleet {
	return fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
}

// The counters are the exact sums of what the fleet reported at each tick.
func TestAccumulatorCountsExactly(t *testing.T) {
	fleet := twoH100()
	g0 := fleet.GPU(0)
	steps := []struct {
		gpu, mem uint32
		used     uint64
		sm, pmem uint32
	}{
		{50, 10, 4 << 30, 40, 5},
		{80, 30, 6 << 30, 70, 20},
		{20, 5, 2 << 30, 0, 0},
		{100, 60, 8 << 30, 90, 50},
	}
	s := steps[0]
	g0.SetUtilization(s.gpu, s.mem)
	g0.SetMemoryUsed(s.used)
	must(t, g0.StartProcess(fakegpu.Process{PID: 4194546, UsedMemory: 1 << 30, SM: s.sm, Mem: s.pmem}))
	r := startRig(t, fleet)

	var wantGPU, wantMem float64
	var wantUsed uint64
	var wantSM, wantPMem float64
	for i, s := range steps {
		if i > 0 {
			// The value holds for the whole second before the tick.
			g0.SetUtilization(s.gpu, s.mem)
			g0.SetMemoryUsed(s.used)
			g0.SetProcessUtilization(4194546, s.sm, s.pmem, 0, 0)
			r.tick(time.Second)
		}
		wantGPU += float64(s.gpu)
		wantMem += float64(s.mem)
		wantUsed += s.used / 1024
		wantSM += float64(s.sm)
		wantPMem += float64(s.pmem)
	}
	c := r.acc.Counters()
	if c.Ticks != uint64(len(steps)) || c.Missed != 0 {
		t.Fatalf("Ticks, Missed = %d, %d; want %d, 0", c.Ticks, c.Missed, len(steps))
	}
	g := gpuOf(t, c, 0)
	if g.Samples != 4 || sumOf(t, g.GPUUtilization.Sum) != wantGPU || sumOf(t, g.MemoryUtilization.Sum) != wantMem {
		t.Errorf("GPU 0: samples %d, busy sum %v, memory busy sum %v; want 4, %v, %v",
			g.Samples, g.GPUUtilization.Sum, g.MemoryUtilization.Sum, wantGPU, wantMem)
	}
	if got := g.MemoryUsed.SumKiB.Or(0); got != wantUsed {
		t.Errorf("GPU 0: memory used sum %d KiB, want %d", got, wantUsed)
	}
	if got := g.GPUUtilization.Last.Or(-1); got != 100 {
		t.Errorf("GPU 0: last busy %v, want 100", got)
	}
	p := procOf(t, g, 4194546)
	if p.Samples != 4 || sumOf(t, p.GPUSMUtilization.Sum) != wantSM || sumOf(t, p.GPUMemoryUtilization.Sum) != wantPMem {
		t.Errorf("pid 4194546: samples %d, SM sum %v, mem sum %v; want 4, %v, %v",
			p.Samples, p.GPUSMUtilization.Sum, p.GPUMemoryUtilization.Sum, wantSM, wantPMem)
	}
	if got, want := p.GPUMemory.SumKiB.Or(0), uint64(4<<20); got != want {
		t.Errorf("pid 4194546: memory sum %d KiB, want %d", got, want)
	}
	if g1 := gpuOf(t, c, 1); g1.Samples != 4 || sumOf(t, g1.GPUUtilization.Sum) != 0 || len(g1.Processes) != 0 {
		t.Errorf("idle GPU 1: samples %d, busy sum %v, %d processes; want 4, 0, 0", g1.Samples, g1.GPUUtilization.Sum, len(g1.Processes))
	}
}

// Activity between two ticks counts, weighted by how long it lasted.
func TestAccumulatorSeesBetweenTicks(t *testing.T) {
	fleet := twoH100()
	g0 := fleet.GPU(0)
	r := startRig(t, fleet)
	// 250 ms at 100%, then 750 ms idle: a reading at the tick alone sees 0.
	r.clock.Advance(250 * time.Millisecond)
	g0.SetUtilization(100, 40)
	r.clock.Advance(250 * time.Millisecond)
	g0.SetUtilization(0, 0)
	c := r.tick(500 * time.Millisecond)
	g := gpuOf(t, c, 0)
	if got := g.GPUUtilization.Last.Or(-1); got != 25 {
		t.Errorf("busy over the second = %v, want 25", got)
	}
	if got := g.MemoryUtilization.Last.Or(-1); got != 10 {
		t.Errorf("memory busy over the second = %v, want 10", got)
	}
}

// Without sample buffers the instantaneous reading is used; without any
// utilization the sums are N/A (atop's -1), with the reason.
func TestAccumulatorFallbacks(t *testing.T) {
	fleet := twoH100()
	fleet.GPU(0).Unsupported("GetSamples")
	fleet.GPU(0).SetUtilization(30, 7)
	fleet.GPU(1).Unsupported("GetSamples", "utilization")
	r := startRig(t, fleet)
	r.tick(time.Second)
	c := r.tick(time.Second)
	g0 := gpuOf(t, c, 0)
	if sumOf(t, g0.GPUUtilization.Sum) != 90 || sumOf(t, g0.MemoryUtilization.Sum) != 21 {
		t.Errorf("GPU 0 sums %v, %v; want 90, 21", g0.GPUUtilization.Sum, g0.MemoryUtilization.Sum)
	}
	g1 := gpuOf(t, c, 1)
	if g1.GPUUtilization.Sum.Reason() != nvgo.NotSupported || g1.GPUUtilization.Last.Reason() != nvgo.NotSupported || g1.GPUUtilization.Samples != 0 {
		t.Errorf("GPU 1 busy: sum %v, last %v, samples %d; want N/A (not supported) and 0", g1.GPUUtilization.Sum, g1.GPUUtilization.Last, g1.GPUUtilization.Samples)
	}
	if g1.Samples != 3 || g1.MemoryUsed.Samples != 3 {
		t.Errorf("GPU 1: samples %d, memory samples %d; want 3, 3", g1.Samples, g1.MemoryUsed.Samples)
	}
	iv, err := nvgo.Delta(nvgo.Counters{}, c)
	must(t, err)
	if iv.GPUs[1].GPUUtilization.Reason() != nvgo.NotSupported {
		t.Errorf("interval busy of GPU 1 = %v, want N/A (not supported)", iv.GPUs[1].GPUUtilization)
	}
}

// Delta gives the averages between any two counters of one accumulator.
func TestAccumulatorDelta(t *testing.T) {
	fleet := twoH100()
	g0 := fleet.GPU(0)
	busy := []uint32{10, 20, 30, 40, 50, 60}
	g0.SetUtilization(busy[0], 0)
	must(t, g0.StartProcess(fakegpu.Process{PID: 4300777, UsedMemory: 1 << 30, SM: 10}))
	r := startRig(t, fleet)
	all := []nvgo.Counters{r.acc.Counters()}
	for i := 1; i < len(busy); i++ {
		g0.SetUtilization(busy[i], 0)
		g0.SetProcessUtilization(4300777, busy[i], 0, 0, 0)
		g0.SetMemoryUsed(uint64(i) << 30)
		all = append(all, r.tick(time.Second))
	}
	for from := range all {
		for to := from; to < len(all); to++ {
			var want float64
			n := 0
			for k := from + 1; k <= to; k++ {
				want += float64(busy[k])
				n++
			}
			iv, err := nvgo.Delta(all[from], all[to])
			must(t, err)
			if iv.Ticks != uint64(n) || iv.Duration() != time.Duration(n)*time.Second {
				t.Errorf("Delta(%d, %d): %d ticks over %v, want %d over %ds", from, to, iv.Ticks, iv.Duration(), n, n)
			}
			g := iv.GPUs[0]
			if n == 0 {
				if !g.GPUUtilization.IsNA() {
					t.Errorf("Delta(%d, %d): busy %v over no tick, want N/A", from, to, g.GPUUtilization)
				}
				continue
			}
			if got := g.GPUUtilization.Or(-1); float64(got) != want/float64(n) {
				t.Errorf("Delta(%d, %d): busy %v, want %v", from, to, got, want/float64(n))
			}
			if got := g.Processes[0].GPUSMUtilization.Or(-1); float64(got) != want/float64(n) {
				t.Errorf("Delta(%d, %d): pid 4300777 SM %v, want %v", from, to, got, want/float64(n))
			}
		}
	}
	// From the start (the zero Counters) includes the first tick.
	iv, err := nvgo.Delta(nvgo.Counters{}, all[len(all)-1])
	must(t, err)
	if got := iv.GPUs[0].GPUUtilization.Or(-1); got != 35 {
		t.Errorf("Delta since start: busy %v, want 35", got)
	}
	if _, err := nvgo.Delta(all[3], all[1]); !errors.Is(err, nvgo.ErrForeignCounters) {
		t.Errorf("Delta backwards: err = %v, want ErrForeignCounters", err)
	}
}

// Each reader gets each exited process once; a reader created after the
// exit never sees it; a PID that comes back is a new process.
func TestAccumulatorExitsAndPIDReuse(t *testing.T) {
	fleet := twoH100()
	g0 := fleet.GPU(0)
	must(t, g0.StartProcess(fakegpu.Process{PID: 4300500, UsedMemory: 2 << 30, SM: 60}))
	must(t, g0.StartProcess(fakegpu.Process{PID: 4300501, UsedMemory: 1 << 30, SM: 10}))
	r := startRig(t, fleet)
	early := r.acc.NewReader()
	defer early.Close()
	r.tick(time.Second)
	before := r.acc.Counters()
	first := procOf(t, gpuOf(t, before, 0), 4300500)

	g0.StopProcess(4300500)
	r.tick(time.Second)
	late := r.acc.NewReader()
	defer late.Close()

	c := early.Read()
	ex := gpuOf(t, c, 0).Exited
	if len(ex) != 1 || ex[0].PID != 4300500 || !ex[0].Exited || ex[0].Samples != 2 || ex[0].Since != first.Since {
		t.Fatalf("first read: exited %+v, want pid 4300500 once, with its 2 samples", ex)
	}
	if got := sumOf(t, ex[0].GPUSMUtilization.Sum); got != 120 {
		t.Errorf("exited pid 4300500: SM sum %v, want 120", got)
	}
	for name, rd := range map[string]*nvgo.Reader{"early, again": early, "late": late} {
		if ex := gpuOf(t, rd.Read(), 0).Exited; len(ex) != 0 {
			t.Errorf("%s: exited %v, want none", name, ex)
		}
	}
	iv, err := nvgo.Delta(before, c)
	must(t, err)
	var sawExit bool
	for _, p := range iv.GPUs[0].Processes {
		if p.PID == 4300500 {
			sawExit = p.Exited && p.Samples == 0
		}
	}
	if !sawExit {
		t.Errorf("Delta over the exit: %+v, want pid 4300500 exited with no tick in the interval", iv.GPUs[0].Processes)
	}

	// PID 4300500 comes back: new key, counters from zero.
	must(t, g0.StartProcess(fakegpu.Process{PID: 4300500, UsedMemory: 3 << 30, SM: 5}))
	c = r.tick(time.Second)
	again := procOf(t, gpuOf(t, c, 0), 4300500)
	if again.Since == first.Since || again.Samples != 1 || sumOf(t, again.GPUSMUtilization.Sum) != 5 {
		t.Errorf("reused pid 4300500: since %v (old %v), samples %d, SM sum %v; want a new key, 1, 5",
			again.Since, first.Since, again.Samples, again.GPUSMUtilization.Sum)
	}
	if got := procOf(t, gpuOf(t, c, 0), 4300501).Samples; got != 4 {
		t.Errorf("pid 4300501 samples = %d, want 4", got)
	}
}

// A reader that never reads keeps a bounded number of exits.
func TestAccumulatorPendingExitsBounded(t *testing.T) {
	fleet := twoH100()
	g0 := fleet.GPU(0)
	r := startRig(t, fleet, nvgo.WithMaxPendingExits(3))
	rd := r.acc.NewReader()
	defer rd.Close()
	for pid := uint32(100); pid < 105; pid++ {
		must(t, g0.StartProcess(fakegpu.Process{PID: pid}))
		r.tick(time.Second)
		g0.StopProcess(pid)
	}
	r.tick(time.Second)
	ex := gpuOf(t, rd.Read(), 0).Exited
	if len(ex) != 3 || ex[0].PID != 102 || rd.Dropped() != 2 {
		t.Errorf("exits %v (dropped %d), want the newest 3 (102..104) and 2 dropped", ex, rd.Dropped())
	}
}

// A lost GPU keeps its counters and reports the error; the others go on.
func TestAccumulatorLostGPU(t *testing.T) {
	fleet := twoH100()
	fleet.GPU(0).SetUtilization(40, 0)
	fleet.GPU(1).SetUtilization(60, 0)
	r := startRig(t, fleet)
	r.tick(time.Second)
	fleet.GPU(1).Lose()
	r.tick(time.Second)
	c := r.tick(time.Second)
	g0, g1 := gpuOf(t, c, 0), gpuOf(t, c, 1)
	if g0.Samples != 4 || sumOf(t, g0.GPUUtilization.Sum) != 160 || g0.Err != nil {
		t.Errorf("GPU 0: samples %d, sum %v, err %v; want 4, 160, nil", g0.Samples, g0.GPUUtilization.Sum, g0.Err)
	}
	if !errors.Is(g1.Err, nvgo.ErrGPULost) || g1.Samples != 2 || sumOf(t, g1.GPUUtilization.Sum) != 120 || g1.GPUUtilization.Last.Reason() != nvgo.GPULost {
		t.Errorf("lost GPU 1: err %v, samples %d, sum %v, last %v; want ErrGPULost, 2, 120, N/A (GPU lost)",
			g1.Err, g1.Samples, g1.GPUUtilization.Sum, g1.GPUUtilization.Last)
	}
}

// A GPU whose process lists fail while its readings do not says so: "no
// processes" is never confused with "could not list them", and the
// interval counts the ticks whose lists were read.
func TestAccumulatorProcessListFailure(t *testing.T) {
	fleet := twoH100()
	g1 := fleet.GPU(1)
	must(t, g1.StartProcess(fakegpu.Process{PID: 200, UsedMemory: 1 << 30}))
	r := startRig(t, fleet)
	first := r.tick(time.Second)
	g1.Fail("processes", nvml.ERROR_UNKNOWN)
	r.tick(time.Second)
	failed := r.tick(time.Second)
	g := gpuOf(t, failed, 1)
	if g.Err != nil || !errors.Is(g.ProcessesErr, nvgo.ReturnUnknown) || g.Samples != 4 || g.ProcessSamples != 2 {
		t.Errorf("lists failing: err %v, processes err %v, samples %d, process samples %d; want nil, UNKNOWN, 4, 2",
			g.Err, g.ProcessesErr, g.Samples, g.ProcessSamples)
	}
	if len(g.Processes) != 1 || g.Processes[0].PID != 200 || len(g.Exited) != 0 {
		t.Errorf("processes %v, exited %v; want PID 200 kept and nobody exited", g.Processes, g.Exited)
	}
	iv, err := nvgo.Delta(first, failed)
	must(t, err)
	if gi := iv.GPU(1); gi == nil || gi.ProcessSamples != 0 || gi.Samples != 2 || gi.ProcessesErr == nil {
		t.Errorf("interval GPU 1: %+v; want 2 samples, 0 process samples and the error", gi)
	}
	if g0 := gpuOf(t, failed, 0); g0.ProcessesErr != nil || g0.ProcessSamples != g0.Samples {
		t.Errorf("GPU 0: processes err %v, process samples %d of %d; want nil and all", g0.ProcessesErr, g0.ProcessSamples, g0.Samples)
	}

	g1.Fail("processes", nvml.SUCCESS)
	if g := gpuOf(t, r.tick(time.Second), 1); g.ProcessesErr != nil || g.ProcessSamples != 3 {
		t.Errorf("lists back: processes err %v, process samples %d; want nil, 3", g.ProcessesErr, g.ProcessSamples)
	}
	g1.Lose()
	if g := gpuOf(t, r.tick(time.Second), 1); !errors.Is(g.ProcessesErr, nvgo.ErrGPULost) {
		t.Errorf("lost GPU: processes err %v; want ErrGPULost", g.ProcessesErr)
	}
}

// A tick that overruns skips the ticks it missed, and the schedule does not
// drift.
func TestAccumulatorMissedTicks(t *testing.T) {
	r := startRig(t, twoH100())
	start := r.acc.Counters().Start
	c := r.tick(3500 * time.Millisecond)
	if c.Missed != 2 {
		t.Errorf("Missed = %d, want 2", c.Missed)
	}
	c = r.tick(500 * time.Millisecond) // the next tick is due at start+4s
	if c.Missed != 2 || !c.Time.Equal(start.Add(4*time.Second)) {
		t.Errorf("next tick at %v with %d missed, want start+4s with 2", c.Time.Sub(start), c.Missed)
	}
}

// Ending the context stops the sampler; no goroutine is left.
func TestAccumulatorStopsWithContext(t *testing.T) {
	fleet := twoH100()
	lib := openOn(t, fleet)
	before := runtime.NumGoroutine()
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(time.Millisecond))
		must(t, err)
		rd := acc.NewReader()
		cancel()
		select {
		case <-acc.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the sampler did not stop")
		}
		rd.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after stopping, %d before", n, before)
	}
}

func TestAccumulatorBadInput(t *testing.T) {
	lib := openOn(t, twoH100())
	for name, opt := range map[string]nvgo.AccumulatorOption{
		"negative interval": nvgo.WithAccumulatorInterval(-time.Second),
		"zero interval":     nvgo.WithAccumulatorInterval(0),
		"negative pending":  nvgo.WithMaxPendingExits(-1),
		"zero pending":      nvgo.WithMaxPendingExits(0),
	} {
		if _, err := lib.StartAccumulator(context.Background(), opt); !errors.Is(err, nvgo.ErrInvalidArgument) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument", name, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := lib.StartAccumulator(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v, want context.Canceled", err)
	}
}

// With accounting on, each process carries its accounting record, and an
// exited one its final record.
func TestAccumulatorAccounting(t *testing.T) {
	fleet := twoH100()
	g0 := fleet.GPU(0)
	g0.SetAccountingMode(true)
	must(t, g0.StartProcess(fakegpu.Process{PID: 4300900, UsedMemory: 1 << 30, SM: 40, Mem: 10}))
	must(t, fleet.GPU(1).StartProcess(fakegpu.Process{PID: 4300901, UsedMemory: 1 << 30, SM: 40}))
	r := startRig(t, fleet)
	rd := r.acc.NewReader()
	defer rd.Close()
	c := r.tick(time.Second)
	a, ok := procOf(t, gpuOf(t, c, 0), 4300900).Accounting.Get()
	if !ok || !a.Running || a.GPUUtilization != nvgo.Some[nvgo.Percent](40) || a.MemoryUtilization != nvgo.Some[nvgo.Percent](10) {
		t.Errorf("running pid 4300900: accounting %+v (ok %v), want running at 40%% SM, 10%% memory", a, ok)
	}
	off := procOf(t, gpuOf(t, c, 1), 4300901).Accounting
	if off.Reason() != nvgo.NotSupported || !errors.Is(off.Err(), nvgo.ErrAccountingOff) {
		t.Errorf("pid 4300901 on a GPU without accounting: %v (%v), want N/A wrapping ErrAccountingOff", off, off.Err())
	}
	g0.StopProcess(4300900)
	r.tick(time.Second)
	ex := gpuOf(t, rd.Read(), 0).Exited
	if len(ex) != 1 {
		t.Fatalf("exited = %v, want pid 4300900", ex)
	}
	a, ok = ex[0].Accounting.Get()
	if rt, known := a.RunningTime.Get(); !ok || a.Running || !known || rt != time.Second {
		t.Errorf("exited pid 4300900: final accounting %+v (ok %v), want not running, 1s", a, ok)
	}
}

// On a unified-memory GPU the accumulator's memory is N/A with the reason,
// by the same rule as Device's, never 0 bytes.
func TestAccumulatorUnifiedMemoryIsNA(t *testing.T) {
	fleet := twoH100()
	fleet.GPU(1).Unsupported("memory")
	r := startRig(t, fleet)
	c := r.tick(time.Second)
	g0, g1 := gpuOf(t, c, 0), gpuOf(t, c, 1)
	if g0.MemoryTotal.IsNA() || g0.MemoryUsed.SumKiB.IsNA() {
		t.Errorf("GPU 0: total %v, used sum %v; want figures", g0.MemoryTotal, g0.MemoryUsed.SumKiB)
	}
	for name, v := range map[string]nvgo.Value[nvgo.Bytes]{"MemoryTotal": g1.MemoryTotal, "MemoryUsed.Last": g1.MemoryUsed.Last} {
		if !v.IsNA() || !errors.Is(v.Err(), nvgo.ErrUnifiedMemory) {
			t.Errorf("GPU 1 %s = %v (%v); want N/A because of unified memory", name, v, v.Err())
		}
	}
	if !g1.MemoryUsed.SumKiB.IsNA() {
		t.Errorf("GPU 1 used-memory sum = %v; want N/A, not 0", g1.MemoryUsed.SumKiB)
	}
}

// On a fake fleet the driver's samples move only with the fleet's clock. A
// Library opened with the fleet's real-time clock gives its accumulator
// that clock by default, so busy processes show their utilization (with
// the system clock alone the fleet stands still and they would show 0%).
func TestAccumulatorOnAFakeFleetWithItsRealTimeClock(t *testing.T) {
	fleet := twoH100()
	cmd := startSleep(t)
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(cmd.Process.Pid), SM: 60, Mem: 20, UsedMemory: 512 * miB}))
	fleet.GPU(0).SetUtilization(60, 20)
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithClock(fleetclock.RealTime(fleet)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(20*time.Millisecond))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-acc.Done() })
	start := acc.Counters()
	for deadline := time.Now().Add(10 * time.Second); acc.Counters().Ticks < start.Ticks+3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the accumulator did not tick on the fleet's real-time clock")
		}
	}
	iv, err := nvgo.Delta(start, acc.Counters())
	if err != nil {
		t.Fatal(err)
	}
	if len(iv.GPUs) == 0 || len(iv.GPUs[0].Processes) != 1 {
		t.Fatalf("the interval: %+v", iv)
	}
	g := iv.GPUs[0]
	if sm := g.Processes[0].GPUSMUtilization.Or(0); sm < 50 {
		t.Errorf("process SM utilization %v over the interval; want about 60%%", g.Processes[0].GPUSMUtilization)
	}
}
