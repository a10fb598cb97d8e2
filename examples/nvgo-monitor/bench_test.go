//go:build cgo && linux

package main

import (
	"context"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/nvgotest"
)

// BenchmarkRefresh is one refresh of the monitor on its real path: 8 GPUs
// with 64 real processes each (512 running `sleep`s behind the PIDs),
// read through the drop-in libnvidia-ml.so.1 loaded in this process, at a
// full 160×50 terminal. A refresh is the accumulator's tick, the snapshot,
// the host's figures and drawing the screen; the fake driver's own work
// (moving its clock, publishing its state) is left out. cpu-ms/refresh is
// this process's CPU time over the refreshes, every thread (the garbage
// collector's work in them included); at 1 Hz, 10 ms is 1% of one core.
// Allocations are counted around the refreshes alone too.
// Beside it, in the same run, the floor: the refresh's Snapshot alone (the
// GPUs and their processes with their /proc facts), which any monitor on
// nvgo must take; x-floor is a refresh's CPU over it.
func BenchmarkRefresh(b *testing.B) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	const perGPU = 64
	nvgotest.RealProcesses(b, fleet, perGPU, func(_, j int) fakegpu.Process {
		return fakegpu.Process{UsedMemory: uint64(j+1) << 26, SM: uint32(j % 90)}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := fleetclock.NewStepped(fleet)
	lib, mirror := nvgotest.InProcess(b, fleet, nvgo.WithClock(clock))
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
		m.setFrame(s.read(ctx))
		_ = m.render()
	}
	floor := func() {
		if _, err := lib.Snapshot(ctx, nvgo.WithDevices(sel.Devices...), nvgo.WithFields(snapshotFields)); err != nil {
			b.Fatal(err)
		}
	}
	// measure runs op n times, each after an untimed second of driver
	// time, counting its CPU time and allocations alone, with the
	// accumulator's tick when withTick (a refresh waits for it; the floor
	// does not; clock.Advance(0) fires the tick that is due).
	measure := func(n int, withTick bool, op func()) (cpu time.Duration, use nvgotest.Usage) {
		for i := 0; i < n; i++ {
			b.StopTimer()
			armed()
			fleet.Advance(time.Second)
			if err := mirror.Sync(); err != nil {
				b.Fatal(err)
			}
			ch := s.acc.Updated()
			if !withTick {
				clock.Advance(0)
				<-ch
			}
			u0 := nvgotest.ReadUsage()
			b.StartTimer()
			c0 := nvgotest.CPUTime(b)
			if withTick {
				clock.Advance(0)
				<-ch
			}
			op()
			cpu += nvgotest.CPUTime(b) - c0
			b.StopTimer()
			use.AddSince(u0)
			b.StartTimer()
		}
		return cpu, use
	}
	measure(3, true, refresh) // warm: static values, caches, cursors
	if n, want := len(m.rows), fleet.Count()*perGPU; n != want {
		b.Fatalf("%d processes in the table; want %d", n, want)
	}
	b.ResetTimer()
	cpu, use := measure(b.N, true, refresh)
	b.StopTimer()
	floorCPU, _ := measure(b.N, false, floor)
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/refresh")
	b.ReportMetric(float64(cpu)/n/float64(time.Second)*100, "%core-at-1Hz")
	b.ReportMetric(float64(use.Objects)/n, "allocs/refresh")
	b.ReportMetric(float64(use.Bytes)/n/1024, "alloc-KiB/refresh")
	b.ReportMetric(float64(floorCPU.Microseconds())/1000/n, "floor-cpu-ms")
	nvgotest.ReportOverFloor(b, cpu, floorCPU)
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
	lib, clock := nvgotest.Simulated(b, fleet)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sel, _ := tool.ChooseDevices(lib, nil, false)
	s, err := newSampler(ctx, lib, sel, time.Second, tool.ProcessFilter{})
	if err != nil {
		b.Fatal(err)
	}
	m := newModel(ctx, s, hostSignaller{lib}, &options{interval: time.Second, mode: "auto", noColor: true})
	m.width, m.height = 160, 50
	churn := nvgotest.Churn{Fleet: fleet}
	second := func(i int) {
		churn.Second(i)
		ch := s.acc.Updated()
		clock.Advance(time.Second)
		<-ch
		m.setFrame(s.read(ctx))
		_ = m.render()
	}
	// The history fills historyLen refreshes before it is full.
	for i := 0; i < historyLen+100; i++ {
		second(i)
	}
	start := nvgotest.LiveHeap()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		second(historyLen + 100 + i)
	}
	b.StopTimer()
	end := nvgotest.LiveHeap()
	b.ReportMetric(float64(start)/1024, "heap-start-KiB")
	b.ReportMetric(float64(end)/1024, "heap-end-KiB")
	b.ReportMetric((float64(end)-float64(start))/float64(b.N), "heap-growth-B/refresh")
	b.ReportMetric(float64(len(m.hist.procs)), "processes-in-history")
}
