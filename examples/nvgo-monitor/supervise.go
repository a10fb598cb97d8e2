package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A panic in a goroutine that Bubble Tea does not run (or any fatal error)
// ends a Go program without a deferred call, which would leave the
// terminal in raw mode on the alternate screen with the mouse captured. So
// on a terminal the monitor runs as a child of itself: the parent saves the
// terminal's settings and, if the child ends between drawing its first and
// last screen, restores them.

// superviseEnv marks the child.
const superviseEnv = "NVGO_MONITOR_SUPERVISED"

// stateFD is the child's descriptor of the pipe on which it reports that
// its screen is up ('T') and down again ('D').
const stateFD = 3

// supervise runs the monitor as a child when stdin is a terminal and this
// is not the child, and reports the child's exit status; ran is false when
// the monitor should run in this process.
func supervise() (code int, ran bool) {
	if os.Getenv(superviseEnv) != "" {
		return 0, false
	}
	fd := int(os.Stdin.Fd())
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return 0, false // not a terminal: nothing to restore
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, false
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, false
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), superviseEnv+"=1")
	cmd.ExtraFiles = []*os.File{w}
	// The terminal sends SIGINT and SIGQUIT to both processes: the parent
	// waits for the child instead. SIGTERM and SIGHUP sent to the parent
	// go on to the child.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return 0, false
	}
	w.Close()
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM || s == syscall.SIGHUP {
				cmd.Process.Signal(s)
			}
		}
	}()
	state, _ := io.ReadAll(r) // until the child's end closes the pipe
	r.Close()
	err = cmd.Wait()
	if cmd.ProcessState == nil {
		return 1, true
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if strings.Contains(string(state), "T") && !strings.Contains(string(state), "D") {
		restoreTerminal(fd, saved)
		if ws.Signaled() && ws.Signal() == syscall.SIGHUP {
			// The terminal's hangup ends the monitor, as it ends any
			// program on it; should the terminal still be there (a
			// SIGHUP sent by hand), it is left as it was.
			fmt.Fprintln(os.Stderr, "nvgo-monitor: hung up (SIGHUP); the terminal was restored")
		} else {
			fmt.Fprintf(os.Stderr, "nvgo-monitor: ended abnormally (%v); the terminal was restored\n", err)
		}
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), true // as a shell reports it
	}
	return cmd.ProcessState.ExitCode(), true
}

// restoreTerminal puts back the saved settings and leaves what the screen
// set: mouse reporting, bracketed paste, a hidden cursor, the alternate
// screen.
func restoreTerminal(fd int, saved *unix.Termios) {
	_ = unix.IoctlSetTermios(fd, unix.TCSETS, saved)
	os.Stdout.WriteString("\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?25h\x1b[?1049l\r\n")
}

// stateFile is the pipe to the supervising parent, nil without one.
var stateFile = func() *os.File {
	if os.Getenv(superviseEnv) == "" {
		return nil
	}
	return os.NewFile(stateFD, "monitor-state")
}()

// started and finished tell the parent that the screen is up and down.
func started() {
	if stateFile != nil {
		stateFile.Write([]byte("T"))
	}
}

func finished() {
	if stateFile != nil {
		stateFile.Write([]byte("D"))
		stateFile.Close()
	}
}
