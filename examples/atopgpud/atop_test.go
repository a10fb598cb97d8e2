//go:build cgo

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/internal/testenv"
	"github.com/nvgo/nvgo/nvgotest"
)

// lockedBuffer is a bytes.Buffer that the daemon's goroutines may write to
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRunExitsZeroWithoutAGPULikeAtopgpud(t *testing.T) {
	tests := []struct {
		name     string
		scenario string
		status   int
		log      string // a regular expression matching a part of the log
	}{
		{name: "no GPU: one line, exit 0", scenario: `{"gpus": []}`, status: 0, log: "no NVIDIA GPU found"},
		{name: "no driver: one line, exit 0", scenario: `{"init_error": "DRIVER_NOT_LOADED"}`, status: 0, log: "no usable NVIDIA driver"},
		{name: "no permission to use the driver: one line naming it, exit 0", scenario: `{"init_error": "NO_PERMISSION"}`, status: 0, log: `msg="no usable NVIDIA driver; nothing to serve" err=".*insufficient permissions"`},
		{name: "a bad scenario file: exit 1", scenario: `{"gpus": 5}`, status: 1, log: "cannot simulate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "fleet.json")
			if err := os.WriteFile(file, []byte(tt.scenario), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			got := run([]string{"--simulate", file, "--listen", "127.0.0.1:0"}, &stdout, &stderr)
			if got != tt.status || !regexp.MustCompile(tt.log).MatchString(stderr.String()) {
				t.Errorf("run = %d, log:\n%s\nwant %d and %q", got, stderr.String(), tt.status, tt.log)
			}
			if lines := strings.Count(stderr.String(), "\n"); lines != 1 {
				t.Errorf("%d log lines, want 1", lines)
			}
		})
	}
}

func TestHelpListsEverySimulatePreset(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := run([]string{"--help"}, &stdout, &stderr); got != 0 {
		t.Fatalf("run(--help) = %d", got)
	}
	// vgpu-h100 by name: it was once left out of a hand-written list.
	for _, name := range append(fakegpu.PresetNames(), "vgpu-h100") {
		t.Run(name, func(t *testing.T) {
			if !regexp.MustCompile(`[ :]` + regexp.QuoteMeta(name) + `[,\n]`).MatchString(stdout.String()) {
				t.Errorf("--help does not list the preset %s:\n%s", name, stdout.String())
			}
		})
	}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if len(line) > 78 && !strings.HasPrefix(line, "usage:") {
			t.Errorf("a usage line of %d characters, more than 78: %q", len(line), line)
		}
	}
}

func TestRunServesUntilSIGTERM(t *testing.T) {
	var stderr lockedBuffer
	status := make(chan int, 1)
	go func() {
		status <- run([]string{"--simulate", "dgx-h100", "--listen", "127.0.0.1:0", "--interval", "50ms", "-v"}, io.Discard, &stderr)
	}()
	addrRE := regexp.MustCompile(`msg="serving atop" addr=(\S+)`)
	var addr string
	for deadline := time.Now().Add(10 * time.Second); addr == ""; time.Sleep(10 * time.Millisecond) {
		if m := addrRE.FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not start; log:\n%s", stderr.String())
		}
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl := &client{t: t, c: c, r: bufio.NewReader(c)}
	if n := len(cl.types()); n != 8 {
		t.Errorf("T lists %d GPUs, want 8", n)
	}
	if n := len(cl.stats()); n != 8 {
		t.Errorf("S has %d GPU sections, want 8", n)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-status:
		if got != 0 {
			t.Errorf("run = %d after SIGTERM, want 0; log:\n%s", got, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return within 10s of SIGTERM")
	}
	if !strings.Contains(stderr.String(), "msg=stopped") {
		t.Errorf("no 'stopped' in the log:\n%s", stderr.String())
	}
}

// SIGINT, SIGTERM and SIGHUP each stop the daemon cleanly: exit status 0,
// "stopped" logged with the signal. (SIGHUP's default would kill it with
// status 129.) Each runs the daemon as a process of its own, which the
// signal goes to.
func TestASignalStopsTheDaemonCleanly(t *testing.T) {
	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGHUP": syscall.SIGHUP} {
		t.Run(name, func(t *testing.T) {
			cmd := nvgotest.Program(t, "--simulate", "dgx-h100", "--listen", "127.0.0.1:0", "-v")
			var log lockedBuffer
			cmd.Stderr = &log
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() { cmd.Process.Kill() })
			for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "serving atop"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the daemon did not start; log:\n%s", log.String())
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("after %v: %v; want exit status 0. log:\n%s", sig, err, log.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("the daemon did not stop within 10s of %v", sig)
			}
			if l := log.String(); !strings.Contains(l, "msg=stopped by=") || !strings.Contains(l, sig.String()) {
				t.Errorf("the log does not say it stopped, and by %v:\n%s", sig, l)
			}
		})
	}
}

// last12 is what atop keeps of a bus ID or type.
func last12(s string) string { return s[max(0, len(s)-12):] }

// atopLine is one GPU or PRE line of atop -P, split into fields, with the
// index of its sample (0 for the first).
type atopLine struct {
	sample int
	f      []string
}

func (l atopLine) int(t *testing.T, i int) int64 {
	t.Helper()
	v, err := strconv.ParseInt(l.f[i], 10, 64)
	if err != nil {
		t.Fatalf("field %d of %q: %v", i, strings.Join(l.f, " "), err)
	}
	return v
}

// TestRealAtopShowsTheSimulatedFleet runs the installed atop against the
// daemon on a fake fleet: one H100 at 37% GPU and 12% memory busy, with a
// real child process on it using 1 GiB (40% and 10% busy by accounting),
// and one A100 that reports no utilization.
func TestRealAtopShowsTheSimulatedFleet(t *testing.T) {
	atop := testenv.Program(t, "atop")
	waitForTheAtopPort(t)
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"})
	fleet.GPU(0).SetUtilization(37, 12)
	fleet.GPU(1).Unsupported("utilization", "GetSamples")

	child := exec.Command("sleep", "30")
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

	// atop connects to 127.0.0.1:59123 and nowhere else.
	r, err := startRig(t, fleet, defaultListen, fleetclock.RealTime(fleet), time.Second, nil)
	if errors.Is(err, syscall.EADDRINUSE) {
		testenv.Missing(t, "%s is busy: %v", defaultListen, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// Let the counters grow, so that atop's first sample (the counters
	// since the daemon started) differs from the later ones (differences).
	const ticksBefore = 3
	for r.d.acc.Counters().Ticks < ticksBefore {
		<-r.d.acc.Updated()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, atop, "-k", "-P", "GPU,PRE", "1", "3")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("atop: %v; stderr:\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("atop complained:\n%s", stderr.String())
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
		t.Fatalf("%d samples, %d GPU lines, %d PRE lines of pid %d; want 3, 6, 3. atop printed:\n%s",
			sample, len(gpus), len(pre), pid, grepLines(stdout.String(), "RESET", "SEP", "GPU", fmt.Sprintf("PRE.* %d ", pid)))
	}

	// GPU <host> <epoch> <date> <time> <interval> <idx> <busid> <type>
	//     <gpupercnow> <mempercnow> <memtot> <memused> <samplesΔ> <gpucumΔ> <memcumΔ> <memusedcumΔ>
	memTotal := [2]int64{int64(fleet.GPU(0).Spec().MemoryTotal / 1024), int64(fleet.GPU(1).Spec().MemoryTotal / 1024)}
	// Used memory counts the driver's reservation, as upstream serves it.
	memReserved := [2]int64{int64(fleet.GPU(0).Spec().MemoryReserved / 1024), int64(fleet.GPU(1).Spec().MemoryReserved / 1024)}
	for _, l := range gpus {
		idx := int(l.int(t, 6))
		g := fleet.GPU(idx)
		wantType := last12(strings.ReplaceAll(g.Name(), " ", "_"))
		if l.f[7] != last12(g.BusID()) || l.f[8] != wantType {
			t.Errorf("sample %d GPU %d: bus ID %q type %q, want %q %q", l.sample, idx, l.f[7], l.f[8], last12(g.BusID()), wantType)
		}
		n := l.int(t, 13)
		// The first sample shows the counters since the daemon started;
		// later ones their differences over 1 s: 0 to 2 ticks.
		if l.sample == 0 && n < ticksBefore || l.sample > 0 && n > 2 {
			t.Errorf("sample %d GPU %d: %d ticks", l.sample, idx, n)
		}
		used := [2]int64{1<<20 + memReserved[0], memReserved[1]}
		want := []int64{37, 12, memTotal[0], used[0], n, 37 * n, 12 * n, n * used[0]}
		if idx == 1 {
			want = []int64{-1, -1, memTotal[1], used[1], n, -1, -1, n * used[1]}
		}
		for i, w := range want {
			if got := l.int(t, 9+i); got != w {
				t.Errorf("sample %d GPU %d field %d = %d, want %d: %s", l.sample, idx, 9+i, got, w, strings.Join(l.f, " "))
			}
		}
	}

	// PRE <host> <epoch> <date> <time> <interval> <pid> (<name>) <state>
	//     <gpustate> <nrgpus> <gpulist> <gpubusy> <membusy> <memnow> <memcumΔ> <sampleΔ>
	for _, l := range pre {
		if l.f[7] != "(sleep)" || l.f[9] != "A" || l.f[10] != "1" || l.f[11] != "1" {
			t.Errorf("sample %d: PRE %s; want (sleep), state A on 1 GPU, gpulist 1", l.sample, strings.Join(l.f, " "))
		}
		n := l.int(t, 16)
		if l.sample == 0 && n < ticksBefore || l.sample > 0 && n > 2 {
			t.Errorf("sample %d: PRE %d samples", l.sample, n)
		}
		for i, w := range []int64{40, 10, 1 << 20, n << 20} {
			if got := l.int(t, 12+i); got != w {
				t.Errorf("sample %d: PRE field %d = %d, want %d: %s", l.sample, 12+i, got, w, strings.Join(l.f, " "))
			}
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("atop printed:\n%s", grepLines(stdout.String(), "RESET", "SEP", "GPU", fmt.Sprintf("PRE.* %d ", pid)))
	}
}

// grepLines returns the lines of s that match one of the patterns.
func grepLines(s string, patterns ...string) string {
	re := regexp.MustCompile("^(" + strings.Join(patterns, "|") + ")")
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// waitForTheAtopPort waits until nothing listens on 127.0.0.1:59123, the
// only address atop connects to: another test (or a page's example) may
// hold it for a while. A port that stays busy skips the test, or fails it
// in CI.
func waitForTheAtopPort(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := net.DialTimeout("tcp", defaultListen, time.Second)
		if err != nil {
			return
		}
		c.Close()
		if time.Now().After(deadline) {
			testenv.Missing(t, "%s stays busy: atop cannot be pointed elsewhere", defaultListen)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
