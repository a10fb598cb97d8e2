package nvgo_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
)

const (
	kib = 1 << 10
	mib = 1 << 20
	gib = 1 << 30
	tib = 1 << 40
	pib = 1 << 50
)

// The expected strings were checked against nvitop's bytes2human.
func TestBytesStringFollowsNvitopTiers(t *testing.T) {
	tests := []struct {
		name string
		in   uint64
		want string
	}{
		{"zero is 0B", 0, "0B"},
		{"one byte is 1B", 1, "1B"},
		{"512 bytes stay in bytes", 512, "512B"},
		{"1023 bytes is the last plain byte count", kib - 1, "1023B"},
		{"1024 bytes is 1KiB", kib, "1KiB"},
		{"a half KiB rounds to even upwards", 1536, "2KiB"},
		{"a half KiB rounds to even downwards", 2560, "2KiB"},
		{"3KiB is whole KiB", 3 * kib, "3KiB"},
		{"one byte below 1MiB rounds up to 1024KiB", mib - 1, "1024KiB"},
		{"1MiB has two decimals", mib, "1.00MiB"},
		{"1.125MiB rounds half to even at two decimals", 1179648, "1.12MiB"},
		{"1.375MiB rounds half to even upwards", 1441792, "1.38MiB"},
		{"8.5MiB has two decimals", 8*mib + mib/2, "8.50MiB"},
		{"one byte below 100MiB prints 100.00MiB", 100*mib - 1, "100.00MiB"},
		{"100MiB switches to one decimal", 100 * mib, "100.0MiB"},
		{"150MiB has one decimal", 150 * mib, "150.0MiB"},
		{"one byte below 1000MiB prints 1000.0MiB", 1000*mib - 1, "1000.0MiB"},
		{"1000MiB switches to whole MiB", 1000 * mib, "1000MiB"},
		{"1500MiB is whole MiB", 1500 * mib, "1500MiB"},
		{"1.5GiB is still whole MiB", 1536 * mib, "1536MiB"},
		{"8862MiB is whole MiB", 8862 * mib, "8862MiB"},
		{"a half MiB rounds to even", 1000*mib + mib/2, "1000MiB"},
		{"one byte below 20GiB prints 20480MiB", 20*gib - 1, "20480MiB"},
		{"20GiB switches to GiB with two decimals", 20 * gib, "20.00GiB"},
		{"one byte below 100GiB prints 100.00GiB", 100*gib - 1, "100.00GiB"},
		{"100GiB switches to one decimal", 100 * gib, "100.0GiB"},
		{"one byte below 1000GiB prints 1000.0GiB", 1000*gib - 1, "1000.0GiB"},
		{"1000GiB switches to TiB", 1000 * gib, "0.98TiB"},
		{"1TiB has two decimals", tib, "1.00TiB"},
		{"2.5TiB has two decimals", 2*tib + tib/2, "2.50TiB"},
		{"one byte below 100TiB prints 100.00TiB", 100*tib - 1, "100.00TiB"},
		{"100TiB switches to one decimal", 100 * tib, "100.0TiB"},
		{"one byte below 1000TiB prints 1000.0TiB", 1000*tib - 1, "1000.0TiB"},
		{"1000TiB switches to PiB", 1000 * tib, "0.98PiB"},
		{"1PiB has two decimals", pib, "1.00PiB"},
		{"one byte below 100PiB prints 100.00PiB", 100*pib - 1, "100.00PiB"},
		{"100PiB switches to one decimal", 100 * pib, "100.0PiB"},
		{"2^53+1 bytes is in PiB", 1<<53 + 1, "8.00PiB"},
		{"the largest uint64 prints in PiB", math.MaxUint64, "16384.0PiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.Bytes(tt.in).String(); got != tt.want {
				t.Errorf("Bytes(%d).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestBytesUnitHelpers(t *testing.T) {
	tests := []struct {
		name     string
		in       nvgo.Bytes
		mib, gib float64
	}{
		{"zero is zero in every unit", 0, 0, 0},
		{"1.5GiB is 1536MiB", 1536 * mib, 1536, 1.5},
		{"one byte is a fraction of a MiB", 1, 1.0 / mib, 1.0 / gib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.MiB(); got != tt.mib {
				t.Errorf("MiB() = %v, want %v", got, tt.mib)
			}
			if got := tt.in.GiB(); got != tt.gib {
				t.Errorf("GiB() = %v, want %v", got, tt.gib)
			}
		})
	}
}

func TestParseBytesReadsHumanSizes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint64
	}{
		{"a plain integer is bytes", "500", 500},
		{"zero is zero", "0", 0},
		{"leading zeros are ignored", "007", 7},
		{"a B suffix is bytes", "500B", 500},
		{"a lower-case b is bytes", "1b", 1},
		{"k is decimal", "10k", 10_000},
		{"ki is binary", "10ki", 10_240},
		{"KB is decimal", "1KB", 1000},
		{"KiB is binary", "1KiB", kib},
		{"M is a million", "1M", 1_000_000},
		{"MiB is 2^20", "1MiB", mib},
		{"g is decimal", "4g", 4_000_000_000},
		{"GiB with a fraction", "1.5GiB", 1610612736},
		{"T is decimal", "2T", 2_000_000_000_000},
		{"tib in lower case is binary", "1tib", tib},
		{"PB is decimal", "1PB", 1_000_000_000_000_000},
		{"PiB is binary", "3PiB", 3 * pib},
		{"mixed case works", "1mIb", mib},
		{"surrounding spaces are ignored", "  42  ", 42},
		{"tabs and newlines around are ignored", "\t42\n", 42},
		{"a space between number and unit is allowed", "42 KiB", 42 * kib},
		{"a leading plus is allowed", "+42", 42},
		{"a space after the plus is allowed", "+ 42", 42},
		{"half a KiB is 512", "0.5KiB", 512},
		{"fractions of a byte are dropped", "1.5", 1},
		{"fractions of a byte are dropped after scaling", "1.0001k", 1000},
		{"decimal fractions are exact", "2.01k", 2010},
		{"decimal fractions are exact for G", "4.1G", 4_100_000_000},
		{"a long fraction is exact", "1.00000000000000000000000000000000000000000000000000000000000009", 1},
		{"a fraction just under a whole byte stays under", "0.99999999999999999999999999999999999999999999999999999999KiB", 1023},
		{"the largest uint64 parses", "18446744073709551615", math.MaxUint64},
		{"the largest whole PiB below 2^64 parses", "16383PiB", 16383 * pib},
		{"a fraction a hair below 2^64 parses", "16383.999999999999999999PiB", math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nvgo.ParseBytes(tt.in)
			if err != nil {
				t.Fatalf("ParseBytes(%q) error: %v", tt.in, err)
			}
			if uint64(got) != tt.want {
				t.Errorf("ParseBytes(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseBytesRejectsBadSizes(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"an empty string", ""},
		{"only spaces", "   "},
		{"only a plus", "+"},
		{"a unit without a number", "KiB"},
		{"a negative number", "-1"},
		{"a negative number with a unit", "-1GiB"},
		{"an exponent", "1e3"},
		{"an upper-case exponent", "1E3"},
		{"a trailing decimal point", "1."},
		{"a leading decimal point", ".5"},
		{"two decimal points", "1.5.5"},
		{"a thousands separator", "1,000"},
		{"a hex number", "0x10"},
		{"two plus signs", "++1"},
		{"an unknown unit", "1EiB"},
		{"a doubled B", "1KiBB"},
		{"an i without a prefix", "1iB"},
		{"a space inside the unit", "1 Ki B"},
		{"a unit before the number", "KiB1"},
		{"garbage", "lots"},
		{"a non-ASCII letter that upper-cases to I", "1kıb"},
		{"a non-ASCII digit", "١"},
		{"2^64 bytes", "18446744073709551616"},
		{"a huge integer", strings.Repeat("9", 1000)},
		{"16384PiB, which is 2^64", "16384PiB"},
		{"a decimal unit that overflows", "18446744073709552K"},
		{"a fraction a hair above 2^64", "16384.000000000000000001PiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := nvgo.ParseBytes(tt.in)
			if err == nil {
				t.Fatalf("ParseBytes(%q) = %d, want an error", tt.in, got)
			}
			if !errors.Is(err, nvgo.ErrBadSize) {
				t.Errorf("ParseBytes(%q) error %v does not wrap ErrBadSize", tt.in, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tt.in)) {
				t.Errorf("ParseBytes(%q) error %q does not name the input", tt.in, err)
			}
		})
	}
}

func TestParseBytesRoundTripsBytesString(t *testing.T) {
	// Bytes.String rounds, so the round trip is exact below 1KiB and for whole
	// MiB in the whole-MiB tier, and otherwise within the printed precision.
	tests := []struct {
		name   string
		in     uint64
		within uint64
	}{
		{"bytes round-trip exactly", 1000, 0},
		{"whole MiB in the MiB tier round-trip exactly", 8862 * mib, 0},
		{"KiB round-trip within half a KiB", 1536, kib / 2},
		{"two-decimal MiB round-trip within 0.005MiB", 8*mib + 12345, mib / 200},
		{"one-decimal MiB round-trip within 0.05MiB", 150*mib + 12345, mib / 20},
		{"whole MiB round-trip within half a MiB", 8862*mib + 12345, mib / 2},
		{"two-decimal GiB round-trip within 0.005GiB", 24*gib + 12345, gib / 200},
		{"one-decimal GiB round-trip within 0.05GiB", 500*gib + 12345, gib / 20},
		{"TiB round-trip within 0.005TiB", 3*tib + 12345, tib / 200},
		{"PiB round-trip within 0.05PiB", 5000*pib + 12345, pib / 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := nvgo.Bytes(tt.in).String()
			got, err := nvgo.ParseBytes(s)
			if err != nil {
				t.Fatalf("ParseBytes(%q) error: %v", s, err)
			}
			diff := max(uint64(got), tt.in) - min(uint64(got), tt.in)
			if diff > tt.within {
				t.Errorf("ParseBytes(Bytes(%d).String() = %q) = %d, off by %d, want at most %d", tt.in, s, got, diff, tt.within)
			}
		})
	}
}

func TestPercentString(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"zero is 0%", 0, "0%"},
		{"negative zero is 0%", math.Copysign(0, -1), "0%"},
		{"a whole number has no decimals", 5, "5%"},
		{"100 is 100%", 100, "100%"},
		{"over 100 is allowed", 250, "250%"},
		{"a fraction has one decimal", 5.2, "5.2%"},
		{"a tie rounds to even", 5.25, "5.2%"},
		{"a small fraction prints 0.0%", 0.04, "0.0%"},
		{"just below 100 rounds to 100.0%", 99.96, "100.0%"},
		{"NaN is N/A", math.NaN(), "N/A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.Percent(tt.in).String(); got != tt.want {
				t.Errorf("Percent(%v).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPowerInMilliWattsString(t *testing.T) {
	tests := []struct {
		name string
		in   nvgo.MilliWatts
		want string
	}{
		{"zero is 0W", 0, "0W"},
		{"below half a watt rounds down", 499, "0W"},
		{"half a watt rounds to even zero", 500, "0W"},
		{"1.5W rounds to even 2W", 1500, "2W"},
		{"2.5W rounds to even 2W", 2500, "2W"},
		{"66.4W is 66W", 66400, "66W"},
		{"just over a half rounds up", 66501, "67W"},
		{"250W is 250W", 250000, "250W"},
		{"700W is 700W", 700000, "700W"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("MilliWatts(%d).String() = %q, want %q", uint64(tt.in), got, tt.want)
			}
		})
	}
	if got := nvgo.MilliWatts(66400).Watts(); got != 66.4 {
		t.Errorf("MilliWatts(66400).Watts() = %v, want 66.4", got)
	}
}

func TestPowerStatus(t *testing.T) {
	na := nvgo.NA[nvgo.MilliWatts](nvgo.NotSupported, nil)
	tests := []struct {
		name         string
		usage, limit nvgo.Value[nvgo.MilliWatts]
		want         string
	}{
		{"both real", nvgo.Some[nvgo.MilliWatts](66400), nvgo.Some[nvgo.MilliWatts](250000), "66W / 250W"},
		{"usage N/A", na, nvgo.Some[nvgo.MilliWatts](250000), "N/A / 250W"},
		{"limit N/A", nvgo.Some[nvgo.MilliWatts](70000), na, "70W / N/A"},
		{"both N/A", na, nvgo.Value[nvgo.MilliWatts]{}, "N/A / N/A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.PowerStatus(tt.usage, tt.limit); got != tt.want {
				t.Errorf("PowerStatus = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSmallUnitsFormat(t *testing.T) {
	tests := []struct {
		name string
		in   fmt.Stringer
		want string
	}{
		{"a temperature prints with C", nvgo.Celsius(41), "41C"},
		{"a negative temperature keeps its sign", nvgo.Celsius(-5), "-5C"},
		{"a clock prints with MHz", nvgo.MHz(1410), "1410MHz"},
		{"a zero clock is 0MHz", nvgo.MHz(0), "0MHz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.in.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKiBPerSecondFormatsAsBytesPerSecond(t *testing.T) {
	tests := []struct {
		name string
		in   uint64
		want string
	}{
		{"zero is 0B/s", 0, "0B/s"},
		{"one KiB/s", 1, "1KiB/s"},
		{"512 KiB/s", 512, "512KiB/s"},
		{"1024 KiB/s is 1.00MiB/s", 1024, "1.00MiB/s"},
		{"1.5GiB/s is in whole MiB", 1536 * 1024, "1536MiB/s"},
		{"25GiB/s has two decimals", 25 * 1024 * 1024, "25.00GiB/s"},
		{"the largest rate that fits 64-bit bytes", math.MaxUint64 / 1024, "16384.0PiB/s"},
		{"a rate beyond 2^64 bytes/s does not wrap", math.MaxUint64, "16777216.0PiB/s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.KiBPerSecond(tt.in).String(); got != tt.want {
				t.Errorf("KiBPerSecond(%d).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if got := nvgo.KiBPerSecond(2).BytesPerSecond(); got != 2048 {
		t.Errorf("KiBPerSecond(2).BytesPerSecond() = %v, want 2048", got)
	}
}

func TestHumanDuration(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		name string
		in   time.Duration
		want string
	}{
		{"zero is 0:00", 0, "0:00"},
		{"a negative duration is 0:00", -time.Hour, "0:00"},
		{"the fraction of a second is dropped", 59*time.Second + 999*time.Millisecond, "0:59"},
		{"one minute", time.Minute, "1:00"},
		{"seconds have two digits", 5*time.Minute + 7*time.Second, "5:07"},
		{"just below an hour", time.Hour - time.Second, "59:59"},
		{"one hour switches to H:MM:SS", time.Hour, "1:00:00"},
		{"hours beyond a day keep counting", 46*time.Hour + 13*time.Minute + 33*time.Second, "46:13:33"},
		{"just below four days", 4*day - time.Second, "95:59:59"},
		{"four days switches to days", 4 * day, "4.0 days"},
		{"four and a half days", 4*day + 12*time.Hour, "4.5 days"},
		{"a tie in days rounds to even", 4*day + 6*time.Hour, "4.2 days"},
		{"a hundred days", 100 * day, "100.0 days"},
		{"the longest duration", math.MaxInt64, "106752.0 days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.HumanDuration(tt.in); got != tt.want {
				t.Errorf("HumanDuration(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCommandJoin(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "my prog")
	if err := os.WriteFile(exe, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []string
		want string
	}{
		{"no arguments give an empty string", nil, ""},
		{"plain words are bare", []string{"python3", "train.py", "--lr=0.1"}, "python3 train.py --lr=0.1"},
		{"an empty argument is two double quotes", []string{"a", ""}, `a ""`},
		{"a space is double-quoted", []string{"python3", "-c", "import os; print(os.getpid())"}, `python3 -c "import os; print(os.getpid())"`},
		{"a space and a double quote are single-quoted", []string{"echo", `say "hi" now`}, `echo 'say "hi" now'`},
		{"a dollar is single-quoted", []string{"echo", "$HOME"}, `echo '$HOME'`},
		{"a backslash is single-quoted", []string{"dir", `C:\Program Files`}, `dir 'C:\Program Files'`},
		{"a dollar and a single quote are escaped in double quotes", []string{"echo", "it's $x"}, `echo "it's \$x"`},
		{"a newline is written as \\n in double quotes", []string{"printf", "a\nb"}, `printf "a\nb"`},
		{"backslash, quote and dollar are all escaped", []string{"x", "'\\\"$\n"}, `x "'\\\"\$\n"`},
		{"a single quote without a space stays bare", []string{"echo", "it's"}, "echo it's"},
		{"double quotes without a space stay bare", []string{"echo", `"hi"`}, `echo "hi"`},
		{"a tab is not a space and stays bare", []string{"echo", "a\tb"}, "echo a\tb"},
		{"one element is returned as it is", []string{"python train.py --lr 0.1"}, "python train.py --lr 0.1"},
		{"one empty element is returned as it is", []string{""}, ""},
		{"one element with a dollar is returned as it is", []string{"worker $1"}, "worker $1"},
		{"a newline in one element is written as \\n", []string{"title\nsecond"}, `title\nsecond`},
		{"one element naming an existing absolute file is quoted", []string{exe}, `"` + exe + `"`},
		{"one element naming a directory is returned as it is", []string{dir + "/"}, dir + "/"},
		{"one element naming a missing absolute file is returned as it is", []string{filepath.Join(dir, "no such file")}, filepath.Join(dir, "no such file")},
		{"one element naming a relative file is returned as it is", []string{"my prog"}, "my prog"},
		{"an existing file among several arguments is quoted as usual", []string{exe, "-v"}, `"` + exe + `" -v`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nvgo.CommandJoin(tt.in); got != tt.want {
				t.Errorf("CommandJoin(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

var byteUnits = []struct {
	name string
	mult uint64
}{
	{"", 1}, {"B", 1},
	{"KiB", kib}, {"MiB", mib}, {"GiB", gib}, {"TiB", tib}, {"PiB", pib},
	{"Ki", kib}, {"gi", gib},
	{"K", 1e3}, {"MB", 1e6}, {"g", 1e9}, {"TB", 1e12}, {"P", 1e15},
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"0", "500B", "10k", "10ki", "1.5GiB", " +4 g ", "-1", "1e3", "", "18446744073709551616", "1kı"} {
		f.Add(s, uint64(len(s)))
	}
	f.Add("42", uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, s string, n uint64) {
		got, err := nvgo.ParseBytes(s)
		if err != nil {
			if !errors.Is(err, nvgo.ErrBadSize) {
				t.Errorf("ParseBytes(%q) error %v does not wrap ErrBadSize", s, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Errorf("ParseBytes(%q) error %q does not name the input", s, err)
			}
		}

		// A plain integer means the same to ParseBytes as to strconv.
		if v, perr := strconv.ParseUint(s, 10, 64); perr == nil {
			if err != nil || uint64(got) != v {
				t.Errorf("ParseBytes(%q) = %d, %v; strconv says %d", s, got, err, v)
			}
		} else if s != "" && strings.Trim(s, "0123456789") == "" && err == nil {
			t.Errorf("ParseBytes(%q) = %d, but strconv rejects it: %v", s, got, perr)
		}

		// n with an exact unit parses to n times the unit, or overflows.
		for _, u := range byteUnits {
			in := strconv.FormatUint(n, 10) + u.name
			got, err := nvgo.ParseBytes(in)
			if n > math.MaxUint64/u.mult {
				if err == nil {
					t.Errorf("ParseBytes(%q) = %d, want an overflow error", in, got)
				}
				continue
			}
			if err != nil || uint64(got) != n*u.mult {
				t.Errorf("ParseBytes(%q) = %d, %v, want %d", in, got, err, n*u.mult)
			}
		}

		// Whatever Bytes prints, ParseBytes reads back, except near 2^64-1,
		// which rounds up to 16384.0PiB, that is 2^64.
		if p := nvgo.Bytes(n).String(); p != "16384.0PiB" {
			if _, err := nvgo.ParseBytes(p); err != nil {
				t.Errorf("ParseBytes(Bytes(%d).String()) error: %v", n, err)
			}
		}
	})
}

func FuzzCommandJoin(f *testing.F) {
	for _, s := range []string{"", "python3\x00train.py", "a\nb", "x\x00it's $x\n", "/bin/sh", "\x00", "echo\x00\"a b\"\x00$'\\'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cmdline string) {
		// /proc/PID/cmdline separates arguments with NUL bytes.
		args := strings.Split(cmdline, "\x00")
		got := nvgo.CommandJoin(args)
		if strings.Contains(got, "\n") {
			t.Errorf("CommandJoin(%q) = %q has a raw newline", args, got)
		}
		if len(args) > 1 && strings.Count(got, " ") < len(args)-1 {
			t.Errorf("CommandJoin(%q) = %q has fewer spaces than argument gaps", args, got)
		}
	})
}
