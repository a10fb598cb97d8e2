package nvgo

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The formatting here follows nvitop (nvitop/api/utils.py and process.py)
// so that nvgo prints the same strings a user already reads in nvitop.

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	tib = 1 << 40
	pib = 1 << 50
)

// Bytes is an amount of memory in bytes. It prints in nvitop's human form
// (see Bytes.String) and marshals to JSON as a plain number of bytes.
type Bytes uint64

// String returns b in nvitop's human form: "512B" below 1 KiB; whole KiB
// ("3KiB") below 1 MiB; "8.50MiB" below 100 MiB; "150.0MiB" below 1000 MiB;
// whole MiB ("8862MiB") below 20 GiB; "20.00GiB" below 100 GiB; "150.0GiB"
// below 1000 GiB; then the same two decimal tiers for TiB and PiB. Whole
// units round half to even, and decimals round to nearest, as nvitop's
// round() does.
func (b Bytes) String() string { return bytesHuman(uint64(b)) }

// MiB returns b in mebibytes (units of 1,048,576 bytes).
func (b Bytes) MiB() float64 { return float64(b) / mib }

// GiB returns b in gibibytes (units of 1,073,741,824 bytes).
func (b Bytes) GiB() float64 { return float64(b) / gib }

func bytesHuman(b uint64) string {
	switch {
	case b < kib:
		return strconv.FormatUint(b, 10) + "B"
	case b < mib:
		return strconv.FormatUint(divRoundEven(b, 10), 10) + "KiB"
	case b < 100*mib:
		return fixed(b, mib, 2) + "MiB"
	case b < 1000*mib:
		return fixed(b, mib, 1) + "MiB"
	case b < 20*gib:
		return strconv.FormatUint(divRoundEven(b, 20), 10) + "MiB"
	case b < 100*gib:
		return fixed(b, gib, 2) + "GiB"
	case b < 1000*gib:
		return fixed(b, gib, 1) + "GiB"
	case b < 100*tib:
		return fixed(b, tib, 2) + "TiB"
	case b < 1000*tib:
		return fixed(b, tib, 1) + "TiB"
	case b < 100*pib:
		return fixed(b, pib, 2) + "PiB"
	}
	return fixed(b, pib, 1) + "PiB"
}

// divRoundEven returns b / 2^shift rounded half to even, like Python's round().
func divRoundEven(b uint64, shift uint) uint64 {
	q, r, half := b>>shift, b&(1<<shift-1), uint64(1)<<(shift-1)
	if r > half || (r == half && q&1 == 1) {
		q++
	}
	return q
}

// fixed formats b/unit with prec decimals. Dividing by a power of two is exact
// in float64 and strconv rounds the exact value, as Python's round(x, n) does.
func fixed(b uint64, unit float64, prec int) string {
	return strconv.FormatFloat(float64(b)/unit, 'f', prec, 64)
}

// ErrBadSize is the error ParseBytes wraps when it cannot read a size.
var ErrBadSize = errors.New("invalid size")

// sizeUnits maps a unit, upper-cased and without its optional trailing "B",
// to its size in bytes. K, M, G, T and P are decimal; Ki ... Pi are binary.
var sizeUnits = map[string]uint64{
	"":   1,
	"K":  1e3,
	"M":  1e6,
	"G":  1e9,
	"T":  1e12,
	"P":  1e15,
	"KI": kib,
	"MI": mib,
	"GI": gib,
	"TI": tib,
	"PI": pib,
}

// ParseBytes reads a size in bytes written the way nvitop's human2bytes reads
// it. It ignores case and surrounding spaces, and accepts an optional leading
// "+", a decimal number ("1.5") and an optional unit with an optional trailing
// "B": K, M, G, T and P are powers of 1000 ("10k" is 10000) and Ki, Mi, Gi,
// Ti and Pi powers of 1024 ("10KiB" is 10240). A number without a unit is in
// bytes. Fractions of a byte are dropped ("1.5" is 1).
//
// Negative numbers, exponents, empty strings, unknown units and sizes above
// 2^64-1 bytes are errors that wrap ErrBadSize and quote s.
//
// Unlike nvitop, which multiplies in floating point, ParseBytes computes the
// exact value: "2.01k" is 2010, where nvitop gets 2009.
func ParseBytes(s string) (Bytes, error) {
	bad := func(why string) (Bytes, error) {
		return 0, fmt.Errorf("parse size %q: %w: %s", s, ErrBadSize, why)
	}
	rest := strings.TrimSpace(s)
	if r, ok := strings.CutPrefix(rest, "+"); ok {
		rest = strings.TrimLeftFunc(r, unicode.IsSpace)
	}
	whole, rest := cutDigits(rest)
	if whole == "" {
		return bad("want a non-negative decimal number")
	}
	frac := ""
	if r, ok := strings.CutPrefix(rest, "."); ok {
		if frac, rest = cutDigits(r); frac == "" {
			return bad("want digits after the decimal point")
		}
	}
	mult, ok := sizeUnits[strings.TrimSuffix(asciiUpper(strings.TrimSpace(rest)), "B")]
	if !ok {
		return bad("want a unit of B, K, M, G, T, P, KiB, MiB, GiB, TiB or PiB")
	}

	// Bound the work on absurd input. 2^64 has 20 digits, and every unit is at
	// least 1. Keeping 50 fraction digits is exact: with k >= j digits kept and
	// a unit of 2^j or 10^j, the dropped digits add less than the gap between
	// the kept value and the next whole byte.
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 20 {
		return bad("more than 2^64-1 bytes")
	}
	frac = strings.TrimRight(frac[:min(len(frac), 50)], "0")

	// n = floor((whole + 0.frac) * mult), computed exactly.
	n, _ := new(big.Int).SetString("0"+whole+frac, 10)
	n.Mul(n, new(big.Int).SetUint64(mult))
	if frac != "" {
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil))
	}
	if !n.IsUint64() {
		return bad("more than 2^64-1 bytes")
	}
	return Bytes(n.Uint64()), nil
}

// asciiUpper upper-cases ASCII letters only, so that no other script's letter
// can turn into a unit (strings.ToUpper maps the dotless i to I).
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// cutDigits splits s after its leading ASCII digits.
func cutDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// Percent is a percentage: 100 means 100%, and it may exceed 100 (e.g. CPU
// use across several cores).
type Percent float64

// String returns p as nvitop prints utilization: "5%" for a whole number and
// one decimal otherwise ("5.2%"). NaN, which comes from a 0/0 ratio, prints
// "N/A".
func (p Percent) String() string {
	f := float64(p)
	switch {
	case math.IsNaN(f):
		return "N/A"
	case f == 0:
		return "0%" // also for -0
	case f == math.Trunc(f):
		return strconv.FormatFloat(f, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + "%"
}

// MilliWatts is electrical power in milliwatts, the unit NVML reports.
type MilliWatts uint64

// String returns m in whole watts, rounded half to even as nvitop does
// ("66W" for 66400 mW).
func (m MilliWatts) String() string {
	w, r := uint64(m)/1000, uint64(m)%1000
	if r > 500 || (r == 500 && w&1 == 1) {
		w++
	}
	return strconv.FormatUint(w, 10) + "W"
}

// MilliJoules is an energy in millijoules (NVML's unit).
type MilliJoules uint64

// String returns the energy in the largest unit that keeps it at least 1,
// to three significant figures: "950mJ", "1.23kJ", "4.56MJ".
func (e MilliJoules) String() string {
	v := float64(e)
	for _, u := range []string{"mJ", "J", "kJ", "MJ", "GJ"} {
		if v < 1000 || u == "GJ" {
			if u == "mJ" {
				return strconv.FormatUint(uint64(e), 10) + u
			}
			return strconv.FormatFloat(v, 'g', 3, 64) + u
		}
		v /= 1000
	}
	return ""
}

// Joules returns e in joules.
func (e MilliJoules) Joules() float64 { return float64(e) / 1000 }

// Watts returns m in watts.
func (m MilliWatts) Watts() float64 { return float64(m) / 1000 }

// PowerStatus returns power draw over power limit the way nvitop's
// Device.power_status prints it, e.g. "66W / 250W". Either side prints "N/A"
// when it is N/A.
func PowerStatus(usage, limit Value[MilliWatts]) string {
	return usage.String() + " / " + limit.String()
}

// Celsius is a temperature in degrees Celsius.
type Celsius int32

// String returns c as nvitop prints it, e.g. "41C".
func (c Celsius) String() string { return strconv.FormatInt(int64(c), 10) + "C" }

// MHz is a clock frequency in megahertz.
type MHz uint32

// String returns f with its unit, e.g. "1410MHz".
func (f MHz) String() string { return strconv.FormatUint(uint64(f), 10) + "MHz" }

// KiBPerSecond is a data rate in KiB (1024 bytes) per second, the unit NVML
// uses for PCIe and NVLink throughput.
type KiBPerSecond uint64

// String returns the rate in bytes per second in the form of Bytes.String
// followed by "/s", e.g. "1.50GiB/s" or "512KiB/s".
func (k KiBPerSecond) String() string {
	if uint64(k) > math.MaxUint64/kib {
		// Over 2^64 bytes/s; only reachable from a bogus counter, but print it
		// in the top tier instead of wrapping around.
		return strconv.FormatFloat(float64(k)/(pib/kib), 'f', 1, 64) + "PiB/s"
	}
	return bytesHuman(uint64(k)*kib) + "/s"
}

// BytesPerSecond returns the rate in bytes per second.
func (k KiBPerSecond) BytesPerSecond() float64 { return float64(k) * kib }

// HumanDuration returns d as nvitop's timedelta2human prints it, in whole
// seconds (the fraction is dropped): "M:SS" below an hour ("5:07"),
// "H:MM:SS" below four days ("46:13:33"), and days with one decimal from
// four days on ("4.5 days"). A negative d prints as zero ("0:00").
func HumanDuration(d time.Duration) string {
	secs := int64(0)
	if d > 0 {
		secs = int64(d / time.Second)
	}
	days, rem := secs/86400, secs%86400
	if days >= 4 {
		return strconv.FormatFloat(float64(days)+float64(rem)/86400, 'f', 1, 64) + " days"
	}
	h, m, s := secs/3600, secs%3600/60, secs%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// CommandJoin returns a process's command line as one line a POSIX shell user
// can read, quoting each argument the way nvitop's command_join does:
//
//   - an empty argument is written "";
//   - one without $, \, newline or space is written bare;
//   - one without $, \ or newline that has a space but no " is put in double quotes;
//   - otherwise one without ' or newline is put in single quotes;
//   - anything else is put in double quotes with \, " and $ escaped by a
//     backslash and each newline written as \n.
//
// A command line of one element is usually a title set with setproctitle
// (spaces and all), so it is returned as it is, unless it is the absolute path
// of an existing file, which is quoted like any argument. Unlike nvitop, a
// newline in such a title is written as \n so that the result is always one
// line. CommandJoin of no arguments is "".
func CommandJoin(args []string) string {
	if len(args) == 1 && !isAbsFile(args[0]) {
		return strings.ReplaceAll(args[0], "\n", `\n`)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

// isAbsFile reports whether p is an absolute path to an existing regular file
// (following symbolic links), like Python's os.path.isabs and os.path.isfile.
func isAbsFile(p string) bool {
	if !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

var shellEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "\n", `\n`)

// shellQuote quotes one argument for CommandJoin.
func shellQuote(s string) string {
	if s == "" {
		return `""`
	}
	if !strings.ContainsAny(s, "$\\\n") {
		if !strings.Contains(s, " ") {
			return s
		}
		if !strings.Contains(s, `"`) {
			return `"` + s + `"`
		}
	}
	if !strings.ContainsAny(s, "'\n") {
		return "'" + s + "'"
	}
	return `"` + shellEscaper.Replace(s) + `"`
}
