package tool

import (
	"strings"
	"testing"
	"unicode"
)

// runeWidth answers 1 below U+0300 without looking further: nothing there
// is a combining mark, a zero-width character or in a wide block, so the
// full rule would answer 1 too.
func TestRuneWidthFastPathAgreesWithTheRule(t *testing.T) {
	for r := rune(0); r < 0x300; r++ {
		zero := r == 0x200b || r == 0x200c || r == 0x200d || r == 0xfeff || unicode.In(r, unicode.Mn, unicode.Me)
		wide := false
		for _, w := range wideRunes {
			wide = wide || (r >= w.lo && r <= w.hi)
		}
		if zero || wide {
			t.Errorf("%U is zero-width or wide, but runeWidth says %d", r, runeWidth(r))
		}
	}
	for _, tt := range []struct {
		r    rune
		want int
	}{{'a', 1}, {'é', 1}, {0x301, 0}, {0x200b, 0}, {'日', 2}, {'🚀', 2}, {'│', 1}} {
		if got := runeWidth(tt.r); got != tt.want {
			t.Errorf("runeWidth(%U) = %d, want %d", tt.r, got, tt.want)
		}
	}
}

func TestSimulateHelpListsThePresetsWithinTheHelpWidth(t *testing.T) {
	head := "  --simulate NAME|FILE  "
	got := SimulateHelp(head, "serve", "or a scenario JSON file")
	if !strings.HasPrefix(got, head+"serve a fake GPU fleet") {
		t.Errorf("SimulateHelp = %q; want it to start with the option and the verb", got)
	}
	flat := strings.Join(strings.Fields(got), " ") // unwrapped
	want := []string{"(in a binary built with cgo only)"}
	if presets := PresetNames(); len(presets) > 0 {
		want = []string{strings.Join(presets, ", ") + ", or a scenario JSON file"}
	}
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("SimulateHelp = %q; want %q in it", got, w)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if DisplayWidth(line) > HelpWidth {
			t.Errorf("line %q is wider than %d", line, HelpWidth)
		}
	}
}
