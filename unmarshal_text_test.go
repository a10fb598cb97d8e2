package nvgo_test

import (
	"encoding"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

// textType is a type with MarshalText and String on its value and
// UnmarshalText on its pointer, as the root package's text types are.
type textType[T any] interface {
	*T
	encoding.TextUnmarshaler
}

// checkRoundTrip checks, for one valid value v, that MarshalText gives
// String's text, that UnmarshalText of that text gives v back, and that
// encoding/json (which uses the two) round-trips it as a JSON string.
func checkRoundTrip[T interface {
	comparable
	encoding.TextMarshaler
	fmt.Stringer
}, P textType[T]](t *testing.T, v T) {
	t.Helper()
	text, err := v.MarshalText()
	if err != nil {
		t.Fatalf("%v.MarshalText(): %v", v, err)
	}
	if string(text) != v.String() {
		t.Errorf("MarshalText() = %q, String() = %q; want the same", text, v.String())
	}
	var got T
	if err := P(&got).UnmarshalText(text); err != nil {
		t.Fatalf("UnmarshalText(%q): %v", text, err)
	}
	if got != v {
		t.Errorf("UnmarshalText(%q) = %v, want %v", text, got, v)
	}

	type holder struct{ X T }
	b, err := json.Marshal(holder{v})
	if err != nil {
		t.Fatalf("json.Marshal(%v): %v", v, err)
	}
	if want := `{"X":` + strconv.Quote(v.String()) + `}`; string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
	var h holder
	if err := json.Unmarshal(b, &h); err != nil || h.X != v {
		t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, h.X, err, v)
	}
}

// checkRejects checks that UnmarshalText refuses in with an error that
// quotes the input, and leaves the value it was given untouched.
func checkRejects[T comparable, P textType[T]](t *testing.T, in string, before T) {
	t.Helper()
	got := before
	err := P(&got).UnmarshalText([]byte(in))
	if err == nil {
		t.Fatalf("UnmarshalText(%q) = %v, nil; want an error", in, got)
	}
	if q := strconv.Quote(in); !strings.Contains(err.Error(), q) {
		t.Errorf("UnmarshalText(%q) error %q does not name the input %s", in, err, q)
	}
	if got != before {
		t.Errorf("UnmarshalText(%q) failed but changed the value from %v to %v", in, before, got)
	}
}

// Every named compute mode round-trips through its text; anything else,
// the "ComputeMode(n)" of an unnamed mode included, is refused by name.
func TestComputeModeText(t *testing.T) {
	for _, m := range []nvgo.ComputeMode{nvgo.ComputeDefault, nvgo.ComputeExclusiveThread, nvgo.ComputeProhibited, nvgo.ComputeExclusiveProcess} {
		t.Run(m.String(), func(t *testing.T) { checkRoundTrip[nvgo.ComputeMode](t, m) })
	}
	for _, in := range []string{"", "Exclusive", "Default ", "ExclusiveProcess", "3", "ComputeMode(7)"} {
		t.Run("rejects "+strconv.Quote(in), func(t *testing.T) {
			checkRejects[nvgo.ComputeMode](t, in, nvgo.ComputeProhibited)
		})
	}
}

// Every performance state P0..P15 round-trips through its text; numbers
// out of range and other text are refused by name.
func TestPStateText(t *testing.T) {
	for p := nvgo.PState(0); p <= 15; p++ {
		t.Run(p.String(), func(t *testing.T) { checkRoundTrip[nvgo.PState](t, p) })
	}
	for _, in := range []string{"", "P", "P16", "P-1", "P32", "Q1", "P1.5", "P 1", "PP1"} {
		t.Run("rejects "+strconv.Quote(in), func(t *testing.T) {
			checkRejects[nvgo.PState](t, in, nvgo.PState(7))
		})
	}
}

// A compute capability round-trips through "major.minor"; text without
// exactly two integers around one dot is refused by name.
func TestComputeCapabilityText(t *testing.T) {
	for _, c := range []nvgo.ComputeCapability{{Major: 9}, {Major: 8, Minor: 6}, {Major: 10, Minor: 0}, {Major: 12, Minor: 1}, {Major: 7, Minor: 5}} {
		t.Run(c.String(), func(t *testing.T) { checkRoundTrip[nvgo.ComputeCapability](t, c) })
	}
	for _, in := range []string{"", "9", "9.", ".0", "9.0.1", "9,0", "a.b", "9 .0", "sm_90"} {
		t.Run("rejects "+strconv.Quote(in), func(t *testing.T) {
			checkRejects[nvgo.ComputeCapability](t, in, nvgo.ComputeCapability{Major: 8, Minor: 9})
		})
	}
}

// C, G and C+G round-trip through their text; anything else, "N/A" (the
// zero type's text) and other case included, is refused by name.
func TestProcessTypeText(t *testing.T) {
	for _, p := range []nvgo.ProcessType{nvgo.ProcessCompute, nvgo.ProcessGraphics, nvgo.ProcessCompute | nvgo.ProcessGraphics} {
		t.Run(p.String(), func(t *testing.T) { checkRoundTrip[nvgo.ProcessType](t, p) })
	}
	for _, in := range []string{"", "c", "g", "CG", "G+C", "M+C", "N/A", "C+G "} {
		t.Run("rejects "+strconv.Quote(in), func(t *testing.T) {
			checkRejects[nvgo.ProcessType](t, in, nvgo.ProcessGraphics)
		})
	}
}

// fuzzText checks one input of a free-text parser: a refusal names the
// input and leaves the value alone; an accepted input gives a value whose
// MarshalText parses back to the same value and the same text.
func fuzzText[T interface {
	comparable
	encoding.TextMarshaler
}, P textType[T]](t *testing.T, in string, before T, valid func(T) bool) {
	got := before
	if err := P(&got).UnmarshalText([]byte(in)); err != nil {
		if q := strconv.Quote(in); !strings.Contains(err.Error(), q) {
			t.Errorf("UnmarshalText(%q) error %q does not name the input", in, err)
		}
		if got != before {
			t.Errorf("UnmarshalText(%q) failed but changed the value to %v", in, got)
		}
		return
	}
	if !valid(got) {
		t.Fatalf("UnmarshalText(%q) accepted an invalid value %v", in, got)
	}
	text, err := got.MarshalText()
	if err != nil {
		t.Fatalf("MarshalText of %v (parsed from %q): %v", got, in, err)
	}
	var again T
	if err := P(&again).UnmarshalText(text); err != nil || again != got {
		t.Fatalf("%q parsed to %v, which marshals to %q, which parses to %v, %v", in, got, text, again, err)
	}
	if text2, _ := again.MarshalText(); string(text2) != string(text) {
		t.Fatalf("%q parsed to %v: its text %q is not stable (then %q)", in, got, text, text2)
	}
}

// Whatever text PState.UnmarshalText accepts is a state P0..P15 that
// round-trips; whatever it refuses, it names.
func FuzzPStateUnmarshalText(f *testing.F) {
	for _, s := range []string{"P0", "P15", "p7", "P16", "P-1", "P+3", "P07", "7", "P", "", "P?", "PP1", "P 1", "P9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fuzzText[nvgo.PState](t, in, nvgo.PState(3), func(p nvgo.PState) bool { return p >= 0 && p <= 15 })
	})
}

// Whatever text ComputeCapability.UnmarshalText accepts round-trips as
// "major.minor"; whatever it refuses, it names.
func FuzzComputeCapabilityUnmarshalText(f *testing.F) {
	for _, s := range []string{"9.0", "8.6", "10.0", "+9.0", "-1.-2", "09.00", "9", "9.", ".0", "9.0.1", "", "a.b", "9 .0", "99999999999999999999.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		fuzzText[nvgo.ComputeCapability](t, in, nvgo.ComputeCapability{Major: 1, Minor: 2}, func(nvgo.ComputeCapability) bool { return true })
	})
}
