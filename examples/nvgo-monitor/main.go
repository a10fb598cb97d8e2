// Command nvgo-monitor is a live view of the NVIDIA GPUs and their processes in
// the terminal, as nvitop -m shows them, built only on nvgo's public API.
// Every utilization and GPU-memory figure is a mean over the refresh
// interval from the driver's sample buffers (nvgo's accumulator), not one
// instantaneous reading per refresh.
//
//	go run ./examples/nvgo-monitor --simulate dgx-h100
//
// Screens: the main one (devices with bars and history, the host, the
// process table), a tree of the GPU processes under their parents (t), a
// process's figures over time (Enter), its environment (e) and the keys
// (h). Signals (I, T, K) go only to your own processes (any, as root),
// after a confirmation, and never to a PID that now holds another process.
//
// Exit status: 0 ok, 1 no usable NVIDIA driver, a bad --simulate file or
// --help that cannot be written, 2 bad arguments, 3 CUDA's device list
// cannot be determined (--only-visible), 128+N ended by signal N, as a
// shell reports it (129: the terminal hung up; the screen's settings are
// undone first, should the terminal still be there).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	tea "charm.land/bubbletea/v2"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

func main() {
	if code, supervised := supervise(); supervised {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the monitor with args on a terminal (or, in tests, any reader
// and writer) and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	out := tool.NewOutput(stdout) // --help's: a failed write is an error
	if code, done := tool.ArgsDone(err, usageText(), out, stderr, "nvgo-monitor: %v (see nvgo-monitor --help)\n"); done {
		return out.Finish("nvgo-monitor", code, stderr)
	}
	lib, sel, err := tool.OpenDevices(o.simulate, true, o.only, o.onlyVisible)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-monitor: %v\n", err)
		return tool.ExitStatus(err)
	}
	defer lib.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := newSampler(ctx, lib, sel, o.interval, o.filter)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-monitor: %v\n", err)
		return 1
	}
	m := newModel(ctx, s, hostSignaller{lib}, o)
	started()
	defer finished()
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(stdin), tea.WithOutput(stdout))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrInterrupted) {
		fmt.Fprintf(stderr, "nvgo-monitor: %v\n", err)
		return 1
	}
	return 0
}

// hostSignaller signals host processes through the Library, after checking
// that the PID still holds the process the monitor showed.
type hostSignaller struct{ lib *nvgo.Library }

// Why a process was not signalled or its environment not shown, in words
// that end a sentence about it ("Could not send SIGTERM to process 42: …").
var (
	// errPIDReused: the PID now holds a process started at another time.
	errPIDReused = errors.New("its PID now holds another process")
	// errNoStartTime: without a start time a process cannot be told from
	// one that took its PID since.
	errNoStartTime = errors.New("its start time is unknown, so it cannot be told from a process that took its PID")
)

// host returns the process k names, or an error wrapping ErrProcessGone
// when the PID now holds another process (or none).
func (s hostSignaller) host(k procKey) (*nvgo.HostProcess, error) {
	if k.created.IsZero() {
		return nil, fmt.Errorf("pid %d: %w", k.pid, errNoStartTime)
	}
	hp, err := s.lib.HostProcess(k.pid)
	if err != nil {
		return nil, err
	}
	if ct, ok := hp.CreateTime().Get(); !ok || !ct.Equal(k.created) {
		return nil, fmt.Errorf("pid %d: %w: %w", k.pid, errPIDReused, nvgo.ErrProcessGone)
	}
	return hp, nil
}

func (s hostSignaller) signal(k procKey, sig syscall.Signal) error {
	hp, err := s.host(k)
	if err != nil {
		return err
	}
	// A simulated process (--simulate) is signalled in its simulation.
	return hp.Signal(sig)
}

func (s hostSignaller) environ(k procKey) ([]string, error) {
	hp, err := s.host(k)
	if err != nil {
		return nil, err
	}
	env := hp.Environ()
	if e, ok := env.Get(); ok {
		return e, nil
	}
	return nil, env.Err()
}

// reason says why err kept the monitor from signalling a process or
// showing its environment, as the end of a sentence about the process.
func reason(err error) string {
	for _, e := range []error{errPIDReused, errNoStartTime} {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	switch {
	case errors.Is(err, nvgo.ErrNoPermission):
		return "permission denied (it is another user's process)"
	case errors.Is(err, errors.ErrUnsupported):
		return "it is simulated and has none"
	case errors.Is(err, nvgo.ErrZombie):
		return "it has exited (a zombie, waiting for its parent)"
	case errors.Is(err, nvgo.ErrProcessGone):
		return "it has exited"
	}
	return err.Error()
}
