//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// The benchmarks here measure nvgo on its real path: built with cgo,
// loading a libnvidia-ml.so.1 through go-nvml's dlopen (nvgo's drop-in
// library, answering in about a microsecond) with real running processes
// behind the GPU PIDs, so every /proc read and every C call a real machine
// costs is paid. They load the library into the test process: run them
// after the tests (as go test does), which must not find a driver.

// realProcesses starts n processes that sleep until the benchmark ends and
// returns their PIDs.
func realProcesses(b *testing.B, n int) []uint32 {
	b.Helper()
	pids := make([]uint32, n)
	for i := range pids {
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		pids[i] = uint32(cmd.Process.Pid)
	}
	return pids
}

// clibFleet is a fake DGX H100 whose processes are real: the preset's
// three busy GPUs with one process each (perGPU 0), or perGPU processes on
// every GPU.
func clibFleet(b *testing.B, perGPU int) *fakegpu.Fleet {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	if perGPU == 0 {
		pids := realProcesses(b, 3)
		for i := 0; i < 3; i++ {
			g := fleet.GPU(i)
			p := g.Processes()[0]
			g.StopProcess(p.PID)
			p.PID = pids[i]
			must(b, g.StartProcess(p))
		}
		return fleet
	}
	idle(fleet)
	pids := realProcesses(b, 8*perGPU)
	for i := 0; i < 8; i++ {
		g := fleet.GPU(i)
		g.SetNVLink(18, 1<<30, 1<<30)
		for j := 0; j < perGPU; j++ {
			typ := "C"
			if j%8 == 7 {
				typ = "C+G"
			}
			must(b, g.StartProcess(fakegpu.Process{PID: pids[i*perGPU+j], Type: typ, UsedMemory: uint64(j+1) * 256 * miB, SM: uint32(5 * j % 100), Mem: uint32(j)}))
		}
	}
	return fleet
}

// openCLib serves fleet through the drop-in library loaded in this
// process and opens a Library on it, as nvgo.Open() opens the driver's.
func openCLib(b *testing.B, fleet *fakegpu.Fleet) (*nvgo.Library, *fakegpu.Mirror) {
	b.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		b.Skip("no C compiler to build the drop-in libnvidia-ml.so.1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := fakegpu.CachedLibNVML(ctx, fakegpu.LibNVMLOptions{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := fakegpu.NewMirror(fleet, filepath.Join(b.TempDir(), "fleet.state"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	b.Setenv(fakegpu.EnvFleet, m.Path()) // read at the first nvmlInit
	lib, err := nvgo.Open(nvgo.WithNVML(nvml.New(nvml.WithLibraryPath(filepath.Join(dir, fakegpu.LibNVMLFile)))))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { lib.Close() })
	if err := lib.Available(); err != nil {
		b.Fatal(err)
	}
	return lib, m
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSnapshotCLibrary is BenchmarkSnapshot on the real path: the
// drop-in library with real processes, the fleet's clock a second further
// at every snapshot (as for a monitor polling at 1 Hz: counters grow, the
// driver's sample buffers fill). It reports the C-level NVML calls one warm
// snapshot makes per GPU (what the driver sees, go-nvml's own size queries
// and buffer growth included) and the CPU time per snapshot (user + system,
// every goroutine of the process), both counted around the snapshots only.
func BenchmarkSnapshotCLibrary(b *testing.B) {
	for _, procs := range []int{0, 16} {
		for _, fc := range []struct {
			name   string
			fields nvgo.Fields
		}{
			{"all-fields", nvgo.FieldsAll},
			{"status-fields", nvgo.FieldsStatus},
		} {
			name := fmt.Sprintf("%s/%dx%d-procs", fc.name, 8, procs)
			if procs == 0 {
				name = fc.name + "/3-procs"
			}
			b.Run(name, func(b *testing.B) {
				fleet := clibFleet(b, procs)
				lib, m := openCLib(b, fleet)
				ctx := context.Background()
				opt := nvgo.WithFields(fc.fields)
				snap := func() {
					if _, err := lib.Snapshot(ctx, opt); err != nil {
						b.Fatal(err)
					}
				}
				tick := func() {
					fleet.Advance(time.Second)
					if err := m.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < 2; i++ { // warm: static values, caches, cursors
					snap()
					tick()
				}
				var calls uint64
				var cpu time.Duration
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					c0, cpu0 := libCalls(b), cpuTime(b)
					snap()
					cpu += cpuTime(b) - cpu0
					calls += libCalls(b) - c0
					b.StopTimer()
					tick()
					b.StartTimer()
				}
				b.StopTimer()
				b.ReportMetric(float64(calls)/float64(b.N)/8, "C-calls/gpu")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			})
		}
	}
}

// libCalls is the total of the loaded library's call counts.
func libCalls(b *testing.B) uint64 {
	c, err := fakegpu.LoadedLibNVMLCalls()
	if err != nil {
		b.Fatal(err)
	}
	return c.Total
}

// BenchmarkCLibraryCall is the cost of one call into the drop-in library
// through go-nvml (cgo included): the instrument's own resolution.
func BenchmarkCLibraryCall(b *testing.B) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	openCLib(b, fleet) // loads the library and serves the fleet
	lib := nvml.New(nvml.WithLibraryPath(filepath.Join(mustCachedLib(b), fakegpu.LibNVMLFile)))
	if ret := lib.Init(); ret != nvml.SUCCESS {
		b.Fatal(ret)
	}
	defer lib.Shutdown()
	dev, ret := lib.DeviceGetHandleByIndex(0)
	if ret != nvml.SUCCESS {
		b.Fatal(ret)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ret := dev.GetMemoryInfo_v2(); ret != nvml.SUCCESS {
			b.Fatal(ret)
		}
	}
}

func mustCachedLib(b *testing.B) string {
	dir, err := fakegpu.CachedLibNVML(context.Background(), fakegpu.LibNVMLOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return dir
}
