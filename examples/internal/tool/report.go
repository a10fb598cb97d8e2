package tool

import (
	"errors"
	"fmt"
	"io"

	"github.com/nvgo/nvgo"
)

// Exit statuses that every tool gives.
const (
	// ExitFailure is a failure of the library: no usable NVIDIA driver, a
	// bad --simulate file.
	ExitFailure = 1
	// ExitUsage is bad arguments, also those that the machine shows to be
	// wrong (BadArgError).
	ExitUsage = 2
	// ExitUndetermined is CUDA's device list undetermined
	// (nvgo.ErrUndetermined), for --only-visible.
	ExitUndetermined = 3
)

// ExitStatus returns a tool's exit status for err, an error of
// OpenDevices: 0 for nil, ExitUsage for a BadArgError, ExitUndetermined
// for nvgo.ErrUndetermined, else ExitFailure.
func ExitStatus(err error) int {
	var bad BadArgError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &bad):
		return ExitUsage
	case errors.Is(err, nvgo.ErrUndetermined): // ErrOrderUndetermined too
		return ExitUndetermined
	}
	return ExitFailure
}

// ArgsDone handles what a tool's argument parser returned, err: for
// ErrHelp it writes help to stdout and returns exit status 0, for another
// error it writes to stderr by format, whose first verb is err's and the
// rest a's, and returns ExitUsage. done is false when err is nil: the tool
// goes on.
func ArgsDone(err error, help string, stdout, stderr io.Writer, format string, a ...any) (code int, done bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, ErrHelp):
		fmt.Fprint(stdout, help)
		return 0, true
	}
	fmt.Fprintf(stderr, format, append([]any{err}, a...)...)
	return ExitUsage, true
}

// ExplainNoDriver returns err, explained when it means that there is no
// usable NVIDIA driver (nvgo.IsNVMLUnavailable): "no usable NVIDIA driver:
// ERR (try --simulate dgx-h100)". The explained error wraps err, and
// explaining it again changes nothing.
func ExplainNoDriver(err error) error {
	var explained noDriverError
	if err == nil || !nvgo.IsNVMLUnavailable(err) || errors.As(err, &explained) {
		return err
	}
	return noDriverError{err}
}

// noDriverError is an error that means no usable NVIDIA driver, with what
// to try instead.
type noDriverError struct{ err error }

func (e noDriverError) Error() string {
	return "no usable NVIDIA driver: " + e.err.Error() + " (try --simulate dgx-h100)"
}

func (e noDriverError) Unwrap() error { return e.err }
