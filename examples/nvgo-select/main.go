// Command nvgo-select chooses GPUs for a job, like nvitop's nvisel: it filters
// the devices by free and total memory and by utilization, ranks them (most
// free memory first, GPU 0 last) and prints the best as a value for
// CUDA_VISIBLE_DEVICES, or reserves them and runs a command on them. It is
// built only on nvgo's public API.
//
//	nvgo-select [-i [CVD]] [--account-as-free [USER…]] [-c N] [-C N] [-n N]
//	       [-f SIZE] [-t SIZE] [-G RATE] [-M RATE] [--tol TOL] [--window DURATION]
//	       [-O index|uuid] [-s SEP | --newline | -0] [-S]
//	       [--lock-dir DIR] [--simulate NAME|FILE] [-- COMMAND [ARG…]]
//
// Printing, as nvisel does:
//
//	export CUDA_VISIBLE_DEVICES="$(nvgo-select -n 2 -f 20GiB)"
//	nvgo-select -0 -c 2 -f 4GiB | xargs -0 -I {} nvidia-smi --id={}
//
// It prints UUIDs by default, which name the same devices whatever
// CUDA_DEVICE_ORDER says. With --format index it prints NVML indices, and
// only where CUDA numbers the GPUs the same way; they are always values for
// CUDA_VISIBLE_DEVICES in place of the current one, also with --inherit
// (not CUDA ordinals inside the inherited set). When stdout is not a
// terminal it also writes CUDA_VISIBLE_DEVICES="…" to stderr.
//
// Running a command:
//
//	nvgo-select -n 2 --min-free-memory 20GiB -- python train.py --epochs 10
//
// reserves two devices (a lock file each, so that other nvgo-select commands
// sharing the lock directory skip them), runs the command with
// CUDA_VISIBLE_DEVICES set to their UUIDs and the locks inherited, so the
// reservation lasts exactly as long as the command and whatever it starts,
// forwards SIGTERM, SIGHUP and SIGINT to it and exits with its status. With
// a command, --min-count defaults to 1.
//
// Exit status: 0 ok; 1 no usable NVIDIA driver or a bad --simulate file;
// 2 bad arguments or another NVML error; 3 CUDA's numbering cannot be
// decided (--inherit, --format index); 4 fewer devices than --min-count.
// Devices are printed only with status 0: with too few, nothing is (no
// CUDA_VISIBLE_DEVICES line either), so that "$(nvgo-select -n 9)" on eight
// GPUs is empty, not a partial list. With a command: its status, 128+N when
// signal N killed it, 126 when it cannot be executed, 127 when it is not
// found.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

// Exit statuses.
const (
	exitOK            = 0
	exitNoDriver      = 1 // also a bad --simulate file
	exitUsage         = 2 // also an NVML error, as nvisel (argparse) does
	exitCUDA          = 3
	exitTooFew        = 4
	exitCannotExecute = 126
	exitNotFound      = 127
)

// selectTimeout bounds choosing (not the command).
const selectTimeout = time.Minute

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// failure is an error with the exit status it gives.
type failure struct {
	code int
	err  error
}

func (f *failure) Error() string { return f.err.Error() }

func fail(code int, format string, a ...any) error {
	return &failure{code, fmt.Errorf(format, a...)}
}

// libraryFailure classifies an error from the library: 1 when there is no
// usable NVML, else 2.
func libraryFailure(err error) error {
	switch {
	case nvgo.IsNVMLUnavailable(err):
		return &failure{exitNoDriver, tool.ExplainNoDriver(err)}
	case errors.Is(err, nvgo.ErrInvalidArgument), errors.Is(err, context.DeadlineExceeded):
		return fail(exitUsage, "%v", err)
	case errors.Is(err, nvgo.ErrLockDir):
		return fail(exitUsage, "%v", err) // a filesystem problem, not NVML's
	}
	return fail(exitUsage, "NVML error: %v", err)
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args)
	if errors.Is(err, errVersion) {
		fmt.Fprintln(stdout, "nvgo-select", version())
		return exitOK
	}
	if code, done := tool.ArgsDone(err, usage, stdout, stderr, "nvgo-select: %v (see nvgo-select --help)\n"); done {
		return code
	}
	code, err := o.run(stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-select: %v\n", err)
		var f *failure
		if errors.As(err, &f) {
			return f.code
		}
		return exitUsage
	}
	return code
}

// warnLeftOut says which devices a selection left out and why, one
// "nvgo-select: warning: …" line each, and returns err without them: what
// remains is an error only if something else went wrong.
func warnLeftOut(stderr io.Writer, err error) error {
	for _, d := range leftOut(err) {
		fmt.Fprintf(stderr, "nvgo-select: warning: %v\n", nvgo.DeviceErrors{d})
	}
	if _, only := err.(nvgo.DeviceErrors); only {
		return nil
	}
	return err
}

// leftOut returns the devices of every nvgo.DeviceErrors in err's tree. A
// reservation short of devices joins two (GPUs that could not be read, lock
// files that cannot be locked), of which errors.As finds only the first.
func leftOut(err error) []nvgo.DeviceError {
	switch e := err.(type) {
	case nvgo.DeviceErrors:
		return e
	case interface{ Unwrap() []error }:
		var out []nvgo.DeviceError
		for _, inner := range e.Unwrap() {
			out = append(out, leftOut(inner)...)
		}
		return out
	case interface{ Unwrap() error }:
		return leftOut(e.Unwrap())
	}
	return nil
}

func (o *options) run(stdout, stderr io.Writer) (int, error) {
	lib, err := tool.Open(o.simulate, false)
	if err != nil {
		return 0, &failure{exitNoDriver, err}
	}
	defer lib.Close()
	if err := lib.Available(); err != nil {
		return 0, libraryFailure(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), selectTimeout)
	defer cancel()
	opts, none, err := o.selectOptions(ctx, lib, stderr)
	if err != nil {
		return 0, err
	}
	if len(o.command) > 0 {
		return o.runCommand(ctx, lib, opts, none, stdout, stderr)
	}
	return o.print(ctx, lib, opts, none, stdout, stderr)
}

// selectOptions turns the flags into SelectOptions. none is true when
// --inherit leaves no device to choose from (WithCandidates() with no
// device would mean every device).
func (o *options) selectOptions(ctx context.Context, lib *nvgo.Library, stderr io.Writer) (opts []nvgo.SelectOption, none bool, err error) {
	opts = []nvgo.SelectOption{nvgo.WithMinCount(o.minCount), nvgo.WithTolerance(o.tolerance)}
	if o.inherit {
		devs, all, err := inherited(ctx, lib, o.inheritCVD, stderr)
		switch {
		case err != nil:
			return nil, false, err
		case !all && len(devs) == 0:
			none = true
		case !all:
			opts = append(opts, nvgo.WithCandidates(devs...))
		}
	}
	if o.maxCount >= 0 {
		opts = append(opts, nvgo.WithMaxCount(o.maxCount))
	}
	if o.minFree > 0 {
		opts = append(opts, nvgo.WithMinFreeMemory(o.minFree))
	}
	if o.minTotal > 0 {
		opts = append(opts, nvgo.WithMinTotalMemory(o.minTotal))
	}
	if o.maxGPU != nil {
		opts = append(opts, nvgo.WithMaxGPUUtilization(*o.maxGPU))
	}
	if o.maxMem != nil {
		opts = append(opts, nvgo.WithMaxMemoryUtilization(*o.maxMem))
	}
	accounts := o.freeAccounts
	if o.freeCurrent {
		if name := currentUser(); name != "" {
			accounts = append(accounts, name)
		} else {
			fmt.Fprintln(stderr, "nvgo-select: warning: --account-as-free: cannot tell who the current user is")
		}
	}
	if len(accounts) > 0 {
		opts = append(opts, nvgo.WithFreeAccounts(accounts...))
	}
	if o.noSort {
		opts = append(opts, nvgo.WithoutSorting())
	}
	if o.window > 0 {
		opts = append(opts, nvgo.WithUtilizationWindow(o.window))
	}
	if o.lockDir != "" {
		opts = append(opts, nvgo.WithLockDir(o.lockDir))
	}
	return opts, none, nil
}

// print selects and prints, as nvisel does.
func (o *options) print(ctx context.Context, lib *nvgo.Library, opts []nvgo.SelectOption, none bool, stdout, stderr io.Writer) (int, error) {
	var devs []*nvgo.Device
	var err error
	if !none {
		devs, err = lib.SelectDevices(ctx, append(opts, nvgo.WithoutReserved())...)
		err = warnLeftOut(stderr, err)
	}
	if errors.Is(err, nvgo.ErrTooFewDevices) || none && o.minCount > 0 {
		// Printing what was found would hand $(nvgo-select -n 9) a partial
		// list that looks like an answer.
		return 0, fail(exitTooFew, "not enough devices: %d unreserved satisfy the constraints, at least %d wanted; printing none", len(devs), o.minCount)
	}
	if err != nil {
		return 0, libraryFailure(err)
	}
	ids, err := o.identifiers(lib, devs)
	if err != nil {
		return 0, err
	}
	if !isTerminal(stdout) {
		fmt.Fprintf(stderr, "CUDA_VISIBLE_DEVICES=\"%s\"\n", strings.Join(ids, ","))
	}
	out := strings.Join(ids, o.sep)
	if len(ids) > 0 || o.terminator == "\n" {
		// With --null, no device is no item at all (xargs -0 would see one
		// empty item in a lone NUL).
		out += o.terminator
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		return 0, fail(exitUsage, "writing the selection: %w", err)
	}
	return exitOK, nil
}

// identifiers renders devs in the chosen format.
func (o *options) identifiers(lib *nvgo.Library, devs []*nvgo.Device) ([]string, error) {
	if o.format == "uuid" || len(devs) == 0 {
		return nvgo.DeviceUUIDs(devs), nil
	}
	if err := indicesMeanTheSame(lib, devs); err != nil {
		return nil, err
	}
	idx, err := nvgo.DeviceIndices(devs)
	if err != nil { // a MIG device, which indicesMeanTheSame has ruled out
		return nil, fail(exitCUDA, "--format index: %v", err)
	}
	ids := make([]string, len(idx))
	for i, n := range idx {
		ids[i] = fmt.Sprint(n)
	}
	return ids, nil
}

// currentUser returns the login name of the user running nvgo-select, or "".
func currentUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// version returns "(nvgo v1.2.3)", or "(nvgo devel)" for a build from a
// work tree.
func version() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return "(nvgo " + v + ")"
}
