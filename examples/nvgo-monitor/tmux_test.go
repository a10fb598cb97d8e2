//go:build cgo && linux

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/internal/testenv"
	"github.com/nvgo/nvgo/nvgotest"
)

// These tests run the monitor in a real terminal: tmux (Debian's package),
// with keys sent and screens captured as a user would see them.

// runMainEnv makes the test binary run the monitor's main (see TestMain).
const runMainEnv = "NVGO_MONITOR_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// term is a tmux session running the monitor.
type term struct {
	t    *testing.T
	name string
	sock string
}

// startTerm runs the monitor with args in a w×h tmux window; env adds to
// its environment. The pane stays after the monitor exits, showing its
// exit status.
func startTerm(t *testing.T, w, h int, env []string, args ...string) *term {
	t.Helper()
	testenv.Program(t, "tmux") // CI installs Debian's

	tm := &term{t: t, name: "monitor", sock: filepath.Join(t.TempDir(), "tmux.sock")}
	quoted := []string{"env"}
	for _, e := range append(env, runMainEnv+"=1", "TERM=xterm-256color") {
		quoted = append(quoted, shellQuote(e))
	}
	quoted = append(quoted, shellQuote(os.Args[0]))
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	cmd := strings.Join(quoted, " ") + "; echo EXIT=$?; sleep 600"
	tm.tmux("new-session", "-d", "-s", tm.name, "-x", strconv.Itoa(w), "-y", strconv.Itoa(h), cmd)
	t.Cleanup(func() { exec.Command("tmux", "-S", tm.sock, "kill-server").Run() })
	return tm
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (tm *term) tmux(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// capture returns the visible screen.
func (tm *term) capture() string { return tm.tmux("capture-pane", "-p", "-t", tm.name) }

// waitFor waits until the screen shows every part, and returns it.
func (tm *term) waitFor(parts ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := tm.capture()
		missing := ""
		for _, p := range parts {
			if !strings.Contains(s, p) {
				missing = p
				break
			}
		}
		if missing == "" {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the screen never showed %q:\n%s", missing, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tm *term) keys(keys ...string) {
	tm.tmux(append([]string{"send-keys", "-t", tm.name}, keys...)...)
}

// monitorPIDs returns the supervising monitor's PID and its child's.
func (tm *term) monitorPIDs() (parent, child int) {
	tm.t.Helper()
	shell, err := strconv.Atoi(strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{pane_pid}")))
	if err != nil {
		tm.t.Fatal(err)
	}
	kids := func(pid int) []int {
		out, _ := exec.Command("ps", "-o", "pid=", "--ppid", strconv.Itoa(pid)).Output()
		var pids []int
		for _, f := range strings.Fields(string(out)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		return pids
	}
	for _, p := range kids(shell) {
		if c := kids(p); len(c) > 0 {
			return p, c[0]
		}
	}
	tm.t.Fatal("no supervised monitor under the pane's shell")
	return 0, 0
}

// The screens a user moves through, in a real terminal, and a live
// resize down to 80×24.
func TestInATerminalTheScreensAndKeysWork(t *testing.T) {
	tm := startTerm(t, 160, 50, nil, "--simulate", "dgx-h100")
	main := tm.waitFor("alice", "bob", "carol", "MEM:", "UTL:", "[ CPU:", "means over")
	if lines := strings.Split(strings.TrimRight(main, "\n"), "\n"); len(lines) < 40 {
		t.Errorf("the main screen fills %d lines of 50", len(lines))
	}
	tm.keys("t")
	tm.waitFor("Tree of the GPU processes", "[GPU 0] python3 train.py")
	tm.keys("h") // help from the tree goes back to the tree, the tree to the table
	tm.waitFor("Help", "I  T  K")
	tm.keys("q")
	tm.waitFor("Tree of the GPU processes")
	tm.keys("q")
	tm.waitFor("GPU     PID USER")
	tm.keys("Down", "Enter")
	tm.waitFor("Process 4194402 (python3, bob)", "SM utilization (mean over each interval)")
	tm.keys("q", "h")
	tm.waitFor("Help", "I  T  K")
	tm.keys("q", "o", "g")
	tm.waitFor("sorted by GPU-MEM", "GPU-MEM▲")
	tm.tmux("resize-window", "-t", tm.name, "-x", "80", "-y", "24")
	small := tm.waitFor("GPU  Name             Temp", "means over 1")
	for i, l := range strings.Split(small, "\n") {
		if w := displayWidth(l); w > 80 {
			t.Errorf("line %d is %d wide at 80 columns: %q", i, w, l)
		}
	}
	tm.keys("q")
	tm.waitFor("EXIT=0")
	if alt := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{alternate_on}")); alt != "0" {
		t.Errorf("after q the alternate screen is still on (%s)", alt)
	}
}

// Through the drop-in libnvidia-ml.so.1, as on a GPU machine: no
// --simulate.
func TestInATerminalThroughTheDriverLibrary(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	door := nvgotest.Serve(t, fleet, "current")
	env := door.Env()[len(os.Environ()):]
	tm := startTerm(t, 160, 50, env)
	tm.waitFor("A100-SXM4-80GB", "00000000:18:00.0", "4194401", "means over")
	tm.keys("q")
	tm.waitFor("EXIT=0")
}

// T sends SIGTERM, after y, to a real process whose PID is on a simulated
// GPU.
func TestInATerminalTSignalsARealProcess(t *testing.T) {
	child := exec.Command("sleep", "300")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill() })
	scenario := filepath.Join(t.TempDir(), "fleet.json")
	doc := fmt.Sprintf(`{"gpus": [{"model": "h100", "processes": [{"pid": %d, "used_memory_mib": 2048, "sm_util": 40}]}]}`, child.Process.Pid)
	if err := os.WriteFile(scenario, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tm := startTerm(t, 160, 40, nil, "--simulate", scenario)
	tm.waitFor(strconv.Itoa(child.Process.Pid), "sleep 300")
	tm.keys("T")
	tm.waitFor(fmt.Sprintf("Send SIGTERM to %d (sleep)? [y/N]", child.Process.Pid))
	tm.keys("y")
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("the child ended with %v; want SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the child did not get SIGTERM:\n%s", tm.capture())
	}
	tm.waitFor("SIGTERM sent to process " + strconv.Itoa(child.Process.Pid) + ".")
	tm.keys("q")
	tm.waitFor("EXIT=0")
}

// SIGTERM ends the monitor cleanly; a monitor that dies mid-screen (killed,
// as a panic in any goroutine would end it) leaves a usable terminal.
func TestTheTerminalIsRestored(t *testing.T) {
	t.Run("SIGTERM", func(t *testing.T) {
		tm := startTerm(t, 120, 40, nil, "--simulate", "dgx-h100")
		tm.waitFor("alice")
		parent, _ := tm.monitorPIDs()
		syscall.Kill(parent, syscall.SIGTERM)
		tm.waitFor("EXIT=0")
		if alt := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{alternate_on}")); alt != "0" {
			t.Errorf("after SIGTERM the alternate screen is on")
		}
	})
	// A hangup ends the monitor, parent and child, as it ends any program
	// on the terminal; should the terminal still be there, its settings
	// are undone.
	for _, to := range []string{"parent", "child"} {
		t.Run("SIGHUP to the "+to, func(t *testing.T) {
			tm := startTerm(t, 120, 40, nil, "--simulate", "dgx-h100")
			tm.waitFor("alice")
			parent, child := tm.monitorPIDs()
			target := map[string]int{"parent": parent, "child": child}[to]
			syscall.Kill(target, syscall.SIGHUP)
			s := tm.waitFor("EXIT=")
			if !strings.Contains(s, "nvgo-monitor: hung up (SIGHUP); the terminal was restored") || !strings.Contains(s, "EXIT=129") {
				t.Errorf("after SIGHUP to the %s: want it said hung up, and exit status 129:\n%s", to, s)
			}
			if alt := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{alternate_on}")); alt != "0" {
				t.Errorf("after SIGHUP the alternate screen is on:\n%s", s)
			}
			if mouse := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}")); mouse != "000" {
				t.Errorf("after SIGHUP the mouse is still captured (%s)", mouse)
			}
			for _, pid := range []int{parent, child} {
				if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("pid %d of the monitor is still there after SIGHUP (%v)", pid, err)
				}
			}
		})
	}
	t.Run("killed mid-screen", func(t *testing.T) {
		tm := startTerm(t, 120, 40, nil, "--simulate", "dgx-h100")
		tm.waitFor("alice")
		_, child := tm.monitorPIDs()
		syscall.Kill(child, syscall.SIGKILL)
		s := tm.waitFor("ended abnormally", "the terminal was restored", "EXIT=")
		if alt := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{alternate_on}")); alt != "0" {
			t.Errorf("after the crash the alternate screen is on:\n%s", s)
		}
		if mouse := strings.TrimSpace(tm.tmux("display-message", "-p", "-t", tm.name, "#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}")); mouse != "000" {
			t.Errorf("after the crash the mouse is still captured (%s)", mouse)
		}
	})
}

func TestWithoutADriverItSaysSoInOneLine(t *testing.T) {
	var stdout, stderr strings.Builder
	exitCode := runNoDriver(t, &stdout, &stderr)
	if exitCode != 1 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "no usable NVIDIA driver") {
		t.Errorf("without a driver: exit %d, stderr %q; want 1 and one line", exitCode, stderr.String())
	}
}

// runNoDriver runs the monitor in a child process with no driver library
// to load.
func runNoDriver(t *testing.T, stdout, stderr *strings.Builder) int {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "LD_LIBRARY_PATH="+t.TempDir())
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}
