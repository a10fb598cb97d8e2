//go:build cgo

// End-to-end test through the C door: the daemon built with cgo and run
// with no --simulate, loading nvgo's drop-in libnvidia-ml.so.1 as it would
// load the driver's, read by Debian's real atop.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/internal/testenv"
	"github.com/nvgo/nvgo/nvgotest"
)

func TestMain(m *testing.M) {
	nvgotest.RunMainIfAsked(func(args []string) int { return run(args, os.Stdout, os.Stderr) })
	os.Exit(m.Run())
}

// TestThroughTheDriverLibraryRealAtopShowsTheFleet: an H100 at 37% GPU and
// 12% memory busy with accounting on, running a real child process (40%
// and 10% busy, 1 GiB), and an A100 that reports no utilization.
func TestThroughTheDriverLibraryRealAtopShowsTheFleet(t *testing.T) {
	atop := testenv.Program(t, "atop")
	waitForTheAtopPort(t)
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100", Accounting: true}, fakegpu.GPUSpec{Model: "a100"})
	fleet.GPU(0).SetUtilization(37, 12)
	fleet.GPU(1).Unsupported("utilization", "GetSamples")
	// The fleet's clock at the real time before the child starts, so that
	// its accounting record starts when the child did.
	fleet.Advance(time.Since(fleet.Now()))
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
	})
	pid := child.Process.Pid
	if err := fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(pid), Name: "sleep", UsedMemory: gib, SM: 40, Mem: 10}); err != nil {
		t.Fatal(err)
	}
	door := nvgotest.Serve(t, fleet, "current")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go door.Mirror.Run(ctx, 100*time.Millisecond) // samples fill as a driver's do

	daemon := door.Command(t, "-v")
	var log lockedBuffer
	daemon.Stderr = &log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		daemon.Process.Kill()
		daemon.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "serving atop"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not start; log:\n%s", log.String())
		}
	}
	// A few ticks, so that atop's first sample has counters: asked of the
	// daemon itself, on a connection of the test's own.
	waitForTicks(t, defaultListen, 3)

	actx, acancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer acancel()
	cmd := exec.CommandContext(actx, atop, "-k", "-P", "GPU,PRE", "1", "3")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("atop: %v; stderr:\n%s", err, stderr.String())
	}
	var gpus, pre []atopLine
	sample := 0
	for _, line := range strings.Split(stdout.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "SEP":
			sample++
		case f[0] == "GPU":
			gpus = append(gpus, atopLine{sample, f})
		case f[0] == "PRE" && len(f) > 6 && f[6] == strconv.Itoa(pid):
			pre = append(pre, atopLine{sample, f})
		}
	}
	if sample != 3 || len(gpus) != 6 || len(pre) != 3 {
		t.Fatalf("%d samples, %d GPU lines, %d PRE lines of pid %d; want 3, 6, 3. atop printed:\n%s\ndaemon log:\n%s",
			sample, len(gpus), len(pre), pid, grepLines(stdout.String(), "RESET", "SEP", "GPU", "PRE.* "+strconv.Itoa(pid)+" "), log.String())
	}
	for _, l := range gpus {
		idx := int(l.int(t, 6))
		g := fleet.GPU(idx)
		if l.f[7] != last12(g.BusID()) || l.f[8] != last12(strings.ReplaceAll(g.Name(), " ", "_")) {
			t.Errorf("GPU %d: bus ID %q, type %q", idx, l.f[7], l.f[8])
		}
		busy := []int64{l.int(t, 9), l.int(t, 10)}
		want := []int64{37, 12}
		if idx == 1 {
			want = []int64{-1, -1}
		}
		if busy[0] != want[0] || busy[1] != want[1] {
			t.Errorf("sample %d GPU %d: busy %v, want %v: %s", l.sample, idx, busy, want, strings.Join(l.f, " "))
		}
	}
	for _, l := range pre {
		if l.f[7] != "(sleep)" || l.f[9] != "A" {
			t.Errorf("sample %d: PRE %s; want (sleep) in state A", l.sample, strings.Join(l.f, " "))
		}
		for i, w := range []int64{40, 10, 1 << 20} { // gpubusy, membusy (accounting), memnow (KiB)
			if got := l.int(t, 12+i); got != w {
				t.Errorf("sample %d: PRE field %d = %d, want %d: %s", l.sample, 12+i, got, w, strings.Join(l.f, " "))
			}
		}
	}
}

// waitForTicks waits until the daemon at addr has sampled n times: its S
// reply counts the samples of each GPU.
func waitForTicks(t *testing.T, addr string, n int64) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := &client{t: t, c: c, r: bufio.NewReader(c)}
	cl.types()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		s := cl.stats()
		if len(s) > 0 && s[0].vals[4] >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not sample %d times within 20s: S reply %+v", n, s)
		}
	}
}

// TestThroughTheDriverLibraryNoUsableDriverExitsZero makes nvmlInit fail as
// drivers do: every "no usable driver" cause ends the daemon with status 0
// and one log line naming it, as upstream's does, so that systemd's
// Restart=on-failure does not restart it forever; another failure is 1.
func TestThroughTheDriverLibraryNoUsableDriverExitsZero(t *testing.T) {
	door := nvgotest.Serve(t, fakegpu.New(fakegpu.GPUSpec{Model: "h100"}), "current")
	tests := []struct {
		code   string // NVGO_FAKE_INIT_ERROR: a name or NVML's number
		status int
		cause  string // in the log line
	}{
		{code: "DRIVER_NOT_LOADED", status: 0, cause: "driver is not loaded"},
		{code: "LIBRARY_NOT_FOUND", status: 0, cause: "not found"},
		{code: "LIB_RM_VERSION_MISMATCH", status: 0, cause: "mismatch"},
		{code: "4", status: 0, cause: "insufficient permissions"}, // NO_PERMISSION, e.g. /dev/nvidia* unreadable
		{code: "UNKNOWN", status: 1, cause: "cannot start"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			cmd := door.Command(t, "--listen", "127.0.0.1:0")
			cmd.Env = append(cmd.Env, fakegpu.EnvInitError+"="+tt.code)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatal(err)
			}
			if got := cmd.ProcessState.ExitCode(); got != tt.status {
				t.Errorf("exit status %d, want %d; log:\n%s", got, tt.status, stderr.String())
			}
			log := stderr.String()
			if strings.Count(log, "\n") != 1 || !strings.Contains(strings.ToLower(log), tt.cause) || stdout.Len() > 0 {
				t.Errorf("log:\n%s\nstdout %q; want one line naming %q, and no stdout", log, stdout.String(), tt.cause)
			}
			if tt.status == 0 && !strings.Contains(log, "no usable NVIDIA driver") {
				t.Errorf("log:\n%s\nwant it to say there is no usable NVIDIA driver", log)
			}
		})
	}
}
