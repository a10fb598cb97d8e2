package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// brokenWriter fails every write, as a full disk does.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// --help that cannot be written is an error: exit status 1 and a line on
// stderr, not 0.
func TestHelpThatCannotBeWrittenIsAnError(t *testing.T) {
	tests := []struct {
		name string
		open func(t *testing.T) io.Writer
	}{
		{name: "a writer that fails", open: func(*testing.T) io.Writer { return brokenWriter{} }},
		{name: "/dev/full", open: func(t *testing.T) io.Writer {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full here: %v", err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			if code := run([]string{"--help"}, strings.NewReader(""), tt.open(t), &stderr); code != 1 {
				t.Errorf("exit %d; want 1", code)
			}
			if msg := stderr.String(); !strings.HasPrefix(msg, "nvgo-monitor: cannot write the output: ") ||
				!strings.Contains(msg, "no space left on device") || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q; want one line saying the output cannot be written, and why", msg)
			}
		})
	}
}
