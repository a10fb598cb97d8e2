//go:build cgo

// Package nvgotest tests programs built on nvgo without a GPU, as nvgo's
// own tools are tested: through the drop-in libnvidia-ml.so.1 (package
// fakegpu) serving a fake fleet to a program that believes it talks to the
// driver, as on a real machine (the "C door"), or in process over the Go
// fake.
//
// A test serves a fleet with Serve, then starts the program under test
// with Command: the test binary itself, run again as the program (the
// package's TestMain calls RunMainIfAsked), in a process whose
// LD_LIBRARY_PATH finds the library. Each program runs in a process of its
// own, since a process can load one libnvidia-ml.so.1 only.
//
// For benchmarks of the real path, InProcess loads the library into the
// test process and SleepingProcesses (or RealProcesses) puts real processes
// behind the GPU PIDs; CPUTime, ReadUsage and LiveHeap measure them, and
// Churn makes processes come and go as jobs do. Simulated is the
// in-process Go fake, for tests that need no C door.
//
// Like fakegpu, the package needs cgo.
package nvgotest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fakehost"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/internal/testenv"
)

// envRunMain asks a test binary to run as its program (RunMainIfAsked).
const envRunMain = "NVGO_CDOORTEST_RUN_MAIN"

// RunMainIfAsked runs main and exits with its status when the test binary
// was started by Command; call it first thing in TestMain.
func RunMainIfAsked(main func(args []string) int) {
	if os.Getenv(envRunMain) == "1" {
		os.Exit(main(os.Args[1:]))
	}
}

// Library returns the directory of the drop-in library built for driver
// ("current", "r470" or "r418"), building it once into a shared cache
// (fakegpu.CachedLibNVML); it skips the test where there is no C compiler
// (fails it when $NVGO_CI is set, as in nvgo's CI).
func Library(t testing.TB, driver string) string {
	t.Helper()
	if os.Getenv("CC") == "" {
		testenv.Program(t, "gcc") // builds the drop-in libnvidia-ml.so.1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir, err := fakegpu.CachedLibNVML(ctx, fakegpu.LibNVMLOptions{Driver: driver})
	if err != nil {
		t.Fatalf("building the drop-in libnvidia-ml.so.1 (%s): %v", driver, err)
	}
	return dir
}

// A Door is a fleet served to other processes through the drop-in library.
type Door struct {
	Fleet  *fakegpu.Fleet
	Mirror *fakegpu.Mirror
	// LibDir holds the library.
	LibDir string
	// Calls is the file the library writes its call counts to.
	Calls string
}

// Serve publishes fleet to the library built for driver until the test
// ends. Changes to the fleet reach clients at the next Mirror.Sync.
func Serve(t testing.TB, fleet *fakegpu.Fleet, driver string) *Door {
	t.Helper()
	lib := Library(t, driver)
	dir := t.TempDir()
	m, err := fakegpu.NewMirror(fleet, filepath.Join(dir, "fleet.state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &Door{Fleet: fleet, Mirror: m, LibDir: lib, Calls: filepath.Join(dir, "calls.json")}
}

// Env is the environment of a client of the door: this process's, with
// the library first on LD_LIBRARY_PATH and the fleet's state file.
func (d *Door) Env() []string {
	return append(os.Environ(),
		"LD_LIBRARY_PATH="+d.LibDir,
		fakegpu.EnvFleet+"="+d.Mirror.Path(),
		fakegpu.EnvCalls+"="+d.Calls,
	)
}

// Command returns the test binary run as its program with args (see
// RunMainIfAsked), as a client of the door.
func (d *Door) Command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := Program(t, args...)
	cmd.Env = append(d.Env(), envRunMain+"=1")
	return cmd
}

// Program returns the test binary run as its program with args (see
// RunMainIfAsked), in this process's environment: for a program that needs
// no door, such as one on a simulated fleet.
func Program(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envRunMain+"=1")
	return cmd
}

// CallCounts returns what the library counted in the last client that
// ended (or shut NVML down).
func (d *Door) CallCounts(t testing.TB) fakegpu.LibNVMLCalls {
	t.Helper()
	c, err := fakegpu.ReadLibNVMLCalls(d.Calls)
	if err != nil {
		t.Fatalf("the library's call counts: %v", err)
	}
	return c
}

// SleepingProcesses starts n `sleep` processes, killed when the test ends,
// and returns their PIDs: real processes to put behind a fake fleet's GPU
// PIDs, so that nvgo reads their /proc files as on a GPU machine.
func SleepingProcesses(t testing.TB, n int) []uint32 {
	t.Helper()
	pids := make([]uint32, n)
	for i := range pids {
		cmd := exec.Command("sleep", "3600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		pids[i] = uint32(cmd.Process.Pid)
	}
	return pids
}

// InProcess serves fleet through the drop-in library loaded in this
// process and opens a Library on it with opts, as nvgo.Open() opens the
// driver's: the real cgo path, for benchmarks. Changes to the fleet reach
// the library at the mirror's next Sync. A process can load one library
// only, so a test binary calls it for one fleet at a time.
func InProcess(t testing.TB, fleet *fakegpu.Fleet, opts ...nvgo.Option) (*nvgo.Library, *fakegpu.Mirror) {
	t.Helper()
	dir := Library(t, "current")
	m, err := fakegpu.NewMirror(fleet, filepath.Join(t.TempDir(), "fleet.state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	t.Setenv(fakegpu.EnvFleet, m.Path()) // read at the first nvmlInit
	opts = append([]nvgo.Option{nvgo.WithNVML(nvml.New(nvml.WithLibraryPath(filepath.Join(dir, fakegpu.LibNVMLFile))))}, opts...)
	lib, err := nvgo.Open(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	if err := lib.Available(); err != nil {
		t.Fatal(err)
	}
	return lib, m
}

// Usage is what a process allocated on the heap. ReadUsage stops the
// world (runtime.ReadMemStats, the one count that is exact at any moment:
// runtime/metrics counts small allocations a span at a time, so that work
// between a benchmark's operations is charged to them and theirs to it).
// Read it outside what you time; AddSince around what you measure alone.
type Usage struct {
	Objects uint64 // heap allocations, tiny ones included
	Bytes   uint64
}

// ReadUsage returns the process's totals now.
func ReadUsage() Usage {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return Usage{Objects: ms.Mallocs, Bytes: ms.TotalAlloc}
}

// AddSince adds to u what was allocated since the totals from.
func (u *Usage) AddSince(from Usage) {
	now := ReadUsage()
	u.Objects += now.Objects - from.Objects
	u.Bytes += now.Bytes - from.Bytes
}

// LiveHeap is the live heap after two garbage collections (the second
// empties the sync.Pools' victims): what a memory benchmark compares at its
// start and end.
func LiveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Churn replaces processes on a fleet as jobs come and go on a busy node:
// at every tenth second, the first process of one GPU (each GPU in turn)
// leaves and a new one, a simulated host process, starts in its place.
type Churn struct {
	Fleet *fakegpu.Fleet
	next  uint32
}

// Second moves the churn to second i.
func (c *Churn) Second(i int) {
	if i%10 != 9 {
		return
	}
	g := c.Fleet.GPU(i / 10 % c.Fleet.Count())
	if ps := g.Processes(); len(ps) > 0 {
		g.StopProcess(ps[0].PID)
	}
	if c.next == 0 {
		c.next = 4_300_000 // above PID_MAX_LIMIT: no real process has it
	}
	c.next++
	_ = g.StartProcess(fakegpu.Process{PID: c.next, UsedMemory: 1 << 30, SM: 50,
		Host: &fakegpu.Host{User: "dan", Command: []string{"python3", "job.py"}, CPU: 90, Memory: 2 << 30}})
}

// CPUTime is the CPU time this process has used, user and system, every
// thread.
func CPUTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ReportOverFloor reports cpu/floor as the benchmark's "x-floor" metric:
// how many times the CPU time of the floor, the least work any program must
// do for the same result, measured in the same run. A floor too small for
// getrusage's resolution reports no ratio (it would be meaningless) and
// says so in the benchmark's log.
func ReportOverFloor(b *testing.B, cpu, floor time.Duration) {
	b.Helper()
	if floor <= 0 {
		b.Logf("x-floor not reported: the floor's CPU time (%v) is below what getrusage resolves; raise -benchtime", floor)
		return
	}
	b.ReportMetric(float64(cpu)/float64(floor), "x-floor")
}

// Simulated opens a Library on fleet in process, the Go fake behind
// nvml.Interface with the fleet's simulated host processes (fakehost), on
// a stepped clock: the tests' and benchmarks' fleet when the C door is not
// what they measure. The Library closes when the test ends.
func Simulated(t testing.TB, fleet *fakegpu.Fleet, opts ...nvgo.Option) (*nvgo.Library, *fleetclock.Stepped) {
	t.Helper()
	clock := fleetclock.NewStepped(fleet)
	opts = append([]nvgo.Option{nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)), nvgo.WithClock(clock)}, opts...)
	lib, err := nvgo.Open(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	return lib, clock
}

// RealProcesses puts perGPU real processes (SleepingProcesses) on every GPU
// of fleet in place of the GPU's own: process j of GPU i is proc(i, j) with
// its PID set to a sleeping process's.
func RealProcesses(t testing.TB, fleet *fakegpu.Fleet, perGPU int, proc func(gpu, j int) fakegpu.Process) {
	t.Helper()
	pids := SleepingProcesses(t, fleet.Count()*perGPU)
	for i := 0; i < fleet.Count(); i++ {
		g := fleet.GPU(i)
		for _, p := range g.Processes() {
			g.StopProcess(p.PID)
		}
		for j := 0; j < perGPU; j++ {
			p := proc(i, j)
			p.PID = pids[i*perGPU+j]
			if err := g.StartProcess(p); err != nil {
				t.Fatal(err)
			}
		}
	}
}
