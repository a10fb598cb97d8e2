//go:build cgo

package nvgo_test

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

const miB = 1 << 20

// startSleep starts a real child process; gopsutil reads the real /proc.
func startSleep(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func processes(t *testing.T, lib *nvgo.Library, gpu int) []nvgo.GpuProcessSnapshot {
	t.Helper()
	d, err := lib.DeviceByIndex(gpu)
	if err != nil {
		t.Fatal(err)
	}
	s := d.Snapshot(nvgo.FieldMemory | nvgo.FieldProcesses)
	if s.ProcessesErr != nil {
		t.Fatal(s.ProcessesErr)
	}
	return s.Processes
}

func TestProcessTypesAndCGMemory(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	g := fleet.GPU(0)
	must(t, g.StartProcess(fakegpu.Process{PID: 4310001, Type: "C", UsedMemory: 512 * miB}))
	must(t, g.StartProcess(fakegpu.Process{PID: 4310002, Type: "G", UsedMemory: 8 * miB}))
	must(t, g.StartProcess(fakegpu.Process{PID: 4310003, Type: "C+G", UsedMemory: 1024 * miB}))
	must(t, g.StartProcess(fakegpu.Process{PID: 4310004, Type: "C", UsedMemory: fakegpu.NotAvailable}))

	got := map[int]nvgo.GpuProcessSnapshot{}
	for _, p := range processes(t, lib, 0) {
		got[p.PID] = p
	}
	tests := []struct {
		pid      int
		typ      string
		mem      string
		memNA    bool
		sameProc bool
	}{
		{pid: 4310001, typ: "C", mem: "512.0MiB"},
		{pid: 4310002, typ: "G", mem: "8.00MiB"},
		{pid: 4310003, typ: "C+G", mem: "1024MiB"}, // the compute entry's memory, not the graphics one
		{pid: 4310004, typ: "C", memNA: true},      // all-ones from the driver is N/A, not 16 EiB
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			p, ok := got[tt.pid]
			if !ok {
				t.Fatalf("pid %d missing from %v", tt.pid, got)
			}
			if p.Type.String() != tt.typ {
				t.Errorf("type = %v, want %v", p.Type, tt.typ)
			}
			if tt.memNA {
				if !p.GPUMemory.IsNA() {
					t.Errorf("memory = %v, want N/A", p.GPUMemory)
				}
				return
			}
			if p.GPUMemory.String() != tt.mem {
				t.Errorf("memory = %v, want %v", p.GPUMemory, tt.mem)
			}
			if p.GPUMemoryPercent.IsNA() {
				t.Error("memory percent is N/A")
			}
		})
	}
	// Type is recomputed on every refresh: the process leaves the graphics list.
	g.StopProcess(4310003)
	must(t, g.StartProcess(fakegpu.Process{PID: 4310003, Type: "C", UsedMemory: 1024 * miB}))
	for _, p := range processes(t, lib, 0) {
		if p.PID == 4310003 && p.Type != nvgo.ProcessCompute {
			t.Errorf("type after leaving graphics = %v, want C", p.Type)
		}
	}
}

func TestProcessHostInfoFromARealChild(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	cmd := startSleep(t)
	pid := uint32(cmd.Process.Pid)
	must(t, fleet.GPU(1).StartProcess(fakegpu.Process{PID: pid, Type: "C", UsedMemory: 100 * miB}))

	d, _ := lib.DeviceByIndex(1)
	first, err := d.Processes(context.Background())
	if err != nil || len(first) != 1 {
		t.Fatalf("processes = %v, %v", first, err)
	}
	s := first[0].Snapshot()
	if s.Name.Or("") != "sleep" || s.Command.Or("") != "sleep 300" || !s.IsRunning {
		t.Errorf("host info: name %v command %v running %v", s.Name, s.Command, s.IsRunning)
	}
	if s.Username.IsNA() || s.HostMemory.IsNA() || s.CreateTime.IsNA() {
		t.Errorf("host info N/A: user %v rss %v created %v", s.Username, s.HostMemory, s.CreateTime)
	}
	again, _ := d.Processes(context.Background())
	if len(again) != 1 || again[0] != first[0] {
		t.Error("the same live process did not keep its GpuProcess object")
	}

	// The process exits while the driver still lists it: host fields become
	// N/A with reason ProcessGone; nothing panics, nothing is made up.
	cmd.Process.Kill()
	cmd.Wait()
	gone := processes(t, lib, 1)
	if len(gone) != 1 {
		t.Fatalf("%d processes, want the stale entry", len(gone))
	}
	if gone[0].Name.Reason() != nvgo.ProcessGone || gone[0].IsRunning {
		t.Errorf("after exit: name %v (%v) running %v, want N/A process gone", gone[0].Name, gone[0].Name.Reason(), gone[0].IsRunning)
	}
	if gone[0].GPUMemory.String() != "100.0MiB" {
		t.Errorf("GPU memory of the stale entry = %v", gone[0].GPUMemory)
	}
	if err := first[0].Kill(); err == nil {
		t.Error("Kill of an exited process succeeded")
	}
}

func TestZombieProcess(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(cmd.Process.Pid), UsedMemory: miB}))
	cmd.Process.Signal(syscall.SIGKILL) // not reaped yet: a zombie
	deadline := time.Now().Add(5 * time.Second)
	for {
		p := processes(t, lib, 0)[0]
		if p.Status.Or("") == "zombie" {
			if !p.Cmdline.IsNA() {
				t.Errorf("zombie cmdline = %v, want N/A", p.Cmdline)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status = %v, never zombie", p.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProcessUtilizationCursor(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	g := fleet.GPU(0)
	must(t, g.StartProcess(fakegpu.Process{PID: 4320001, UsedMemory: miB, SM: 30, Mem: 5}))
	must(t, g.StartProcess(fakegpu.Process{PID: 4320002, UsedMemory: miB}))
	util := func() map[int]string {
		m := map[int]string{}
		for _, p := range processes(t, lib, 0) {
			m[p.PID] = p.GPUSMUtilization.String() + "/" + p.GPUMemoryUtilization.String()
		}
		return m
	}
	steps := []struct {
		name   string
		before func()
		want   map[int]string
	}{
		{"first read takes the driver's buffer", func() {}, map[int]string{4320001: "30%/5%", 4320002: "0%/0%"}},
		{"no newer sample (NOT_FOUND) keeps the last values", func() {}, map[int]string{4320001: "30%/5%", 4320002: "0%/0%"}},
		{"a new sample is picked up", func() {
			fleet.Advance(100 * time.Millisecond)
			g.SetProcessUtilization(4320002, 70, 20, 0, 0)
		}, map[int]string{4320001: "30%/5%", 4320002: "70%/20%"}},
		{"a process whose newest sample is over a second older than the device's is idle", func() {
			g.SetProcessUtilization(4320001, 0, 0, 0, 0)
			fleet.Advance(1500 * time.Millisecond)
			g.SetProcessUtilization(4320002, 50, 10, 0, 0)
		}, map[int]string{4320001: "0%/0%", 4320002: "50%/10%"}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.before()
			got := util()
			for pid, want := range st.want {
				if got[pid] != want {
					t.Errorf("pid %d: %s, want %s", pid, got[pid], want)
				}
			}
		})
	}
	if n := fleet.CallCount("Device.GetProcessUtilization"); n != len(steps) {
		t.Errorf("GetProcessUtilization called %d times for %d reads", n, len(steps))
	}
}

func TestProcessUtilizationUnsupportedIsNA(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	g := fleet.GPU(0)
	g.Unsupported("process_utilization")
	must(t, g.StartProcess(fakegpu.Process{PID: 4330001, UsedMemory: miB, SM: 30}))
	p := processes(t, lib, 0)[0]
	if !p.GPUSMUtilization.IsNA() || p.GPUSMUtilization.Reason() != nvgo.NotSupported {
		t.Errorf("SM utilization = %v (%v), want N/A not supported, never 0%%", p.GPUSMUtilization, p.GPUSMUtilization.Reason())
	}
}

func TestConcurrentSnapshots(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { // the fleet changes while readers read
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			g := fleet.GPU(i % 8)
			g.SetUtilization(uint32(i%100), uint32(i%50))
			pid := uint32(400000 + i%20)
			g.StopProcess(pid)
			_ = g.StartProcess(fakegpu.Process{PID: pid, UsedMemory: miB, SM: uint32(i % 100)})
			fleet.Advance(10 * time.Millisecond)
		}
	}()
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func() {
			for i := 0; i < 20; i++ {
				s, err := lib.Snapshot(ctx)
				if err != nil {
					errs <- err
					return
				}
				d, _ := lib.DeviceByIndex(i % 8)
				_ = d.GPUUtilization()
				if len(s.Devices) != 8 {
					t.Errorf("%d devices", len(s.Devices))
				}
			}
			errs <- nil
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	cancel()
	<-done
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The Library's clock (WithClock) stamps snapshots and decides when a
// process's newest utilization sample is too old to count: with no new
// sample on the device for more than two seconds of that clock, every
// process is idle.
func TestLibraryClockAgesProcessSamples(t *testing.T) {
	fleet := twoH100()
	cmd := startSleep(t)
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(cmd.Process.Pid), SM: 40, UsedMemory: 64 * miB}))
	fleet.Advance(time.Second) // the driver takes a sample
	clock := newStepClock()
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	d, err := lib.DeviceByIndex(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at     time.Duration // on the Library's clock
		wantSM nvgo.Percent
	}{
		{0, 40},
		{2 * time.Second, 40},        // no new sample, but not stale yet
		{2500 * time.Millisecond, 0}, // stale: idle
	} {
		clock.Set(tt.at)
		s := d.Snapshot(nvgo.FieldProcesses)
		if !s.Timestamp.Equal(clockStart.Add(tt.at)) {
			t.Errorf("at %v: snapshot stamped %v; want the Library's clock", tt.at, s.Timestamp)
		}
		if len(s.Processes) != 1 || s.Processes[0].GPUSMUtilization.Or(-1) != tt.wantSM {
			t.Errorf("at %v: processes %+v; want one at %v%% SM", tt.at, s.Processes, tt.wantSM)
		}
	}
}
