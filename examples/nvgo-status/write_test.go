//go:build cgo

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// errDiskFull is what failWriter's writes fail with.
var errDiskFull = errors.New("no space left on device")

// failWriter takes room bytes, then fails every write with errDiskFull.
type failWriter struct{ room int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) <= w.room {
		w.room -= len(p)
		return len(p), nil
	}
	n := max(w.room, 0)
	w.room = 0
	return n, errDiskFull
}

// Every output nvgo-status writes is an error when it cannot be written:
// exit status 1 and one line on stderr that says so, never 0.
func TestAFailedWriteIsAnError(t *testing.T) {
	modes := []struct {
		name string
		args []string
		cuda bool // CUDA_VISIBLE_DEVICES="" (no device visible)
	}{
		{name: "the table", args: []string{"--simulate", "dgx-h100"}},
		{name: "the table in ASCII", args: []string{"--simulate", "dgx-h100-mig", "--ascii"}},
		{name: "--json", args: []string{"--simulate", "dgx-h100", "--json"}},
		{name: "--help", args: []string{"--help"}},
		{name: "--only-visible with no device visible", args: []string{"--simulate", "dgx-h100", "--only-visible"}, cuda: true},
		{name: "--only-visible --json with no device visible", args: []string{"--simulate", "dgx-h100", "--only-visible", "--json"}, cuda: true},
	}
	writers := []struct {
		name string
		open func(t *testing.T) (io.Writer, string) // and the error it gives
	}{
		{name: "nothing written", open: func(*testing.T) (io.Writer, string) { return &failWriter{}, errDiskFull.Error() }},
		{name: "the first bytes written", open: func(*testing.T) (io.Writer, string) { return &failWriter{room: 20}, errDiskFull.Error() }},
		{name: "/dev/full", open: func(t *testing.T) (io.Writer, string) {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full here: %v", err)
			}
			t.Cleanup(func() { f.Close() })
			return f, "no space left on device"
		}},
	}
	for _, mode := range modes {
		for _, w := range writers {
			t.Run(fmt.Sprintf("%s to %s", mode.name, w.name), func(t *testing.T) {
				plainTerminal(t, 0)
				if mode.cuda {
					setCUDAEnv(t, "", "")
				}
				stdout, why := w.open(t)
				var stderr strings.Builder
				code := run(mode.args, stdout, &stderr)
				if code != 1 {
					t.Errorf("exit %d; want 1", code)
				}
				msg := stderr.String()
				if !strings.HasPrefix(msg, "nvgo-status: cannot write the output: ") || !strings.Contains(msg, why) || strings.Count(msg, "\n") != 1 {
					t.Errorf("stderr %q; want one line, \"nvgo-status: cannot write the output: …%s\"", msg, why)
				}
			})
		}
	}
}
