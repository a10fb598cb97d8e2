package tool

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// IsFlag reports whether a word is a flag rather than a flag's value: it
// starts with "-", unless a digit or "." follows the dash. No flag of the
// tools starts with a digit, so "--only -1" is a bad index that the error
// can name, not a missing one, while "--simulate --json" still lacks a
// value.
func IsFlag(word string) bool {
	if !strings.HasPrefix(word, "-") {
		return false
	}
	startsNumber := len(word) > 1 && (word[1] == '.' || '0' <= word[1] && word[1] <= '9')
	return !startsNumber
}

// AppendIndices appends the comma-separated non-negative integers in vals to
// list, leaving out those already in it, so that a repeated flag adds to
// what the earlier ones chose.
func AppendIndices(list []int, flag string, vals []string) ([]int, error) {
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: %q is not a non-negative integer", flag, part)
			}
			if !slices.Contains(list, n) {
				list = append(list, n)
			}
		}
	}
	return list, nil
}

// ErrHelp is what a tool's argument parser returns for -h or --help
// (CommonFlags.Parse, ParseFlags): the tool prints its help on stdout and
// exits 0 (ArgsDone).
var ErrHelp = errors.New("help")

// ErrNoSimulation is --simulate given without a preset name or a scenario
// file: "--simulate", "--simulate=" or "--simulate --json".
var ErrNoSimulation = errors.New("--simulate needs a preset name or a scenario file")

// Args reads a command line one flag at a time, the way nvitop reads its
// own:
//
//   - "--flag=value" and "--flag value" both work;
//   - a word is a value unless IsFlag says it is a flag, so that
//     "--simulate --json" lacks its value while "--only -1" is a bad index
//     that the error can name;
//   - a flag may take several values, up to the next flag ("--only 0 1"),
//     and be repeated to add more ("--only 0 --only 1");
//   - a flag may take a value or none ("--user [NAME]").
//
// A tool calls Next, switches on Name, and takes the flag's value with at
// most one of Value, Values, OptionalValue, NoValue, Indices or Simulate;
// the next Next reads the word after what they took. NewArgparseArgs reads
// argparse's forms instead (nvgo-select's). An Args is for one goroutine.
type Args struct {
	words    []string
	next     int    // the word after the current flag and what it took
	word     string // the current flag as written
	name     string // its name: the word before any "="
	value    string // the value attached to it
	attached bool   // whether a value was attached ("--only=1", "-n2")

	isFlag   func(word string) bool
	argparse bool
	isSwitch func(name string) bool // argparse: short flags without a value
	rest     []string               // argparse: the words after "--"
	ended    bool                   // argparse: "--" was seen
}

// NewArgs returns an Args that reads words nvitop's way, IsFlag telling
// flags from values.
func NewArgs(words []string) *Args {
	return &Args{words: words, isFlag: IsFlag}
}

// NewArgparseArgs returns an Args that reads words as Python's argparse
// does: "--flag=value" and "--flag value" as NewArgs's, but also a short
// flag with its value attached ("-n2", "-n=2"), short switches clustered
// ("-S0" is "-S -0", for each name that isSwitch accepts), and "--" ending
// the flags, the words after it left for Rest. isFlag tells flags from
// values.
func NewArgparseArgs(words []string, isFlag func(word string) bool, isSwitch func(name string) bool) *Args {
	// a copy: unclustering switches inserts words
	return &Args{words: slices.Clone(words), isFlag: isFlag, argparse: true, isSwitch: isSwitch}
}

// Next moves to the next flag and reports whether there is one: false at
// the end, and for NewArgparseArgs at "--".
func (a *Args) Next() bool {
	if a.next >= len(a.words) {
		return false
	}
	a.word = a.words[a.next]
	a.next++
	a.name, a.value, a.attached = a.word, "", false
	switch {
	case a.argparse && a.word == "--":
		a.rest, a.ended = a.words[a.next:], true
		a.next = len(a.words)
		return false
	case !a.argparse || strings.HasPrefix(a.word, "--"):
		a.name, a.value, a.attached = strings.Cut(a.word, "=")
	case len(a.word) > 2 && a.word[0] == '-' && a.isFlag(a.word):
		// a short flag with something attached: its value, or more switches
		a.name, a.value, a.attached = a.word[:2], strings.TrimPrefix(a.word[2:], "="), true
		if a.word[2] != '=' && a.isSwitch(a.name) {
			a.words = slices.Insert(a.words, a.next, "-"+a.word[2:])
			a.value, a.attached = "", false
		}
	}
	return true
}

// Name is the current flag's name as written: "--only" for "--only=0,1",
// "-n" for "-n2" (NewArgparseArgs).
func (a *Args) Name() string { return a.name }

// Word is the current word whole, as written: "--only=0,1".
func (a *Args) Word() string { return a.word }

// valueFollows reports whether the next word is a value: not a flag, and
// for NewArgparseArgs not "--".
func (a *Args) valueFollows() bool {
	if a.next >= len(a.words) {
		return false
	}
	w := a.words[a.next]
	return !a.isFlag(w) && !(a.argparse && w == "--")
}

// take returns the next word and moves past it.
func (a *Args) take() string {
	a.next++
	return a.words[a.next-1]
}

// OptionalValue returns the current flag's value, attached or the next
// word, and false when it has none ("--user" before a flag or at the end).
func (a *Args) OptionalValue() (string, bool) {
	switch {
	case a.attached:
		return a.value, true
	case a.valueFollows():
		return a.take(), true
	}
	return "", false
}

// Value returns the current flag's one value, attached or the next word;
// an error "NAME needs a value" when there is none.
func (a *Args) Value() (string, error) {
	if v, ok := a.OptionalValue(); ok {
		return v, nil
	}
	return "", fmt.Errorf("%s needs a value", a.name)
}

// Values returns the current flag's values: the one attached, or else the
// words up to the next flag (none before a flag or at the end).
func (a *Args) Values() []string {
	if a.attached {
		return []string{a.value}
	}
	var vals []string
	for a.valueFollows() {
		vals = append(vals, a.take())
	}
	return vals
}

// NoValue returns an error "NAME takes no value" when a value is attached
// to the current flag, a switch ("--json=1").
func (a *Args) NoValue() error {
	if a.attached {
		return fmt.Errorf("%s takes no value", a.name)
	}
	return nil
}

// Indices appends the current flag's values, comma-separated non-negative
// integers, to list as AppendIndices does: "--only 0 1", "--only=0,1". what
// names one in the error for none: "--only needs at least one GPU index".
func (a *Args) Indices(list []int, what string) ([]int, error) {
	vals := a.Values()
	if len(vals) == 0 {
		return nil, fmt.Errorf("%s needs at least one %s", a.name, what)
	}
	return AppendIndices(list, a.name, vals)
}

// Simulate returns the value of --simulate, a preset name or a scenario
// file, or ErrNoSimulation when it has none or an empty one. A file named
// like a flag can be given as ./--json.
func (a *Args) Simulate() (string, error) {
	v, err := a.Value()
	if err != nil || v == "" {
		return "", ErrNoSimulation
	}
	return v, nil
}

// Unknown returns the error for a current word that no flag of the tool
// matches: unknown argument "WORD".
func (a *Args) Unknown() error { return fmt.Errorf("unknown argument %q", a.word) }

// Rest returns the words after "--" and whether there was one
// (NewArgparseArgs; an Args from NewArgs has no "--").
func (a *Args) Rest() ([]string, bool) { return a.rest, a.ended }
