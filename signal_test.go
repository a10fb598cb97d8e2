//go:build cgo && linux

package nvgo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fakehost"
)

// signalTarget is a real child process (sleep 60) whose end the test
// observes: exited is closed once it is reaped, and state is then its
// ProcessState.
type signalTarget struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// startSignalTarget starts sleep 60 and reaps it in the background; the
// child is killed at the end of the test if still alive.
func startSignalTarget(t *testing.T) *signalTarget {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &signalTarget{cmd: cmd, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.exited
	})
	return c
}

func (c *signalTarget) pid() int { return c.cmd.Process.Pid }

// ignores reports whether the child ignores sig (inherited from a parent
// that ran the tests with it ignored, as nohup or a shell's background
// job does): then the signal cannot kill it.
func (c *signalTarget) ignores(t *testing.T, sig syscall.Signal) bool {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.pid()))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if hex, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(hex), 16, 64)
			if err != nil {
				t.Fatalf("SigIgn %q: %v", hex, err)
			}
			return mask&(1<<(uint(sig)-1)) != 0
		}
	}
	t.Fatal("no SigIgn line in /proc/PID/status")
	return false
}

// killedBy waits up to 5s for the child to end and returns the signal that
// ended it, or fails the test.
func (c *signalTarget) killedBy(t *testing.T) syscall.Signal {
	t.Helper()
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the child is still running 5s after the signal")
	}
	ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		t.Fatalf("the child ended with %v, not by a signal", c.cmd.ProcessState)
	}
	return ws.Signal()
}

// stillRunning fails the test if the child ended within a short while.
func (c *signalTarget) stillRunning(t *testing.T) {
	t.Helper()
	select {
	case <-c.exited:
		t.Fatalf("the child was signalled: %v", c.cmd.ProcessState)
	case <-time.After(100 * time.Millisecond): // time for a wrongly sent signal to land
	}
}

// gpuProcessOf returns the GpuProcess the library lists for pid on GPU gpu.
func gpuProcessOf(t *testing.T, lib *nvgo.Library, gpu, pid int) *nvgo.GpuProcess {
	t.Helper()
	d, err := lib.DeviceByIndex(gpu)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := d.Processes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.PID() == pid {
			return p
		}
	}
	t.Fatalf("pid %d is not among GPU %d's processes %v", pid, gpu, ps)
	return nil
}

// onGPU puts a real child on GPU 0 of an idle fake DGX H100 and returns its
// GpuProcess.
func onGPU(t *testing.T, c *signalTarget) *nvgo.GpuProcess {
	t.Helper()
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(c.pid()), Type: "C", UsedMemory: 64 * miB}))
	p := gpuProcessOf(t, lib, 0, c.pid())
	if r := p.Host().Name().Reason(); r == nvgo.OtherPIDNamespace {
		t.Skipf("the child is not visible as a host process here: %v", r)
	}
	return p
}

// Each way to signal a GpuProcess delivers its signal to the host process
// behind it: Signal the one given, Terminate SIGTERM, Interrupt SIGINT,
// Kill SIGKILL.
func TestGpuProcessSignalsReachTheHostProcess(t *testing.T) {
	tests := []struct {
		name string
		send func(p *nvgo.GpuProcess) error
		want syscall.Signal
	}{
		{"Signal(SIGUSR1)", func(p *nvgo.GpuProcess) error { return p.Signal(syscall.SIGUSR1) }, syscall.SIGUSR1},
		{"Signal(SIGHUP)", func(p *nvgo.GpuProcess) error { return p.Signal(syscall.SIGHUP) }, syscall.SIGHUP},
		{"Terminate", (*nvgo.GpuProcess).Terminate, syscall.SIGTERM},
		{"Interrupt", (*nvgo.GpuProcess).Interrupt, syscall.SIGINT},
		{"Kill", (*nvgo.GpuProcess).Kill, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := startSignalTarget(t)
			if c.ignores(t, tt.want) {
				t.Skipf("the child inherited %v ignored, so it cannot die of it", tt.want)
			}
			p := onGPU(t, c)
			if err := tt.send(p); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if got := c.killedBy(t); got != tt.want {
				t.Errorf("%s: the child died of %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

// A process that exited while the driver still lists it cannot be
// signalled: every way reports ErrProcessGone (reason ProcessGone), and no
// signal is sent.
func TestGpuProcessSignalsToAnExitedProcessAreProcessGone(t *testing.T) {
	c := startSignalTarget(t)
	p := onGPU(t, c)
	_ = c.cmd.Process.Kill()
	<-c.exited

	for _, tt := range []struct {
		name string
		send func() error
	}{
		{"Signal(SIGUSR1)", func() error { return p.Signal(syscall.SIGUSR1) }},
		{"Terminate", p.Terminate},
		{"Interrupt", p.Interrupt},
		{"Kill", p.Kill},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.send()
			if !errors.Is(err, nvgo.ErrProcessGone) || nvgo.ReasonOf(err) != nvgo.ProcessGone {
				t.Errorf("%s of an exited process: error %v (reason %v), want ErrProcessGone", tt.name, err, nvgo.ReasonOf(err))
			}
		})
	}
}

// A GpuProcess whose PID now holds another process (same PID, another
// start time) refuses every signal with ErrProcessGone, so the signal
// never reaches the process that took the PID over. The reuse is
// simulated with the fleet's host source: the GPU's process is stopped and
// a new one started under the same PID, a real child's, with another start
// time; if a signal were sent it would reach that child.
func TestGpuProcessSignalsToAReusedPIDAreProcessGone(t *testing.T) {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		t.Fatal(err)
	}
	if up, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64); err != nil || up < 120 {
		t.Skipf("host up for %s s: the simulated start times could be clamped to the same", strings.Fields(string(b))[0])
	}
	for _, tt := range []struct {
		name string
		send func(p *nvgo.GpuProcess) error
	}{
		{"Signal(SIGUSR1)", func(p *nvgo.GpuProcess) error { return p.Signal(syscall.SIGUSR1) }},
		{"Terminate", (*nvgo.GpuProcess).Terminate},
		{"Interrupt", (*nvgo.GpuProcess).Interrupt},
		{"Kill", (*nvgo.GpuProcess).Kill},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := startSignalTarget(t)
			fleet, err := fakegpu.Preset("dgx-h100")
			must(t, err)
			idle(fleet)
			lib := openOn(t, fleet, nvgo.WithHostSource(fakehost.New(fleet)))
			pid := uint32(c.pid())
			g := fleet.GPU(0)
			must(t, g.StartProcess(fakegpu.Process{PID: pid, Type: "C", Host: &fakegpu.Host{User: "alice", Age: 10 * time.Second}}))
			old := gpuProcessOf(t, lib, 0, c.pid())
			if u := old.Host().Username(); u.Or("") != "alice" {
				t.Fatalf("the simulated process's user = %v (%v), want alice: the fleet's host source is not in use", u, u.Reason())
			}
			g.StopProcess(pid)
			must(t, g.StartProcess(fakegpu.Process{PID: pid, Type: "C", Host: &fakegpu.Host{User: "bob", Age: 20 * time.Second}}))

			err = tt.send(old)
			if !errors.Is(err, nvgo.ErrProcessGone) {
				t.Errorf("%s to a reused PID: error %v, want ErrProcessGone", tt.name, err)
			}
			c.stillRunning(t)
		})
	}
}

// A process that exists only in a simulated host (fakehost) is signalled in
// the simulation, never as the real process that holds its PID on the
// machine running it: a signal that ends a process ends the simulated one,
// one ignored by default changes nothing, and the real child lives on.
func TestSignalToASimulatedProcessStaysInTheSimulation(t *testing.T) {
	c := startSignalTarget(t)
	fleet, err := fakegpu.Preset("dgx-h100")
	must(t, err)
	idle(fleet)
	lib := openOn(t, fleet, nvgo.WithHostSource(fakehost.New(fleet)))
	pid := uint32(c.pid())
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: pid, Type: "C", Host: &fakegpu.Host{User: "alice"}}))
	p := gpuProcessOf(t, lib, 0, c.pid())
	if u := p.Host().Username().Or(""); u != "alice" {
		t.Fatalf("user %q, want the simulated alice", u)
	}
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatalf("Signal(SIGCONT): %v", err)
	}
	if _, ok := fleet.HostProcess(pid); !ok {
		t.Fatal("SIGCONT ended the simulated process")
	}
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatalf("Signal(SIGUSR1): %v", err)
	}
	c.stillRunning(t)
	if _, ok := fleet.HostProcess(pid); ok {
		t.Error("SIGUSR1 (whose default action ends a process) left the simulated process running")
	}
}
