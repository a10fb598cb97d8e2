//go:build cgo

package libnvml_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/internal/libnvml"
	"github.com/nvgo/nvgo/internal/testenv"
)

// library returns the directory of the drop-in library built for driver,
// skipping the test where it cannot be built (no C compiler).
func library(t testing.TB, driver string) string {
	t.Helper()
	if os.Getenv("CC") == "" {
		testenv.Program(t, "gcc") // to build libnvidia-ml.so.1
	}
	d, err := libnvml.DriverNamed(driver)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir, err := libnvml.Cached(ctx, libnvml.BuildOptions{Driver: d})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// mirror publishes fleet in a state file for the test's duration.
func mirror(t testing.TB, fleet *fakegpu.Fleet) *fakegpu.Mirror {
	t.Helper()
	m, err := fakegpu.NewMirror(fleet, filepath.Join(t.TempDir(), "fleet.state"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// conformanceFleet is the fleet testdata/conformance.c expects.
func conformanceFleet(t *testing.T) *fakegpu.Fleet {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	g := fleet.GPU(0)
	for pid := uint32(101); pid <= 103; pid++ {
		if err := g.StartProcess(fakegpu.Process{PID: pid, UsedMemory: uint64(pid) << 20, SM: 10, Mem: 5}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []uint32{30, 60, 90} {
		g.SetUtilization(u, u/2)
		fleet.Advance(time.Second)
	}
	fleet.GPU(2).Lose()
	return fleet
}

func TestConformance(t *testing.T) {
	dir := library(t, "current")
	header, err := libnvml.GoNVMLHeaderDir()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "conformance")
	build := exec.Command("gcc", "-std=gnu11", "-Wno-deprecated-declarations", "-o", exe, "testdata/conformance.c",
		"-I", header, "-L", dir, "-lnvidia-ml", "-Wl,-rpath,"+dir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("compiling the conformance test: %v\n%s", err, out)
	}
	m := mirror(t, conformanceFleet(t))
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fakegpu.EnvFleet+"="+m.Path())
	out, err := cmd.CombinedOutput()
	checks := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "ok "):
			checks++
		case strings.HasPrefix(line, "not ok "):
			checks++
			t.Error(strings.TrimPrefix(line, "not ok "))
		default:
			t.Errorf("unexpected output: %s", line)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("conformance test failed without saying why: %v\n%s", err, out)
	}
	if checks < 60 {
		t.Errorf("only %d checks ran:\n%s", checks, out)
	}
}

// TestPythonCtypesClient runs a client written as pynvml is (ctypes, the
// library found by name) on a preset published by a Mirror, and compares
// what it read with the fleet's own values.
func TestPythonCtypesClient(t *testing.T) {
	python := testenv.Program(t, "python3")
	dir := library(t, "current")
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	m := mirror(t, fleet)
	cmd := exec.Command(python, "testdata/client.py")
	cmd.Env = append(os.Environ(), fakegpu.EnvFleet+"="+m.Path(), "LD_LIBRARY_PATH="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client: %v\n%s", err, stderr.Bytes())
	}
	type proc [2]uint64
	var got []struct {
		Name, UUID  string
		MemoryTotal uint64 `json:"memory_total"`
		MemoryUsed  uint64 `json:"memory_used"`
		GPUUtil     uint32 `json:"gpu_util"`
		MemUtil     uint32 `json:"mem_util"`
		Processes   []proc
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("client output: %v\n%s", err, out)
	}
	if len(got) != fleet.Count() {
		t.Fatalf("client saw %d GPUs, the fleet has %d", len(got), fleet.Count())
	}
	fleet.Init() // the fleet's Go door answers only after Init, as NVML does
	defer fleet.Shutdown()
	for i, g := range got {
		d := fleet.GPU(i).Device()
		name, _ := d.GetName()
		uuid, _ := d.GetUUID()
		mem, _ := d.GetMemoryInfo()
		util, _ := d.GetUtilizationRates()
		procs, _ := d.GetComputeRunningProcesses()
		var want []proc
		for _, p := range procs {
			want = append(want, proc{uint64(p.Pid), p.UsedGpuMemory})
		}
		if g.Name != name || g.UUID != uuid || g.MemoryTotal != mem.Total || g.MemoryUsed != mem.Used ||
			g.GPUUtil != util.Gpu || g.MemUtil != util.Memory || len(g.Processes) != len(want) {
			t.Errorf("GPU %d: client read %+v\nfleet: %s %s %+v %+v %v", i, g, name, uuid, mem, util, want)
			continue
		}
		for k := range want {
			if g.Processes[k] != want[k] {
				t.Errorf("GPU %d process %d: client read %v, fleet has %v", i, k, g.Processes[k], want[k])
			}
		}
	}
}

// goNVML loads the library into this process through go-nvml, as nvgo
// built with cgo does, serving fleet; the returned interface is
// initialised.
func goNVML(t *testing.T, fleet *fakegpu.Fleet) (nvml.Interface, *fakegpu.Mirror) {
	t.Helper()
	dir := library(t, "current")
	m := mirror(t, fleet)
	t.Setenv(fakegpu.EnvFleet, m.Path())
	lib := nvml.New(nvml.WithLibraryPath(filepath.Join(dir, libnvml.FileName)))
	if ret := lib.Init(); ret != nvml.SUCCESS {
		t.Fatalf("Init: %v", ret)
	}
	t.Cleanup(func() { lib.Shutdown() })
	return lib, m
}

// TestLiveFleet changes the fleet while a client holds the library: each
// change shows at the client's next call once the Mirror publishes it.
func TestLiveFleet(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"})
	lib, m := goNVML(t, fleet)
	dev, ret := lib.DeviceGetHandleByIndex(0)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	util := func() uint32 {
		t.Helper()
		u, ret := dev.GetUtilizationRates()
		if ret != nvml.SUCCESS {
			t.Fatalf("GetUtilizationRates: %v", ret)
		}
		return u.Gpu
	}
	pids := func() []uint32 {
		t.Helper()
		procs, ret := dev.GetComputeRunningProcesses()
		if ret != nvml.SUCCESS {
			t.Fatalf("GetComputeRunningProcesses: %v", ret)
		}
		var out []uint32
		for _, p := range procs {
			out = append(out, p.Pid)
		}
		return out
	}
	if u := util(); u != 0 {
		t.Fatalf("idle GPU at %d%%", u)
	}
	fleet.GPU(0).SetUtilization(73, 20)
	if u := util(); u != 0 {
		t.Errorf("a change showed before Sync: %d%%", u)
	}
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if u := util(); u != 73 {
		t.Errorf("after Sync the GPU is at %d%%, want 73%%", u)
	}
	if err := fleet.GPU(0).StartProcess(fakegpu.Process{PID: 4242, UsedMemory: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	m.Sync()
	if got := pids(); len(got) != 1 || got[0] != 4242 {
		t.Errorf("processes after a start: %v", got)
	}
	fleet.GPU(0).StopProcess(4242)
	m.Sync()
	if got := pids(); len(got) != 0 {
		t.Errorf("processes after the exit: %v", got)
	}
	fleet.GPU(0).Lose()
	m.Sync()
	if _, ret := dev.GetUtilizationRates(); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("a lost GPU answers %v", ret)
	}
	if _, ret := lib.DeviceGetHandleByIndex(0); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("a lost GPU's handle comes with %v", ret)
	}
	if name, ret := lib.DeviceGetHandleByIndex(1); ret != nvml.SUCCESS || name == nil {
		t.Errorf("the other GPU: %v", ret)
	}
}

// TestSyncWhileReading has a reader hammer the library while the fleet
// changes and is published: no torn read ever shows (memory used and free
// always add up to the total).
func TestSyncWhileReading(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	lib, m := goNVML(t, fleet)
	dev, _ := lib.DeviceGetHandleByIndex(0)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			mem, ret := dev.GetMemoryInfo_v2()
			if ret != nvml.SUCCESS || mem.Used+mem.Free+mem.Reserved != mem.Total {
				done <- &tornRead{mem: mem, ret: ret}
				return
			}
		}
	}()
	g := fleet.GPU(0)
	for i := 0; i < 300; i++ {
		g.SetMemoryUsed(uint64(i%50) << 30)
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type tornRead struct {
	mem nvml.Memory_v2
	ret nvml.Return
}

func (e *tornRead) Error() string { return fmt.Sprintf("torn read: %v %+v", e.ret, e.mem) }

// TestGeneratedTypesMatchHeader regenerates ztypes.go from state.h.
func TestGeneratedTypesMatchHeader(t *testing.T) {
	goTool := testenv.Program(t, "go") // runs cgo -godefs
	// cgo writes its _obj directory here: copy the inputs to a scratch
	// directory rather than write into the source tree.
	dir := t.TempDir()
	for _, f := range []string{"types_godefs.go", "state.h"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goTool, "tool", "cgo", "-godefs", "types_godefs.go")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cgo -godefs: %v", err)
	}
	gofmt := exec.Command("gofmt")
	gofmt.Stdin = bytes.NewReader(out)
	want, err := gofmt.Output()
	if err != nil {
		t.Fatalf("gofmt: %v", err)
	}
	got, err := os.ReadFile("ztypes.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("ztypes.go is out of date with state.h: run go generate ./fakegpu/internal/libnvml")
	}
}
