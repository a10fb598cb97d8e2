package main

import (
	"image/color"
	"strings"
	"unicode/utf8"

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

	// styles are the escape sequences that lipgloss puts around a line for
	// each colour and attribute the monitor draws with, worked out once:
	// lipgloss's Render measures and splits its input, a cost paid on
	// every cell of every frame.
	styles map[styleKey]wrap
}

// styleKey names a style of the theme: a foreground colour, or an
// attribute.
type styleKey struct {
	fg   color.Color
	attr string // "bold", "faint" or "reverse" when fg is nil
}

// wrap is what a style puts before and after a line.
type wrap struct{ before, after string }

// sentinel stands for the text while a style's wrap is worked out.
const sentinel = "\uE000"

// addStyle works out what style puts around a line and keeps it under k
// (unless the rendering hides the text: then k goes through lipgloss).
func (t *theme) addStyle(k styleKey, style lipgloss.Style) {
	if before, after, ok := strings.Cut(style.Render(sentinel), sentinel); ok {
		t.styles[k] = wrap{before, after}
	}
}

// apply styles s through the worked-out wrap of k: the same bytes as
// lipgloss's Render of a single line without tabs (the test holds them
// equal); other text, or a style not worked out, goes through lipgloss.
func (t theme) apply(k styleKey, style func() lipgloss.Style, s string) string {
	if w, ok := t.styles[k]; ok && s != "" && !strings.ContainsAny(s, "\t\r\n") {
		return w.before + s + w.after
	}
	return style().Render(s)
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
	t.styles = map[styleKey]wrap{}
	for _, c := range []color.Color{t.ok, t.warn, t.bad, t.dim, t.accent, t.title} {
		t.addStyle(styleKey{fg: c}, fgStyle(c))
	}
	for attr, style := range attrStyles {
		t.addStyle(styleKey{attr: attr}, style())
	}
	return t
}

func fgStyle(c color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c) }

// attrStyles are the attributes the monitor draws with.
var attrStyles = map[string]func() lipgloss.Style{
	"bold":    func() lipgloss.Style { return lipgloss.NewStyle().Bold(true) },
	"faint":   func() lipgloss.Style { return lipgloss.NewStyle().Faint(true) },
	"reverse": func() lipgloss.Style { return lipgloss.NewStyle().Reverse(true) },
}

// paint gives s the foreground c, when colours are on.
func (t theme) paint(c color.Color, s string) string {
	if !t.color || s == "" {
		return s
	}
	return t.apply(styleKey{fg: c}, func() lipgloss.Style { return fgStyle(c) }, s)
}

// bold, faint and reverse style s when colours are on (reverse marks the
// selected row also without colours).
func (t theme) bold(s string) string {
	if !t.color {
		return s
	}
	return t.apply(styleKey{attr: "bold"}, attrStyles["bold"], s)
}

func (t theme) faint(s string) string {
	if !t.color {
		return s
	}
	return t.apply(styleKey{attr: "faint"}, attrStyles["faint"], s)
}

func (t theme) reverse(s string) string {
	return t.apply(styleKey{attr: "reverse"}, attrStyles["reverse"], s)
}

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
// excluded, as lipgloss.Width counts them. Lines of the monitor's own
// drawing (ASCII, Latin-1, box and block characters, SGR sequences) are
// counted here at one cell a rune; anything else goes to lipgloss, whose
// grapheme segmentation cost a millisecond a frame when every line went
// through it.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			j, ok := skipCSI(s, i)
			if !ok {
				return lipgloss.Width(s)
			}
			i = j
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !oneCell(r) {
			return lipgloss.Width(s)
		}
		n++
		i += size
	}
	return n
}

// oneCell reports whether r is one cell wide wherever it stands: printable
// ASCII and Latin-1, box drawing and block elements.
func oneCell(r rune) bool {
	return (r >= 0x20 && r < 0x7f) || (r >= 0xa0 && r < 0x300 && r != 0xad) || (r >= 0x2500 && r < 0x25a0)
}

// skipCSI returns the index after the control sequence (ESC [ … final
// byte) at s[i], or false when s[i] starts something else.
func skipCSI(s string, i int) (int, bool) {
	if i+1 >= len(s) || s[i+1] != '[' {
		return 0, false
	}
	for j := i + 2; j < len(s); j++ {
		if s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1, true
		}
	}
	return 0, false
}

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
