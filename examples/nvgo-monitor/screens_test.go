//go:build cgo

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

// What a signal did reads as sentences that name each process and why
// one was not signalled.
func TestSignalResultsReadAsSentences(t *testing.T) {
	gone := fmt.Errorf("signal terminated: pid 4194402: %w", nvgo.ErrProcessGone)
	tests := []struct {
		name    string
		keys    []string // from the first row, root
		failPID map[int]error
		want    string
	}{
		{name: "every tagged process signalled", keys: []string{"space", "space", "K", "y"},
			want: "SIGKILL sent to processes 4194401, 4194402."},
		{name: "the selected process signalled", keys: []string{"T", "y"}, want: "SIGTERM sent to process 4194401."},
		{name: "one signalled, one whose PID was reused", keys: []string{"space", "space", "T", "y"},
			failPID: map[int]error{4194402: fmt.Errorf("pid 4194402: %w: %w", errPIDReused, nvgo.ErrProcessGone)},
			want:    "SIGTERM sent to process 4194401. Could not send SIGTERM to process 4194402: its PID now holds another process."},
		{name: "one that has exited", keys: []string{"down", "I", "y"}, failPID: map[int]error{4194402: gone},
			want: "Could not send SIGINT to process 4194402: it has exited."},
		{name: "two refused for one reason are named together", keys: []string{"space", "space", "space", "T", "y"},
			failPID: map[int]error{
				4194401: fmt.Errorf("signal terminated: pid 4194401: %w: operation not permitted", nvgo.ErrNoPermission),
				4194403: fmt.Errorf("signal terminated: pid 4194403: %w: operation not permitted", nvgo.ErrNoPermission),
			},
			want: "SIGTERM sent to process 4194402. Could not send SIGTERM to processes 4194401, 4194403: permission denied (it is another user's process)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := presetRig(t, "dgx-h100")
			r.m.root = true
			r.sig.failPID = tt.failPID
			r.press(tt.keys...)
			if r.m.message != tt.want {
				t.Errorf("after %v:\n got %q\nwant %q", tt.keys, r.m.message, tt.want)
			}
		})
	}
}

// A simulated process has no environment and takes no signal, and the
// monitor says so rather than showing the simulated host's made-up
// "permission denied".
func TestASimulatedProcessIsSaidToBeSimulated(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.m.sig = r.sig.real
	r.m.root = true
	r.press("e")
	s := r.screen()
	wantContains(t, s, "Cannot show the environment of process 4194401: it is simulated, and no process with its PID runs on this host.")
	if strings.Contains(s, "permission") {
		t.Errorf("the environment screen of a simulated process speaks of permission:\n%s", s)
	}
	r.press("q", "T", "y")
	if want := "Could not send SIGTERM to process 4194401: it is simulated, and no process with its PID runs on this host."; r.m.message != want {
		t.Errorf("T y on a simulated process:\n got %q\nwant %q", r.m.message, want)
	}
}
