package main

import (
	"testing"

	"charm.land/lipgloss/v2"
)

// The worked-out styles give the same bytes as lipgloss's Render, for
// every colour and attribute of every theme.
func TestThemeStylesMatchLipgloss(t *testing.T) {
	texts := []string{
		"x", " 97% ", "GPU 0  H100 80GB HBM3", "│ ██████▍   │", "héllo wörld", "日本語 python3",
		"a\x1b[1mbold\x1b[m b", "…", "", "two\nlines", "a\ttab", "cr\r\n",
	}
	for _, o := range []options{{}, {light: true}, {ascii: true}} {
		th := newTheme(&o)
		if len(th.styles) != 6+len(attrStyles) {
			t.Fatalf("%+v: %d styles worked out; want %d", o, len(th.styles), 6+len(attrStyles))
		}
		for k := range th.styles {
			style := func() lipgloss.Style { return fgStyle(k.fg) }
			if k.fg == nil {
				style = attrStyles[k.attr]
			}
			for _, s := range texts {
				if got, want := th.apply(k, style, s), style().Render(s); got != want {
					t.Errorf("%+v %v: apply(%q) = %q; lipgloss renders %q", o, k, s, got, want)
				}
			}
		}
	}
}

// displayWidth counts as lipgloss.Width does, on the monitor's own drawing
// (its fast path) and on anything else (which it hands to lipgloss).
func TestDisplayWidthMatchesLipgloss(t *testing.T) {
	th := newTheme(&options{})
	tests := []string{
		"", "plain ASCII", "╒═══╤═══╕ │ ├─┼─┤ ╘═╧═╛", "▁▂▃▄▅▆▇█ ▏▎▍▌▋▊▉",
		th.paint(th.ok, "green") + " and " + th.bold("bold") + th.reverse(" selected "),
		"naïve café ÿ", "日本語", "emoji 🚀 and flag 🇫🇷", "e\u0301 combining", "zero\u200bwidth",
		"ellipsis …", "soft\u00adhyphen", "control \x07 bell", "\x1b]0;title\x07osc", "\x1b[31", "tab\there",
	}
	for _, s := range tests {
		if got, want := displayWidth(s), lipgloss.Width(s); got != want {
			t.Errorf("displayWidth(%q) = %d; lipgloss.Width = %d", s, got, want)
		}
	}
	for r := rune(0); r < 0x2600; r++ {
		if oneCell(r) {
			if w := lipgloss.Width(string(r)); w != 1 {
				t.Errorf("%U is counted as one cell; lipgloss.Width says %d", r, w)
			}
		}
	}
}
