//go:build cgo

package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

// The title says what the figures are (means over the interval) on every
// screen, within the terminal's width, down to 80 columns and below.
func TestTheTitleFitsAndSaysWhatTheFiguresAre(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {100, 30}, {160, 50}} {
		for sc := screenMain; sc <= screenDevice; sc++ {
			t.Run(fmt.Sprintf("%dx%d %s", size[0], size[1], screenNames[sc]), func(t *testing.T) {
				r := presetRig(t, "dgx-h100")
				r.refresh() // a second frame: the first interval
				r.resize(size[0], size[1])
				r.press(reach[sc]...)
				title := strings.Split(r.screen(), "\n")[0]
				if w := displayWidth(title); w > size[0] {
					t.Errorf("the title is %d wide at %d columns: %q", w, size[0], title)
				}
				if !strings.Contains(title, "means over 1s") {
					t.Errorf("the title does not say what the figures are: %q", title)
				}
				if sc == screenMain && !strings.Contains(title, "Driver 580.95.05") {
					t.Errorf("the main screen's title lacks the driver: %q", title)
				}
				if size[0] >= 160 && !strings.Contains(title, r.m.frame.at.Format("2006-01-02 15:04:05")) {
					t.Errorf("the title at %d columns lacks the date: %q", size[0], title)
				}
			})
		}
	}
}

// In the compact layout the device table's box is as wide as the process
// table's: both span the terminal.
func TestTheDeviceBoxIsAsWideAsTheProcessBox(t *testing.T) {
	for _, tt := range []struct {
		mode          string
		width, height int
	}{{"auto", 80, 24}, {"auto", 100, 30}, {"compact", 160, 50}} {
		t.Run(fmt.Sprintf("%s %dx%d", tt.mode, tt.width, tt.height), func(t *testing.T) {
			r := presetRig(t, "dgx-h100-mig")
			r.m.opts.mode = tt.mode
			r.resize(tt.width, tt.height)
			if r.m.full() {
				t.Fatal("the full layout; want the compact one")
			}
			corners := 0
			for i, l := range strings.Split(r.screen(), "\n") {
				l = stripANSI(l)
				if strings.HasPrefix(l, r.m.th.tl) || strings.HasPrefix(l, r.m.th.bl) {
					corners++
					if w := displayWidth(l); w != tt.width {
						t.Errorf("line %d, a box's edge, is %d wide; want the terminal's %d: %q", i, w, tt.width, l)
					}
				}
			}
			if corners < 3 { // the devices' top and bottom, the processes' top
				t.Errorf("%d box edges found; want the device box's two and the process box's top", corners)
			}
		})
	}
}

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

// A simulated process has no environment, and the monitor says so rather
// than a made-up "permission denied"; a signal reaches it in the
// simulation (never a real process with its PID), and it leaves.
func TestASimulatedProcessIsSaidToBeSimulated(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.m.sig = r.sig.real
	r.m.root = true
	r.press("e")
	s := r.screen()
	wantContains(t, s, "Cannot show the environment of process 4194401: it is simulated and has none.")
	if strings.Contains(s, "permission") {
		t.Errorf("the environment screen of a simulated process speaks of permission:\n%s", s)
	}
	r.press("q", "T", "y")
	if want := "SIGTERM sent to process 4194401."; r.m.message != want {
		t.Errorf("T y on a simulated process:\n got %q\nwant %q", r.m.message, want)
	}
	r.refresh()
	if slices.Contains(r.pids(), 4194401) {
		t.Errorf("the simulated process is still listed after SIGTERM: %v", r.pids())
	}
}
