//go:build cgo && linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/nvgotest"
)

// scrapeBench is a node of 8 GPUs with 16 real processes each (128
// `sleep`s behind the PIDs), read through the drop-in libnvidia-ml.so.1
// loaded in this process.
type scrapeBench struct {
	fleet  *fakegpu.Fleet
	mirror *fakegpu.Mirror
	clock  *fleetclock.Stepped
	lib    *nvgo.Library
	r      *reader
}

func newScrapeBench(b *testing.B) *scrapeBench {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	nvgotest.RealProcesses(b, fleet, 16, func(_, j int) fakegpu.Process {
		return fakegpu.Process{UsedMemory: uint64(j+1) << 28, SM: uint32(j * 5)}
	})
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	clock := fleetclock.NewStepped(fleet)
	lib, mirror := nvgotest.InProcess(b, fleet, nvgo.WithClock(clock))
	r, err := newReader(ctx, lib, "bench", time.Second)
	if err != nil {
		b.Fatal(err)
	}
	return &scrapeBench{fleet: fleet, mirror: mirror, clock: clock, lib: lib, r: r}
}

// second moves the driver and the accumulator on by a second, untimed.
func (s *scrapeBench) second(b *testing.B) {
	for deadline := time.Now().Add(10 * time.Second); s.clock.Armed() == 0; time.Sleep(100 * time.Microsecond) {
		if time.Now().After(deadline) {
			b.Fatal("the accumulator armed no timer in 10 s")
		}
	}
	s.fleet.Advance(time.Second)
	if err := s.mirror.Sync(); err != nil {
		b.Fatal(err)
	}
	ch := s.r.acc.Updated()
	s.clock.Advance(0)
	<-ch
}

// BenchmarkScrape is one scrape of /metrics on 8 GPUs × 128 real
// processes, as Prometheus makes it: the means since the previous scrape,
// a snapshot of the GPUs and their processes (with their /proc facts),
// every series built and encoded as text. Beside it, the floor: the same
// snapshot alone, the least any exporter built on nvgo must do. One second
// of driver time (one accumulator tick, not counted) passes between
// scrapes. cpu-ms/scrape is this process's CPU time, every thread.
func BenchmarkScrape(b *testing.B) {
	s := newScrapeBench(b)
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(s.r, "hostname", false, 500))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	scrape := func() int { return scrapeOK(b, h, s.fleet.Count()) }
	floor := func() {
		if _, err := s.lib.Snapshot(context.Background(), nvgo.WithDevices(s.r.devices...), nvgo.WithFields(snapshotFields)); err != nil {
			b.Fatal(err)
		}
	}
	for range 3 {
		s.second(b)
		scrape()
		floor()
	}
	// measure counts op's CPU time and allocations alone, not the second
	// of driver time before it.
	measure := func(op func()) (cpu time.Duration, allocs uint64) {
		var use nvgotest.Usage
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s.second(b)
			u0 := nvgotest.ReadUsage()
			b.StartTimer()
			c0 := nvgotest.CPUTime(b)
			op()
			cpu += nvgotest.CPUTime(b) - c0
			b.StopTimer()
			use.AddSince(u0)
			b.StartTimer()
		}
		return cpu, use.Objects
	}
	var size int
	b.ResetTimer()
	cpu, allocs := measure(func() { size = scrape() })
	b.StopTimer()
	floorCPU, floorAllocs := measure(floor)
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/scrape")
	b.ReportMetric(float64(allocs)/n, "allocs/scrape")
	b.ReportMetric(float64(floorCPU.Microseconds())/1000/n, "floor-cpu-ms")
	b.ReportMetric(float64(floorAllocs)/n, "floor-allocs")
	nvgotest.ReportOverFloor(b, cpu, floorCPU)
	b.ReportMetric(float64(size), "bytes/scrape")
}

// upLine is in a scrape that read the driver (of the node "bench"), and
// infoLine starts each GPU's nvgo_gpu_info.
var upLine, infoLine = []byte("\nnvgo_up{hostname=\"bench\"} 1\n"), []byte("\nnvgo_gpu_info{")

// scrapeOK scrapes h once and returns the answer's size. A scrape that
// fails, did not read the driver, or lacks one of the fleet's gpus GPUs
// fails the benchmark, which would otherwise measure failures.
func scrapeOK(b *testing.B, h http.Handler, gpus int) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.Bytes()
	if rec.Code != http.StatusOK || !bytes.Contains(body, upLine) || bytes.Count(body, infoLine) != gpus {
		b.Fatalf("a failed scrape: status %d, nvgo_up 1 present %v, %d of %d GPUs:\n%.2000s",
			rec.Code, bytes.Contains(body, upLine), bytes.Count(body, infoLine), gpus, body)
	}
	return len(body)
}

// rss is this process's resident set size, in bytes.
func rss(b *testing.B) uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Fatal(err)
	}
	var size, resident uint64
	if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
		b.Fatal(err)
	}
	return resident * uint64(os.Getpagesize())
}

// BenchmarkScrapeMemory scrapes the Go fake (8 GPUs, simulated processes
// with host facts, one replaced by a new PID every 10 scrapes) with one
// driver second between scrapes: the heap and the RSS stay flat. Run it with
// -benchtime 100000x for the 100,000 scrapes.
func BenchmarkScrapeMemory(b *testing.B) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	lib, clock := nvgotest.Simulated(b, fleet)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := newReader(ctx, lib, "bench", time.Second)
	if err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(newCollector(r, "hostname", true, 500))
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	churn := nvgotest.Churn{Fleet: fleet}
	scrape := func(i int) {
		churn.Second(i)
		ch := r.acc.Updated()
		clock.Advance(time.Second)
		<-ch
		scrapeOK(b, h, fleet.Count())
	}
	for i := range 200 {
		scrape(i)
	}
	start, rss0 := nvgotest.LiveHeap(), rss(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		scrape(200 + i)
	}
	b.StopTimer()
	end, rss1 := nvgotest.LiveHeap(), rss(b)
	b.ReportMetric(float64(rss0)/1024, "rss-start-KiB")
	b.ReportMetric(float64(rss1)/1024, "rss-end-KiB")
	b.ReportMetric(float64(start)/1024, "heap-start-KiB")
	b.ReportMetric(float64(end)/1024, "heap-end-KiB")
	b.ReportMetric((float64(end)-float64(start))/float64(b.N), "heap-growth-B/scrape")
}
