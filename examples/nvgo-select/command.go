package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/nvgo/nvgo"
)

// forwardedSignals are passed on to the command.
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// runCommand reserves devices, runs the command on them and returns its
// exit status. The command inherits the lock files, so the reservation
// lasts as long as it (and anything it starts) runs, even if nvgo-select dies.
func (o *options) runCommand(ctx context.Context, lib *nvgo.Library, opts []nvgo.SelectOption, none bool, stdout, stderr io.Writer) (int, error) {
	name := o.command[0]
	if none {
		if o.minCount > 0 {
			return 0, fail(exitTooFew, "not enough devices: --inherit leaves none, and at least %d are wanted; %s not started", o.minCount, name)
		}
		opts = append(opts, nvgo.WithMaxCount(0))
	}
	r, err := lib.ReserveDevices(ctx, opts...)
	err = warnLeftOut(stderr, err)
	if errors.Is(err, nvgo.ErrTooFewDevices) {
		return 0, fail(exitTooFew, "not enough devices: fewer than %d are unreserved and satisfy the constraints; %s not started", o.minCount, name)
	} else if err != nil {
		return 0, libraryFailure(err)
	}
	defer r.Release()
	warnLeftOut(stderr, r.LeftOut())

	cmd := r.Command(context.Background(), name, o.command[1:]...)
	if cmd.Err != nil { // not found in $PATH
		return 0, startFailure(name, cmd.Err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	fmt.Fprintf(stderr, "CUDA_VISIBLE_DEVICES=\"%s\"\n", r.CUDAVisibleDevices())

	// Catch the signals before the command exists, so that none kills nvgo-select
	// and leaves the command running unwatched. Ignored signals stay ignored
	// (nohup, background jobs): catching them would also reset them to the
	// default in the command.
	sigs := make(chan os.Signal, 8)
	for _, s := range forwardedSignals {
		if !signal.Ignored(s) {
			signal.Notify(sigs, s)
		}
	}
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, startFailure(name, err)
	}
	r.Release() // the command holds the locks now

	done, forwarding := make(chan struct{}), make(chan struct{})
	go forward(sigs, cmd.Process, done, forwarding)
	err = cmd.Wait()
	close(done)
	<-forwarding
	return exitStatus(name, cmd.ProcessState, err)
}

// forward passes the signals nvgo-select receives to p until done is closed,
// then closes finished.
func forward(sigs <-chan os.Signal, p *os.Process, done <-chan struct{}, finished chan<- struct{}) {
	defer close(finished)
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGINT && inForeground() {
				// A ^C at the terminal goes to the whole foreground process
				// group, the command included: sending it again would
				// interrupt the command's own clean-up.
				continue
			}
			_ = p.Signal(s) // the command may have exited already
		case <-done:
			return
		}
	}
}

// inForeground reports whether nvgo-select is in the foreground process group
// of its terminal (and so is the command, which shares nvgo-select's group).
func inForeground() bool {
	for fd := 0; fd <= 2; fd++ {
		if fg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err == nil {
			return fg == unix.Getpgrp()
		}
	}
	return false
}

// startFailure gives the shell's statuses: 127 for a command that does not
// exist, 126 for one that cannot be executed.
func startFailure(name string, err error) error {
	switch {
	case errors.Is(err, exec.ErrNotFound):
		return fail(exitNotFound, "%s: command not found", name)
	case errors.Is(err, fs.ErrNotExist):
		return fail(exitNotFound, "%s: no such file or directory", name)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fail(exitCannotExecute, "%s: cannot execute: %v", name, err)
}

// exitStatus returns the command's exit status as a shell reports it:
// 128+N when signal N killed it.
func exitStatus(name string, st *os.ProcessState, err error) (int, error) {
	if st == nil {
		return 0, fail(exitUsage, "%s: %v", name, err)
	}
	code := st.ExitCode()
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		// It ran, but copying its output failed.
		return 0, &failure{max(code, 1), fmt.Errorf("%s: %w", name, err)}
	}
	return code, nil
}
