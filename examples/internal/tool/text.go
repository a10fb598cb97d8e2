package tool

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fit fits s into width display columns, left- or right-aligned; a text too
// long keeps what fits before ellipsis. It counts East Asian wide characters
// as two columns and combining marks as none, and shows control characters
// (a tab or an escape sequence in a command line) escaped, so that no
// process can shift or repaint the table.
func Fit(s string, width int, right bool, ellipsis string) string {
	s = Printable(s)
	n := DisplayWidth(s)
	if n <= width {
		if right {
			return strings.Repeat(" ", width-n) + s
		}
		return s + strings.Repeat(" ", width-n)
	}
	ew := DisplayWidth(ellipsis)
	if ew > width {
		ellipsis, ew = "", 0
	}
	var sb strings.Builder
	used := 0
	for _, c := range s {
		cw := runeWidth(c)
		if used+cw > width-ew {
			break
		}
		sb.WriteRune(c)
		used += cw
	}
	// a wide character that would cross the edge leaves a space
	return sb.String() + ellipsis + strings.Repeat(" ", width-used-ew)
}

// Printable escapes control characters: "\t", "\x1b", "\u0085"…
func Printable(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\n':
			sb.WriteString(`\n`)
		case isControl(r) && r < 0x100:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// isControl reports C0 and C1 controls, DEL, invalid UTF-8 and the
// bidirectional overrides that would reorder the rest of a line.
func isControl(r rune) bool {
	return unicode.IsControl(r) || r == utf8.RuneError ||
		(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// DisplayWidth is the number of terminal columns s takes.
func DisplayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// runeWidth is how many columns a terminal gives r: 0 for combining marks
// and zero-width characters, 2 for East Asian wide and fullwidth characters
// (CJK, Hangul, kana, fullwidth forms, emoji), else 1.
func runeWidth(r rune) int {
	if r < 0x300 { // below the first combining mark and every wide block
		return 1
	}
	if r == 0x200b || r == 0x200c || r == 0x200d || r == 0xfeff || unicode.In(r, unicode.Mn, unicode.Me) {
		return 0
	}
	for _, w := range wideRunes {
		if r >= w.lo && r <= w.hi {
			return 2
		}
	}
	return 1
}

// wideRunes are the main East Asian Wide (W) and Fullwidth (F) blocks.
var wideRunes = []struct{ lo, hi rune }{
	{0x1100, 0x115f},   // Hangul Jamo initials
	{0x231a, 0x231b},   // watch, hourglass
	{0x2329, 0x232a},   // angle brackets
	{0x23e9, 0x23f3},   // media symbols
	{0x25fd, 0x25fe},   // medium small squares
	{0x2614, 0x2615},   // umbrella, hot beverage
	{0x2648, 0x2653},   // zodiac
	{0x26a1, 0x26a1},   // high voltage
	{0x26bd, 0x26be},   // soccer, baseball
	{0x26c4, 0x26c5},   // snowman, sun behind cloud
	{0x26d4, 0x26d4},   // no entry
	{0x2705, 0x2705},   // check mark button
	{0x270a, 0x270b},   // raised fist, hand
	{0x2728, 0x2728},   // sparkles
	{0x274c, 0x274c},   // cross mark
	{0x2753, 0x2757},   // question and exclamation marks
	{0x2795, 0x2797},   // heavy plus, minus, division
	{0x2b1b, 0x2b1c},   // large squares
	{0x2b50, 0x2b50},   // star
	{0x2b55, 0x2b55},   // heavy circle
	{0x2e80, 0x303e},   // CJK radicals, Kangxi, CJK symbols and punctuation
	{0x3041, 0x33ff},   // kana, Bopomofo, CJK compatibility
	{0x3400, 0x4dbf},   // CJK extension A
	{0x4e00, 0x9fff},   // CJK unified ideographs
	{0xa000, 0xa4cf},   // Yi
	{0xa960, 0xa97f},   // Hangul Jamo extended-A
	{0xac00, 0xd7a3},   // Hangul syllables
	{0xf900, 0xfaff},   // CJK compatibility ideographs
	{0xfe10, 0xfe19},   // vertical forms
	{0xfe30, 0xfe6f},   // CJK compatibility forms, small forms
	{0xff00, 0xff60},   // fullwidth forms
	{0xffe0, 0xffe6},   // fullwidth signs
	{0x16fe0, 0x18cff}, // Tangut
	{0x1b000, 0x1b2ff}, // kana supplement, Nushu
	{0x1f004, 0x1f004}, // mahjong tile
	{0x1f0cf, 0x1f0cf}, // joker
	{0x1f18e, 0x1f18e}, // AB button
	{0x1f191, 0x1f19a}, // squared words
	{0x1f200, 0x1f251}, // enclosed ideographic supplement
	{0x1f300, 0x1f64f}, // pictographs, emoticons
	{0x1f680, 0x1f6ff}, // transport and map
	{0x1f7e0, 0x1f7f0}, // coloured circles and squares
	{0x1f900, 0x1f9ff}, // supplemental symbols and pictographs
	{0x1fa70, 0x1faff}, // symbols and pictographs extended-A
	{0x20000, 0x2fffd}, // CJK extensions B…F
	{0x30000, 0x3fffd}, // CJK extensions G…
}

// HelpWidth is the widest line of a tool's --help: it fits an 80-column
// terminal.
const HelpWidth = 79

// WrapOption formats one option of a --help: head (the option, padded to
// the help's column), then text wrapped at spaces into lines of at most
// HelpWidth columns, continued under the text's first word.
func WrapOption(head, text string) string {
	indent := strings.Repeat(" ", len(head))
	var b strings.Builder
	line := head
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
			line += w
		case len(line)+1+len(w) > HelpWidth:
			b.WriteString(line + "\n")
			line = indent + w
		default:
			line += " " + w
		}
	}
	b.WriteString(line)
	return b.String()
}

// SimulateHelp formats the --simulate option of a --help as WrapOption
// does, listing PresetNames: "VERB a fake GPU fleet: dgx-a100, …, FILES",
// where files says what else it takes ("or a scenario file"). Without cgo
// there are no presets, and it says so.
func SimulateHelp(head, verb, files string) string {
	text := verb + " a fake GPU fleet (in a binary built with cgo only)"
	if presets := PresetNames(); len(presets) > 0 {
		text = verb + " a fake GPU fleet: " + strings.Join(presets, ", ") + ", " + files
	}
	return WrapOption(head, text)
}
