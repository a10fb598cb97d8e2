//go:build cgo

package nvgo_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// benchInterval is the interval of the benchmarks' accumulators: so long
// that the sampler goroutine never reaches its deadline as the benchmark
// moves the fleet's clock, and ticks come only from TickNow (two ticks at
// once would race).
const benchInterval = 100 * 365 * 24 * time.Hour

// benchRig is an accumulator over a fake DGX H100 with procs processes per
// GPU whose sampler never fires on its own: the benchmark ticks it.
func benchRig(b *testing.B, procs int, accounting bool) (*fakegpu.Fleet, *nvgo.Accumulator) {
	b.Helper()
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	idle(fleet)
	for i := 0; i < fleet.Count(); i++ {
		g := fleet.GPU(i)
		g.SetUtilization(uint32(10*i), uint32(5*i))
		g.SetAccountingMode(accounting)
		for p := 0; p < procs; p++ {
			pid := uint32(1_000_000 + i*1000 + p)
			if err := g.StartProcess(fakegpu.Process{PID: pid, UsedMemory: 256 << 20, SM: uint32(p % 100), Mem: uint32(p % 50)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	lib := openOn(b, fleet, nvgo.WithClock(fleetclock.NewStepped(fleet)))
	ctx, cancel := context.WithCancel(context.Background())
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(benchInterval))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); <-acc.Done() })
	return fleet, acc
}

// BenchmarkAccumulatorTick is the cost of one tick over 8 GPUs with 64
// processes each, and the NVML calls it makes per GPU.
// With accounting on, each process's record is read at every tick, as
// atopgpud does.
func BenchmarkAccumulatorTick(b *testing.B) {
	for _, accounting := range []bool{false, true} {
		b.Run(map[bool]string{false: "accounting=off", true: "accounting=on"}[accounting], func(b *testing.B) {
			fleet, acc := benchRig(b, 64, accounting)
			fleet.ResetCalls()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				fleet.Advance(time.Second) // the fake driver's work, not ours
				b.StartTimer()
				nvgo.TickNow(acc)
			}
			b.StopTimer()
			b.ReportMetric(float64(fleet.TotalCalls())/float64(b.N)/float64(fleet.Count()), "NVML-calls/GPU/tick")
		})
	}
}

// BenchmarkAccumulatorLongRun runs 100,000 ticks in which processes come and
// go (one exits and a new PID starts on every GPU at every tick) with a
// Reader that reads every 10 ticks, and reports the live heap after 10,000
// and after 100,000 ticks: it must stay flat.
func BenchmarkAccumulatorLongRun(b *testing.B) {
	for range b.N {
		fleet, acc := benchRig(b, 64, true)
		rd := acc.NewReader()
		next := uint32(2_000_000)
		heap := func() float64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return float64(m.HeapAlloc) / (1 << 20)
		}
		var at10k float64
		for tick := 1; tick <= longRunTicks; tick++ {
			for i := 0; i < fleet.Count(); i++ {
				g := fleet.GPU(i)
				ps := g.Processes()
				g.StopProcess(ps[0].PID)
				next++
				if err := g.StartProcess(fakegpu.Process{PID: next, UsedMemory: 128 << 20, SM: next % 100}); err != nil {
					b.Fatal(err)
				}
			}
			fleet.Advance(time.Second)
			nvgo.TickNow(acc)
			if tick%10 == 0 {
				rd.Read()
			}
			if tick == 10_000 {
				at10k = heap()
			}
		}
		at100k := heap()
		rd.Close()
		b.ReportMetric(at10k, "heap-MiB@10k")
		b.ReportMetric(at100k, "heap-MiB@100k")
	}
}

// longRunTicks is the length of BenchmarkAccumulatorLongRun.
var longRunTicks = 100_000

// BenchmarkAccumulatorVgpuTick is the cost of one tick over the fake vGPU
// host vgpu-h100 (6 instances on 2 of its 8 GPUs, no host processes), and
// the NVML calls it makes per GPU: on a host, the instance listing, one read
// of the instance sample buffer and one framebuffer read per instance.
func BenchmarkAccumulatorVgpuTick(b *testing.B) {
	fleet, err := fakegpu.Preset("vgpu-h100")
	if err != nil {
		b.Fatal(err)
	}
	lib := openOn(b, fleet, nvgo.WithClock(fleetclock.NewStepped(fleet)))
	ctx, cancel := context.WithCancel(context.Background())
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(benchInterval))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); <-acc.Done() })
	fleet.ResetCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		fleet.Advance(time.Second)
		b.StartTimer()
		nvgo.TickNow(acc)
	}
	b.StopTimer()
	b.ReportMetric(float64(fleet.TotalCalls())/float64(b.N)/float64(fleet.Count()), "NVML-calls/GPU/tick")
}
