//go:build cgo

package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// screenNames name the screens in test output.
var screenNames = map[screen]string{screenMain: "main", screenTree: "tree", screenMetrics: "metrics",
	screenEnv: "environment", screenHelp: "help", screenDevice: "device"}

// reach are the keys that open each screen from the main one.
var reach = map[screen][]string{screenMain: nil, screenTree: {"t"}, screenMetrics: {"enter"},
	screenEnv: {"e"}, screenHelp: {"h"}, screenDevice: {"d"}}

// Every screen opened from another goes back to it, however deep, and
// the main screen is always reached again.
func TestBackReturnsToTheScreenEachWasOpenedFrom(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want []screen // after each key
	}{
		{name: "help opened from the tree goes back to the tree, and the tree to the table",
			keys: []string{"t", "h", "q", "q"}, want: []screen{screenTree, screenHelp, screenTree, screenMain}},
		{name: "Esc goes back as q does", keys: []string{"t", "h", "esc", "esc"},
			want: []screen{screenTree, screenHelp, screenTree, screenMain}},
		{name: "figures opened from the tree go back to the tree",
			keys: []string{"t", "enter", "q", "q"}, want: []screen{screenTree, screenMetrics, screenTree, screenMain}},
		{name: "the environment opened from the tree goes back to the tree",
			keys: []string{"t", "e", "esc", "q"}, want: []screen{screenTree, screenEnv, screenTree, screenMain}},
		{name: "t in the tree goes back to the table", keys: []string{"t", "t"}, want: []screen{screenTree, screenMain}},
		{name: "four screens deep, each goes back to the one before",
			keys: []string{"t", "d", "h", "q", "q", "q"},
			want: []screen{screenTree, screenDevice, screenHelp, screenDevice, screenTree, screenMain}},
		{name: "the environment of the process whose figures are shown, then help, and back",
			keys: []string{"enter", "e", "h", "q", "q", "q"},
			want: []screen{screenMetrics, screenEnv, screenHelp, screenEnv, screenMetrics, screenMain}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := presetRig(t, "dgx-h100")
			for i, k := range tt.keys {
				r.press(k)
				if r.m.screen != tt.want[i] {
					t.Fatalf("after %v: the %s screen; want the %s screen", tt.keys[:i+1], screenNames[r.m.screen], screenNames[tt.want[i]])
				}
			}
			if cmd := r.press("q"); cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.Quit()) {
				t.Errorf("q on the main screen, back from %v, did not quit", tt.keys)
			}
		})
	}
}

// However many screens are opened on each other, the way back is bounded
// and ends on the main screen.
func TestGoingBackIsBounded(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	for range 100 {
		r.m.open(screenHelp)
	}
	if n := len(r.m.backTo); n > maxBack {
		t.Fatalf("%d screens kept to go back to; want at most %d", n, maxBack)
	}
	for range maxBack + 1 {
		r.press("q")
	}
	if r.m.screen != screenMain {
		t.Errorf("after %d q: the %s screen; want the main screen", maxBack+1, screenNames[r.m.screen])
	}
}

// hintedKeys reads the keys the bottom bar advertises: "o/,/. sort" is o,
// ',' and '.'; "Enter metrics" is enter.
func hintedKeys(bar string) []string {
	names := map[string]string{"Enter": "enter", "Space": "space", "Tab": "tab", "Esc": "esc"}
	var keys []string
	for _, hint := range strings.Split(strings.TrimSpace(bar), "  ") {
		spec, _, _ := strings.Cut(strings.TrimSpace(hint), " ")
		parts := []string{spec}
		if spec != "/" {
			parts = strings.Split(spec, "/")
		}
		for _, k := range parts {
			if n, ok := names[k]; ok {
				k = n
			}
			keys = append(keys, k)
		}
	}
	return keys
}

// state is what a key may change, to tell whether it did anything.
func (r *rig) state() string {
	m := r.m
	return fmt.Sprintf("screen %d, message %q, sort %d reversed %v awaiting %v, compute %v, user %q, %d tagged, confirm %v, device %q, scroll %d, row %d",
		m.screen, m.message, m.sortBy, m.reverse, m.awaitSort, m.computeOnly, m.userFilter, len(m.tags), m.confirm != nil,
		m.device, m.subScroll, m.sel)
}

// Every key a screen's bottom bar advertises does something there.
func TestEveryScreenAdvertisesOnlyKeysThatWork(t *testing.T) {
	for sc := screenMain; sc <= screenDevice; sc++ {
		r := presetRig(t, "dgx-h100")
		r.resize(400, 50) // the whole bar fits
		r.press(reach[sc]...)
		lines := strings.Split(r.screen(), "\n")
		keys := hintedKeys(lines[len(lines)-1])
		if len(keys) == 0 || !slices.Contains(keys, "q") {
			t.Errorf("the %s screen's bottom bar %q advertises no q", screenNames[sc], lines[len(lines)-1])
		}
		for _, k := range keys {
			t.Run(screenNames[sc]+" "+k, func(t *testing.T) {
				r := presetRig(t, "dgx-h100")
				r.m.root = true // the signal keys ask
				r.press(reach[sc]...)
				if r.m.screen != sc {
					t.Fatalf("%v opened the %s screen", reach[sc], screenNames[r.m.screen])
				}
				before := r.state()
				cmd := r.press(k)
				if after := r.state(); after == before && cmd == nil {
					t.Errorf("the %s screen advertises %q, which does nothing there (%s)", screenNames[sc], k, after)
				}
			})
		}
	}
}

// The keys are one table: no key means two things on one screen, and the
// help screen lists every binding that has help.
func TestNoKeyIsBoundTwiceOnAScreen(t *testing.T) {
	for sc := screenMain; sc <= screenDevice; sc++ {
		seen := map[string]bool{}
		for _, b := range bindings {
			if !b.on.has(sc) || b.do == nil {
				continue
			}
			for _, k := range b.keys {
				if seen[k] {
					t.Errorf("%q is bound twice on the %s screen", k, screenNames[sc])
				}
				seen[k] = true
			}
		}
	}
	r := presetRig(t, "dgx-h100")
	r.resize(200, 80)
	r.press("h")
	help := r.screen()
	for _, b := range bindings {
		if b.help != "" && !strings.Contains(help, b.label) {
			t.Errorf("the help screen lacks %q:\n%s", b.label, help)
		}
	}
}
