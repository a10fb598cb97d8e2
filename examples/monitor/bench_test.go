//go:build cgo && linux

package main

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/internal/cdoortest"
)

// BenchmarkRefresh is one refresh of the monitor on its real path: 8 GPUs
// with 64 real processes each (512 running `sleep`s behind the PIDs),
// read through the drop-in libnvidia-ml.so.1 loaded in this process, at a
// full 160×50 terminal. A refresh is the accumulator's tick, the snapshot,
// the host's figures and drawing the screen; the fake driver's own work
// (moving its clock, publishing its state) is left out. cpu-ms/refresh is
// this process's CPU time over the refreshes, every thread (the garbage
// collector's included; gc-ms/refresh is its share); at 1 Hz, 10 ms is 1%
// of one core. Allocations are counted around the refreshes alone too.
func BenchmarkRefresh(b *testing.B) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	cdoortest.RealProcesses(b, fleet, 64, func(_, j int) fakegpu.Process {
		return fakegpu.Process{UsedMemory: uint64(j+1) << 26, SM: uint32(j % 90)}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := fleetclock.NewStepped(fleet)
	lib, mirror := cdoortest.InProcess(b, fleet, nvgo.WithClock(clock))
	sel, err := tool.ChooseDevices(lib, nil, false)
	if err != nil {
		b.Fatal(err)
	}
	s, err := newSampler(ctx, lib, sel, time.Second, tool.ProcessFilter{})
	if err != nil {
		b.Fatal(err)
	}
	o := &options{interval: time.Second, mode: "auto"}
	m := newModel(ctx, s, hostSignaller{lib}, o)
	m.width, m.height = 160, 50
	// The fleet moves outside the clock (so that the mirror can be synced
	// before the tick), so it moves only once the accumulator has armed its
	// next timer: a timer armed after the move would fall a second late.
	armed := func() {
		for deadline := time.Now().Add(10 * time.Second); clock.Armed() == 0; {
			if time.Now().After(deadline) {
				b.Fatal("the accumulator armed no timer in 10 s")
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	refresh := func() {
		armed()
		fleet.Advance(time.Second)
		if err := mirror.Sync(); err != nil {
			b.Fatal(err)
		}
		ch := s.acc.Updated()
		clock.Advance(0) // fires the accumulator's due tick
		<-ch
		m.setFrame(s.read(ctx))
		_ = m.render()
	}
	for i := 0; i < 3; i++ {
		refresh()
	}
	if n := len(m.rows); n != 512 {
		b.Fatalf("%d processes in the table; want 512", n)
	}
	var cpu time.Duration
	var use, u0 runtimeUse
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		armed()
		fleet.Advance(time.Second)
		if err := mirror.Sync(); err != nil {
			b.Fatal(err)
		}
		ch := s.acc.Updated()
		b.StartTimer()
		u0.read()
		c0 := cdoortest.CPUTime(b)
		clock.Advance(0)
		<-ch
		m.setFrame(s.read(ctx))
		_ = m.render()
		cpu += cdoortest.CPUTime(b) - c0
		use.addSince(u0)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/refresh")
	b.ReportMetric(float64(cpu)/n/float64(time.Second)*100, "%core-at-1Hz")
	b.ReportMetric(use.gcSeconds*1000/n, "gc-ms/refresh")
	b.ReportMetric(float64(use.objects)/n, "allocs/refresh")
	b.ReportMetric(float64(use.bytes)/n/1024, "alloc-KiB/refresh")
}

// runtimeUse is what the Go runtime counts of allocations and garbage
// collection, read without stopping the world (runtime/metrics).
type runtimeUse struct {
	objects, bytes uint64
	gcSeconds      float64
}

var runtimeUseSamples = []metrics.Sample{
	{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
}

// read takes the totals now.
func (u *runtimeUse) read() {
	metrics.Read(runtimeUseSamples)
	u.objects = runtimeUseSamples[0].Value.Uint64()
	u.bytes = runtimeUseSamples[1].Value.Uint64()
	u.gcSeconds = runtimeUseSamples[2].Value.Float64()
}

// addSince adds what was used since the totals in from.
func (u *runtimeUse) addSince(from runtimeUse) {
	var now runtimeUse
	now.read()
	u.objects += now.objects - from.objects
	u.bytes += now.bytes - from.bytes
	u.gcSeconds += now.gcSeconds - from.gcSeconds
}

// BenchmarkMonitorDay is a day of 1 Hz refreshes on the Go fake (8 GPUs,
// simulated processes with host facts), one process replaced by a new one
// every 10 s: the monitor's history forgets the processes that left, so the
// live heap stays flat. Run it with -benchtime 86400x for a day.
func BenchmarkMonitorDay(b *testing.B) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	lib, clock := cdoortest.Simulated(b, fleet)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sel, _ := tool.ChooseDevices(lib, nil, false)
	s, err := newSampler(ctx, lib, sel, time.Second, tool.ProcessFilter{})
	if err != nil {
		b.Fatal(err)
	}
	m := newModel(ctx, s, hostSignaller{lib}, &options{interval: time.Second, mode: "auto", noColor: true})
	m.width, m.height = 160, 50
	nextPID := uint32(4_300_000)
	second := func(i int) {
		if i%10 == 9 {
			g := fleet.GPU(i / 10 % 8)
			if ps := g.Processes(); len(ps) > 0 {
				g.StopProcess(ps[0].PID)
			}
			nextPID++
			g.StartProcess(fakegpu.Process{PID: nextPID, UsedMemory: 1 << 30, SM: 50,
				Host: &fakegpu.Host{User: "dan", Command: []string{"python3", "job.py"}, CPU: 90, Memory: 2 << 30}})
		}
		ch := s.acc.Updated()
		clock.Advance(time.Second)
		<-ch
		m.setFrame(s.read(ctx))
		_ = m.render()
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// The history fills historyLen refreshes before it is full.
	for i := 0; i < historyLen+100; i++ {
		second(i)
	}
	start := heap()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		second(historyLen + 100 + i)
	}
	b.StopTimer()
	end := heap()
	b.ReportMetric(float64(start)/1024, "heap-start-KiB")
	b.ReportMetric(float64(end)/1024, "heap-end-KiB")
	b.ReportMetric((float64(end)-float64(start))/float64(b.N), "heap-growth-B/refresh")
	b.ReportMetric(float64(len(m.hist.procs)), "processes-in-history")
}
