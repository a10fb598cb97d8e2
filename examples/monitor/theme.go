package main

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/nvgo/nvgo/examples/internal/tool"
)

// theme is how the monitor draws: characters and colours.
type theme struct {
	color bool
	ascii bool
	light bool

	// Box and bar characters.
	h, v, hh                 string
	tl, tr, bl, br           string
	ltee, rtee, hl, hr       string
	hcross                   string
	tee, cross, bot          string
	full                     string
	partial                  []string
	spark                    []string // sparkline levels, lowest first
	ellipsis                 string
	branch, last, pipe, stem string // tree drawing

	// Colours.
	ok, warn, bad, dim, accent, title color.Color
}

func newTheme(o *options) theme {
	t := theme{color: !o.noColor, ascii: o.ascii, light: o.light}
	if o.ascii {
		t.h, t.v, t.hh = "-", "|", "="
		t.tl, t.tr, t.bl, t.br = "+", "+", "+", "+"
		t.ltee, t.rtee, t.hl, t.hr, t.hcross = "+", "+", "+", "+", "+"
		t.tee, t.cross, t.bot = "+", "+", "+"
		t.full, t.partial = "#", []string{""}
		t.spark = []string{"_", ".", "-", "=", "^"}
		t.ellipsis = "~"
		t.branch, t.last, t.pipe, t.stem = "|-", "`-", "| ", "  "
	} else {
		t.h, t.v, t.hh = "─", "│", "═"
		t.tl, t.tr, t.bl, t.br = "╒", "╕", "╘", "╛"
		t.ltee, t.rtee, t.hl, t.hr, t.hcross = "├", "┤", "╞", "╡", "╪"
		t.tee, t.cross, t.bot = "╤", "┼", "╧"
		t.full, t.partial = "█", []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
		t.spark = []string{"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"}
		t.ellipsis = "…"
		t.branch, t.last, t.pipe, t.stem = "├─", "└─", "│ ", "  "
	}
	if o.light {
		t.ok, t.warn, t.bad = lipgloss.Color("#00875f"), lipgloss.Color("#af5f00"), lipgloss.Color("#d70000")
		t.dim, t.accent, t.title = lipgloss.Color("#808080"), lipgloss.Color("#005fd7"), lipgloss.Color("#000000")
	} else {
		t.ok, t.warn, t.bad = lipgloss.Color("#5fd75f"), lipgloss.Color("#ffd75f"), lipgloss.Color("#ff5f5f")
		t.dim, t.accent, t.title = lipgloss.Color("#8a8a8a"), lipgloss.Color("#5fafff"), lipgloss.Color("#ffffff")
	}
	return t
}

// paint gives s the foreground c, when colours are on.
func (t theme) paint(c color.Color, s string) string {
	if !t.color || s == "" {
		return s
	}
	return lipgloss.NewStyle().Foreground(c).Render(s)
}

// bold, faint and reverse style s when colours are on (reverse marks the
// selected row also without colours).
func (t theme) bold(s string) string {
	if !t.color {
		return s
	}
	return lipgloss.NewStyle().Bold(true).Render(s)
}

func (t theme) faint(s string) string {
	if !t.color {
		return s
	}
	return lipgloss.NewStyle().Faint(true).Render(s)
}

func (t theme) reverse(s string) string { return lipgloss.NewStyle().Reverse(true).Render(s) }

// load returns the colour of a utilization: green, yellow above 50, red
// above 80, as nvitop colours its bars.
func (t theme) load(pct float64) color.Color {
	switch {
	case pct >= 80:
		return t.bad
	case pct >= 50:
		return t.warn
	}
	return t.ok
}

// bar draws pct (0..100) in width cells, with partial blocks.
func (t theme) bar(pct float64, width int) string {
	if width <= 0 {
		return ""
	}
	pct = min(max(pct, 0), 100)
	eighths := int(pct/100*float64(width*8) + 0.5)
	fullCells := eighths / 8
	var b strings.Builder
	b.WriteString(strings.Repeat(t.full, fullCells))
	rest := eighths % 8
	cells := fullCells
	if rest > 0 && cells < width {
		if len(t.partial) > 1 {
			b.WriteString(t.partial[rest])
		} else if rest >= 4 {
			b.WriteString(t.full)
		} else {
			b.WriteString(" ")
		}
		cells++
	}
	b.WriteString(strings.Repeat(" ", width-cells))
	return t.paint(t.load(pct), b.String())
}

// sparkline draws the last width values of series (0..top) as one line.
// Missing values (NaN) are blanks.
func (t theme) sparkline(series []float64, top float64, width int) string {
	if width <= 0 {
		return ""
	}
	if len(series) > width {
		series = series[len(series)-width:]
	}
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", width-len(series)))
	for _, v := range series {
		if v != v || top <= 0 { // NaN: no value
			b.WriteString(" ")
			continue
		}
		i := int(min(max(v/top, 0), 1) * float64(len(t.spark)-1))
		b.WriteString(t.spark[i])
	}
	return t.paint(t.accent, b.String())
}

// displayWidth is the number of terminal cells s takes, ANSI codes
// excluded.
func displayWidth(s string) int { return lipgloss.Width(s) }

// fit cuts plain text s to width cells (ending it with the ellipsis when
// cut) or pads it; control characters show escaped, so that no process
// name can repaint the screen.
func (t theme) fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return tool.Fit(s, width, false, t.ellipsis)
}

// right aligns plain text s to the right of width cells.
func (t theme) right(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return tool.Fit(s, width, true, t.ellipsis)
}
