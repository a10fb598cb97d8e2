package tool

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/nvgo/nvgo"
)

func TestArgsDoneAnswersHelpOnStdoutAndBadArgumentsOnStderr(t *testing.T) {
	for _, tt := range []struct {
		name           string
		err            error
		wantCode       int
		wantDone       bool
		stdout, stderr string
	}{
		{name: "no error: the tool goes on", err: nil, wantCode: 0, wantDone: false},
		{name: "help", err: ErrHelp, wantCode: 0, wantDone: true, stdout: "usage: t 100%\n"},
		{name: "wrapped help", err: fmt.Errorf("x: %w", ErrHelp), wantCode: 0, wantDone: true, stdout: "usage: t 100%\n"},
		{name: "a bad argument", err: errors.New("--x: bad"), wantCode: ExitUsage, wantDone: true, stderr: "t: --x: bad (see t run --help)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, done := ArgsDone(tt.err, "usage: t 100%\n", &stdout, &stderr, "t: %v (see t %s --help)\n", "run")
			if code != tt.wantCode || done != tt.wantDone || stdout.String() != tt.stdout || stderr.String() != tt.stderr {
				t.Errorf("ArgsDone(%v) = %d, %v, stdout %q, stderr %q; want %d, %v, %q, %q",
					tt.err, code, done, stdout.String(), stderr.String(), tt.wantCode, tt.wantDone, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestExplainNoDriverExplainsOnlyAMissingDriverAndOnce(t *testing.T) {
	plain := errors.New("nvgo: GPU is lost")
	missing := fmt.Errorf("nvgo: cannot initialise NVML: %w", nvgo.ErrLibraryNotFound)
	for _, tt := range []struct {
		name string
		err  error
		want string // "" for nil
	}{
		{name: "nil stays nil", err: nil},
		{name: "another error is left as it is", err: plain, want: plain.Error()},
		{name: "no driver is explained", err: missing, want: "no usable NVIDIA driver: " + missing.Error() + " (try --simulate dgx-h100)"},
		{name: "an explained error is not explained again", err: ExplainNoDriver(missing), want: "no usable NVIDIA driver: " + missing.Error() + " (try --simulate dgx-h100)"},
		{name: "nor when wrapped", err: fmt.Errorf("x: %w", ExplainNoDriver(missing)), want: "x: no usable NVIDIA driver: " + missing.Error() + " (try --simulate dgx-h100)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ExplainNoDriver(tt.err)
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("ExplainNoDriver(nil) = %v", got)
			case tt.want != "" && (got == nil || got.Error() != tt.want):
				t.Errorf("ExplainNoDriver(%v) = %v; want %q", tt.err, got, tt.want)
			case tt.err != nil && !errors.Is(got, tt.err):
				t.Errorf("ExplainNoDriver(%v) does not wrap it", tt.err)
			}
		})
	}
}

func TestExitStatusOfChoosingDevices(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"none", nil, 0},
		{"a bad --only", BadArgError{errors.New("--only 9: no such GPU")}, ExitUsage},
		{"CUDA's list undetermined", fmt.Errorf("--only-visible: %w", nvgo.ErrOrderUndetermined), ExitUndetermined},
		{"no driver", ExplainNoDriver(nvgo.ErrDriverNotLoaded), ExitFailure},
		{"another failure", errors.New("GPU is lost"), ExitFailure},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExitStatus(tt.err); got != tt.want {
				t.Errorf("ExitStatus(%v) = %d; want %d", tt.err, got, tt.want)
			}
		})
	}
}
