//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/nvgotest"
)

// The benchmarks here measure nvgo on its real path: built with cgo,
// loading a libnvidia-ml.so.1 through go-nvml's dlopen (nvgo's drop-in
// library, answering in about a microsecond) with real running processes
// behind the GPU PIDs, so every /proc read and every C call a real machine
// costs is paid. They load the library into the test process: run them
// after the tests (as go test does), which must not find a driver.

// clibFleet is a fake DGX H100 whose processes are real: the preset's
// three busy GPUs with one process each (perGPU 0), or perGPU processes on
// every GPU.
func clibFleet(b *testing.B, perGPU int) *fakegpu.Fleet {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		b.Fatal(err)
	}
	if perGPU == 0 {
		pids := nvgotest.SleepingProcesses(b, 3)
		for i := 0; i < 3; i++ {
			g := fleet.GPU(i)
			p := g.Processes()[0]
			g.StopProcess(p.PID)
			p.PID = pids[i]
			must(b, g.StartProcess(p))
		}
		return fleet
	}
	nvgotest.RealProcesses(b, fleet, perGPU, func(_, j int) fakegpu.Process {
		typ := "C"
		if j%8 == 7 {
			typ = "C+G"
		}
		return fakegpu.Process{Type: typ, UsedMemory: uint64(j+1) * 256 * miB, SM: uint32(5 * j % 100), Mem: uint32(j)}
	})
	for i := 0; i < fleet.Count(); i++ {
		fleet.GPU(i).SetNVLink(18, 1<<30, 1<<30)
	}
	return fleet
}

// BenchmarkSnapshotCLibrary is BenchmarkSnapshot on the real path: the
// drop-in library with real processes, the fleet's clock a second further
// at every snapshot (as for a monitor polling at 1 Hz: counters grow, the
// driver's sample buffers fill). It reports the C-level NVML calls one warm
// snapshot makes per GPU (what the driver sees, go-nvml's own size queries
// and buffer growth included) and the CPU time per snapshot (user + system,
// every goroutine of the process), both counted around the snapshots only.
//
// Beside each, in the same run, it measures the floor (floorSnapshot): the
// same readings made straight through go-nvml with no logic, plus one read
// of /proc/PID/stat per process (a kept descriptor). x-floor is nvgo's CPU
// per snapshot over the floor's.
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
				lib, m := nvgotest.InProcess(b, fleet)
				ctx := context.Background()
				opt := nvgo.WithFields(fc.fields)
				floor := newFloor(b, fc.fields == nvgo.FieldsAll)
				// The fleet's publishing makes garbage a real driver does
				// not: the collector runs only between snapshots, every
				// gcEvery ticks, about as often as in a monitor polling at
				// 1 Hz whose heap grows by a snapshot's allocations.
				defer debug.SetGCPercent(debug.SetGCPercent(-1))
				ticks := 0
				tick := func() {
					fleet.Advance(time.Second)
					if err := m.Sync(); err != nil {
						b.Fatal(err)
					}
					if ticks++; ticks%gcEvery == 0 {
						runtime.GC()
					}
				}
				// measure takes n snapshots with snap, the fleet a tick
				// further after each, and returns the C calls and CPU time
				// of the snapshots alone.
				measure := func(n int, snap func()) (calls uint64, cpu time.Duration) {
					c0 := libCalls(b)
					for i := 0; i < n; i++ {
						cpu0 := nvgotest.CPUTime(b)
						snap()
						cpu += nvgotest.CPUTime(b) - cpu0
						b.StopTimer()
						tick() // makes no call into the library
						b.StartTimer()
					}
					return libCalls(b) - c0, cpu
				}
				// allocations counts the heap allocations per snapshot in a
				// pass of its own (reading them stops the world).
				allocations := func(snap func()) float64 {
					const n = 32
					var ms runtime.MemStats
					var allocs uint64
					for i := 0; i < n; i++ {
						runtime.ReadMemStats(&ms)
						a0 := ms.Mallocs
						snap()
						runtime.ReadMemStats(&ms)
						allocs += ms.Mallocs - a0
						tick()
					}
					return float64(allocs) / n
				}
				nvgoSnap := func() {
					if _, err := lib.Snapshot(ctx, opt); err != nil {
						b.Fatal(err)
					}
				}
				for i := 0; i < 2; i++ { // warm: static values, caches, cursors
					nvgoSnap()
					floor.snapshot()
					tick()
				}
				b.StopTimer()
				floorCalls, floorCPU := measure(b.N, floor.snapshot)
				b.ResetTimer()
				calls, cpu := measure(b.N, nvgoSnap)
				b.StopTimer()
				allocs, floorAllocs := allocations(nvgoSnap), allocations(floor.snapshot)
				n := float64(b.N)
				gpus := float64(fleet.Count())
				b.ReportMetric(float64(calls)/n/gpus, "C-calls/gpu")
				b.ReportMetric(float64(floorCalls)/n/gpus, "floor-C-calls/gpu")
				b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/op")
				b.ReportMetric(float64(floorCPU.Microseconds())/1000/n, "floor-cpu-ms/op")
				nvgotest.ReportOverFloor(b, cpu, floorCPU)
				b.ReportMetric(allocs, "allocs/snapshot")
				b.ReportMetric(floorAllocs, "floor-allocs/snapshot")
			})
		}
	}
}

// gcEvery is how many snapshots BenchmarkSnapshotCLibrary takes between
// two garbage collections.
const gcEvery = 64

// floor makes the least any library must do for a snapshot: each NVML
// reading once, straight through go-nvml on handles looked up once, with
// no logic around the calls, and one pread of /proc/PID/stat per process
// on a GPU, on a descriptor opened the first time (stat holds the state,
// CPU times and RSS: one file, one system call).
type floor struct {
	b      *testing.B
	all    bool // FieldsAll; else FieldsStatus
	devs   []nvml.Device
	cursor []uint64 // per-process utilization, per GPU
	buf    []byte
	stat   map[uint32]int // kept /proc/PID/stat descriptors
}

func newFloor(b *testing.B, all bool) *floor {
	lib := nvml.New(nvml.WithLibraryPath(filepath.Join(mustCachedLib(b), fakegpu.LibNVMLFile)))
	if ret := lib.Init(); ret != nvml.SUCCESS {
		b.Fatal(ret)
	}
	b.Cleanup(func() { lib.Shutdown() })
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		b.Fatal(ret)
	}
	f := &floor{b: b, all: all, cursor: make([]uint64, n), buf: make([]byte, 4096), stat: map[uint32]int{}}
	b.Cleanup(func() {
		for _, fd := range f.stat {
			syscall.Close(fd)
		}
	})
	for i := 0; i < n; i++ {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			b.Fatal(ret)
		}
		f.devs = append(f.devs, d)
	}
	return f
}

// floorFields are the field values of one batched call: power (average,
// instant, current limit), energy, volatile uncorrected ECC, and with FieldsAll
// the NVLink and PCIe byte counters.
var floorFields = []nvml.FieldValue{
	{FieldId: nvml.FI_DEV_POWER_AVERAGE}, {FieldId: nvml.FI_DEV_POWER_INSTANT},
	{FieldId: nvml.FI_DEV_POWER_CURRENT_LIMIT}, {FieldId: nvml.FI_DEV_TOTAL_ENERGY_CONSUMPTION}, {FieldId: nvml.FI_DEV_ECC_DBE_VOL_TOTAL},
	{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: 0xFFFFFFFF},
	{FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, ScopeId: 0xFFFFFFFF},
	{FieldId: nvml.FI_DEV_PCIE_COUNT_TX_BYTES}, {FieldId: nvml.FI_DEV_PCIE_COUNT_RX_BYTES},
}

func (f *floor) snapshot() {
	fields := make([]nvml.FieldValue, len(floorFields))
	for i, d := range f.devs {
		d.GetMemoryInfo_v2()
		d.GetUtilizationRates()
		d.GetTemperature(nvml.TEMPERATURE_GPU)
		d.GetPerformanceState()
		d.GetDisplayActive()
		d.GetDisplayMode()
		d.GetPersistenceMode()
		d.GetComputeMode()
		d.GetMigMode()
		copy(fields, floorFields)
		if f.all {
			d.GetBAR1MemoryInfo()
			d.GetEncoderUtilization()
			d.GetDecoderUtilization()
			for _, c := range []nvml.ClockType{nvml.CLOCK_GRAPHICS, nvml.CLOCK_SM, nvml.CLOCK_MEM, nvml.CLOCK_VIDEO} {
				d.GetClockInfo(c)
			}
			d.GetFieldValues(fields)
		} else {
			d.GetFieldValues(fields[:5])
		}
		compute, _ := d.GetComputeRunningProcesses()
		graphics, _ := d.GetGraphicsRunningProcesses()
		if len(compute)+len(graphics) == 0 {
			continue
		}
		samples, _ := d.GetProcessUtilization(f.cursor[i])
		for _, s := range samples {
			f.cursor[i] = max(f.cursor[i], s.TimeStamp)
		}
		for _, p := range compute {
			f.readProc(p.Pid)
		}
		for _, p := range graphics {
			f.readProc(p.Pid)
		}
	}
}

// readProc reads /proc/PID/stat afresh: one pread on the descriptor kept
// for the process (opened at its first reading).
func (f *floor) readProc(pid uint32) {
	fd, ok := f.stat[pid]
	if !ok {
		var err error
		fd, err = syscall.Open("/proc/"+strconv.Itoa(int(pid))+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		f.stat[pid] = fd
	}
	syscall.Pread(fd, f.buf, 0)
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
	nvgotest.InProcess(b, fleet) // loads the library and serves the fleet
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

// BenchmarkSnapshotCLibraryDay is a monitor's day on the real path: one
// FieldsAll snapshot a second (the fleet's clock a second further each
// time) of 8 GPUs with 4 real processes each, one of which exits and is
// replaced by a new real process every 10 seconds, so PIDs come and go as
// on a busy machine. Run it with -benchtime 86400x for a day. It reports
// the live heap after a garbage collection, after a warm-up of 100
// snapshots and at the end, and the growth per snapshot in between:
// nothing nvgo keeps may grow with the processes that came and went.
// (The fleet shares the heap; its state is bounded too.)
func BenchmarkSnapshotCLibraryDay(b *testing.B) {
	const perGPU, churnEvery, warmUp = 4, 10, 100
	fleet := clibFleet(b, perGPU)
	lib, m := nvgotest.InProcess(b, fleet)
	ctx := context.Background()
	live := map[uint32]*exec.Cmd{} // the processes started here and running
	b.Cleanup(func() {
		for _, c := range live {
			c.Process.Kill()
			c.Wait()
		}
	})
	churned := 0
	churn := func(tick int) {
		g := fleet.GPU(tick / churnEvery % 8)
		old := g.Processes()[0]
		g.StopProcess(old.PID)
		if c := live[old.PID]; c != nil {
			c.Process.Kill()
			c.Wait()
			delete(live, old.PID)
		} else {
			syscall.Kill(int(old.PID), syscall.SIGKILL) // one of clibFleet's, reaped at its cleanup
		}
		cmd := exec.Command("sleep", "86400")
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		old.PID = uint32(cmd.Process.Pid)
		live[old.PID] = cmd
		must(b, g.StartProcess(old))
		churned++
	}
	second := func(tick int) {
		if tick%churnEvery == churnEvery-1 {
			churn(tick)
		}
		fleet.Advance(time.Second)
		if err := m.Sync(); err != nil {
			b.Fatal(err)
		}
		if _, err := lib.Snapshot(ctx, nvgo.WithFields(nvgo.FieldsAll)); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < warmUp; i++ {
		second(i)
	}
	start := nvgotest.LiveHeap()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		second(warmUp + i)
	}
	b.StopTimer()
	end := nvgotest.LiveHeap()
	b.ReportMetric(float64(start)/1024, "heap-start-KiB")
	b.ReportMetric(float64(end)/1024, "heap-end-KiB")
	b.ReportMetric((float64(end)-float64(start))/float64(b.N), "heap-growth-B/snapshot")
	b.ReportMetric(float64(churned), "processes-replaced")
}
