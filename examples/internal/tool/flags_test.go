package tool

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// readAll reads a with the flags of a small tool, one of each kind, and
// returns what it read, "NAME=VALUE" a flag, and after them what follows
// "--" when it was there.
func readAll(a *Args) (string, error) {
	var got []string
	var only []int
	for a.Next() {
		var v any
		var err error
		switch a.Name() {
		case "--json", "-S", "-x": // switches
			v, err = "", a.NoValue()
		case "--mode", "-n": // one value
			v, err = a.Value()
		case "--user": // an optional value
			v = "(none)"
			if name, ok := a.OptionalValue(); ok {
				v = name
			}
		case "--names": // values up to the next flag
			v = a.Values()
		case "--only":
			only, err = a.Indices(only, "GPU index")
			v = only
		case "--simulate":
			v, err = a.Simulate()
		default:
			err = a.Unknown()
		}
		if err != nil {
			return strings.Join(got, " "), err
		}
		got = append(got, fmt.Sprintf("%s=%v", a.Name(), v))
	}
	if rest, ok := a.Rest(); ok {
		got = append(got, fmt.Sprintf("-- %q", rest))
	}
	return strings.Join(got, " "), nil
}

type argsCase struct {
	name    string
	words   []string
	want    string // what readAll read, when there is no error
	wantErr string // the error; "" for none
}

func (tt argsCase) run(t *testing.T, a *Args) {
	t.Helper()
	got, err := readAll(a)
	switch {
	case tt.wantErr == "" && err != nil:
		t.Fatalf("%q: %v (after %q)", tt.words, err, got)
	case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
		t.Fatalf("%q: read %q, error %v; want the error %q", tt.words, got, err, tt.wantErr)
	case tt.wantErr == "" && got != tt.want:
		t.Errorf("%q: read %q; want %q", tt.words, got, tt.want)
	}
}

func TestArgsReadsFlagsTheWayNvitopDoes(t *testing.T) {
	for _, tt := range []argsCase{
		{name: "no words read nothing", words: nil, want: ""},
		{name: "a switch", words: []string{"--json"}, want: "--json="},
		{name: "a switch with a value is an error", words: []string{"--json=1"}, wantErr: "--json takes no value"},
		{name: "a switch with an empty value is an error", words: []string{"--json="}, wantErr: "--json takes no value"},
		{name: "a value after the flag", words: []string{"--mode", "full"}, want: "--mode=full"},
		{name: "a value attached", words: []string{"--mode=full"}, want: "--mode=full"},
		{name: "an empty value attached is a value", words: []string{"--mode="}, want: "--mode="},
		{name: "only the first = splits", words: []string{"--mode=a=b"}, want: "--mode=a=b"},
		{name: "an empty word is a value", words: []string{"--mode", ""}, want: "--mode="},
		{name: "a missing value", words: []string{"--mode"}, wantErr: "--mode needs a value"},
		{name: "a flag is not a value", words: []string{"--mode", "--json"}, wantErr: "--mode needs a value"},
		{name: "a lone dash is a flag, not a value", words: []string{"--mode", "-"}, wantErr: "--mode needs a value"},
		{name: "a negative number is a value", words: []string{"--mode", "-1"}, want: "--mode=-1"},
		{name: "a negative fraction is a value", words: []string{"--mode", "-.5"}, want: "--mode=-.5"},
		{name: "--user alone has no name", words: []string{"--user"}, want: "--user=(none)"},
		{name: "--user takes a name", words: []string{"--user", "alice"}, want: "--user=alice"},
		{name: "--user=bob takes a name", words: []string{"--user=bob"}, want: "--user=bob"},
		{name: "--user= takes an empty name", words: []string{"--user="}, want: "--user="},
		{name: "--user before a flag has no name", words: []string{"--user", "--json"}, want: "--user=(none) --json="},
		{name: "--user -1 takes -1 as the name", words: []string{"--user", "-1"}, want: "--user=-1"},
		{name: "values run up to the next flag", words: []string{"--names", "a", "b", "--json"}, want: "--names=[a b] --json="},
		{name: "values run to the end", words: []string{"--names", "a", "b"}, want: "--names=[a b]"},
		{name: "no values at all", words: []string{"--names", "--json"}, want: "--names=[] --json="},
		{name: "an attached value is the only one", words: []string{"--names=a,b", "c"}, wantErr: `unknown argument "c"`},
		{name: "a word after a one-value flag's value is not its", words: []string{"--mode", "full", "extra"}, wantErr: `unknown argument "extra"`},
		{name: "--only takes several indices", words: []string{"--only", "0", "1"}, want: "--only=[0 1]"},
		{name: "--only=0,2 takes a list", words: []string{"--only=0,2"}, want: "--only=[0 2]"},
		{name: "repeated --only adds, once each, in order", words: []string{"--only", "2", "0", "--only=1,2", "--only", "0"}, want: "--only=[2 0] --only=[2 0 1] --only=[2 0 1]"},
		{name: "--only= is an empty index", words: []string{"--only="}, wantErr: `--only: "" is not a non-negative integer`},
		{name: "--only -1 names the negative index", words: []string{"--only", "-1"}, wantErr: `--only: "-1" is not a non-negative integer`},
		{name: "--only 0 -1 names the negative index after a good one", words: []string{"--only", "0", "-1"}, wantErr: `--only: "-1" is not a non-negative integer`},
		{name: "--only x is not an index", words: []string{"--only", "x"}, wantErr: `--only: "x" is not a non-negative integer`},
		{name: "--only alone needs an index", words: []string{"--only"}, wantErr: "--only needs at least one GPU index"},
		{name: "--only before a flag needs an index", words: []string{"--only", "--json"}, wantErr: "--only needs at least one GPU index"},
		{name: "--simulate takes a preset", words: []string{"--simulate", "dgx-h100"}, want: "--simulate=dgx-h100"},
		{name: "--simulate=FILE takes a file", words: []string{"--simulate=/tmp/f.json"}, want: "--simulate=/tmp/f.json"},
		{name: "--simulate -1.json takes the file", words: []string{"--simulate", "-1.json"}, want: "--simulate=-1.json"},
		{name: "--simulate ./--json takes the file named like a flag", words: []string{"--simulate", "./--json"}, want: "--simulate=./--json"},
		{name: "--simulate --json lacks its value", words: []string{"--simulate", "--json"}, wantErr: ErrNoSimulation.Error()},
		{name: "--simulate= lacks its value", words: []string{"--simulate="}, wantErr: ErrNoSimulation.Error()},
		{name: "--simulate at the end lacks its value", words: []string{"--simulate"}, wantErr: ErrNoSimulation.Error()},
		{name: "--simulate with an empty word lacks its value", words: []string{"--simulate", ""}, wantErr: ErrNoSimulation.Error()},
		{name: "a repeated flag is read each time", words: []string{"--mode", "a", "--mode=b"}, want: "--mode=a --mode=b"},
		{name: "an unknown flag is named whole", words: []string{"--frobnicate=1"}, wantErr: `unknown argument "--frobnicate=1"`},
		{name: "a stray word is unknown", words: []string{"alice"}, wantErr: `unknown argument "alice"`},
		{name: "a short flag with something attached is unknown", words: []string{"-n2"}, wantErr: `unknown argument "-n2"`},
		{name: "-- is unknown, not an end of flags", words: []string{"--", "cmd"}, wantErr: `unknown argument "--"`},
		{name: "an empty word is unknown", words: []string{""}, wantErr: `unknown argument ""`},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, NewArgs(tt.words)) })
	}
}

func TestArgsReadsFlagsTheWayArgparseDoes(t *testing.T) {
	isSwitch := func(name string) bool { return name == "-S" || name == "-x" || name == "--json" }
	for _, tt := range []argsCase{
		{name: "a long flag reads as nvitop's", words: []string{"--mode=full", "--names", "a", "b"}, want: "--mode=full --names=[a b]"},
		{name: "a short flag takes the next word", words: []string{"-n", "2"}, want: "-n=2"},
		{name: "a short flag takes what is attached", words: []string{"-n2"}, want: "-n=2"},
		{name: "a short flag takes what follows =", words: []string{"-n=2"}, want: "-n=2"},
		{name: "a short flag takes an attached negative number", words: []string{"-n-2"}, want: "-n=-2"},
		{name: "short switches cluster", words: []string{"-Sx"}, want: "-S= -x="},
		{name: "a cluster may end in a flag with a value", words: []string{"-Sn2"}, want: "-S= -n=2"},
		{name: "a switch with = has a value", words: []string{"-S=1"}, wantErr: "-S takes no value"},
		{name: "a cluster with an unknown switch names it", words: []string{"-Sq"}, wantErr: `unknown argument "-q"`},
		{name: "-- ends the flags", words: []string{"-S", "--", "cmd", "--json", "-n"}, want: `-S= -- ["cmd" "--json" "-n"]`},
		{name: "-- may end them with nothing after", words: []string{"--"}, want: `-- []`},
		{name: "-- is not a value", words: []string{"-n", "--", "cmd"}, wantErr: "-n needs a value"},
		{name: "values stop at --", words: []string{"--names", "a", "--", "b"}, want: `--names=[a] -- ["b"]`},
		{name: "a negative number alone is a stray word", words: []string{"-1"}, wantErr: `unknown argument "-1"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			words := slices.Clone(tt.words)
			tt.run(t, NewArgparseArgs(tt.words, IsFlag, isSwitch))
			if !slices.Equal(words, tt.words) {
				t.Errorf("the words changed: %q, from %q", tt.words, words)
			}
		})
	}
	t.Run("-- is no value even where isFlag would take it for one", func(t *testing.T) {
		dashesAreValues := func(w string) bool { return IsFlag(w) && w != "--" }
		argsCase{words: []string{"-n", "--", "cmd"}, wantErr: "-n needs a value"}.run(t, NewArgparseArgs([]string{"-n", "--", "cmd"}, dashesAreValues, isSwitch))
	})
	t.Run("no -- leaves no rest", func(t *testing.T) {
		a := NewArgparseArgs([]string{"-S"}, IsFlag, isSwitch)
		for a.Next() {
		}
		if rest, ok := a.Rest(); ok || rest != nil {
			t.Errorf("Rest() = %q, %v; want nothing", rest, ok)
		}
	})
}

// viewer is what a tool that takes every common flag keeps.
type viewer struct {
	only                   []int
	onlyVisible            bool
	compute, graphics      bool
	userSet                bool
	user                   string
	pids                   []int
	ascii, noColor         bool
	simulate               string
	light                  bool // its own flag
	ownCheckFails, checked bool
}

func parseViewer(args []string, withGraphics bool) (*viewer, error) {
	v := &viewer{}
	c := CommonFlags{
		Only: &v.only, OnlyVisible: &v.onlyVisible, Compute: &v.compute,
		UserSet: &v.userSet, User: &v.user, PIDs: &v.pids, ASCII: &v.ascii, NoColor: &v.noColor, Simulate: &v.simulate,
	}
	if withGraphics {
		c.Graphics = &v.graphics
	}
	own := func(a *Args) error {
		switch a.Name() {
		case "--light":
			v.light = true
			return a.NoValue()
		case "--fail-own-check":
			v.ownCheckFails = true
			return nil
		}
		return a.Unknown()
	}
	check := func() error {
		v.checked = true
		if v.ownCheckFails {
			return errors.New("own check failed")
		}
		return nil
	}
	if err := c.Parse(args, own, check); err != nil {
		return nil, err
	}
	return v, nil
}

func TestCommonFlagsReadEveryToolsSharedFlagsAlike(t *testing.T) {
	for _, tt := range []struct {
		name         string
		args         []string
		withGraphics bool
		want         viewer // checked is set for every success
		wantErr      string
	}{
		{name: "no flags", want: viewer{}},
		{name: "-o and --only add up", args: []string{"-o", "1", "--only=0,1", "--only", "3"}, want: viewer{only: []int{1, 0, 3}}},
		{name: "--pid adds up", args: []string{"--pid", "7", "--pid", "8", "7"}, want: viewer{pids: []int{7, 8}}},
		{name: "--pid with nothing", args: []string{"--pid"}, wantErr: "--pid needs at least one PID"},
		{name: "--pid -5 names the PID", args: []string{"--pid", "-5"}, wantErr: `--pid: "-5" is not a non-negative integer`},
		{name: "--user alone is the current user", args: []string{"--user"}, want: viewer{userSet: true}},
		{name: "-u takes a name", args: []string{"-u", "alice"}, want: viewer{userSet: true, user: "alice"}},
		{name: "a later bare --user keeps the name", args: []string{"--user=bob", "--user"}, want: viewer{userSet: true, user: "bob"}},
		{name: "a later --user with a name replaces it", args: []string{"--user=bob", "-u", "carol"}, want: viewer{userSet: true, user: "carol"}},
		{name: "switches, short and long", args: []string{"-c", "-U", "--no-color", "--only-visible"}, want: viewer{compute: true, ascii: true, noColor: true, onlyVisible: true}},
		{name: "a switch twice is fine", args: []string{"-c", "--compute"}, want: viewer{compute: true}},
		{name: "a common switch with a value", args: []string{"--compute=yes"}, wantErr: "--compute takes no value"},
		{name: "--simulate", args: []string{"--simulate", "dgx-h100"}, want: viewer{simulate: "dgx-h100"}},
		{name: "a later bare --simulate lacks its value", args: []string{"--simulate=a.json", "--simulate"}, wantErr: ErrNoSimulation.Error()},
		{name: "--graphics where the tool takes it", args: []string{"-g"}, withGraphics: true, want: viewer{graphics: true}},
		{name: "--graphics where the tool does not is the tool's to reject", args: []string{"--graphics"}, wantErr: `unknown argument "--graphics"`},
		{name: "the tool's own flag", args: []string{"--light", "-c"}, want: viewer{light: true, compute: true}},
		{name: "the tool's own flag with a value", args: []string{"--light=1"}, wantErr: "--light takes no value"},
		{name: "an unknown flag", args: []string{"-c", "--frobnicate"}, wantErr: `unknown argument "--frobnicate"`},
		{name: "-h asks for help", args: []string{"-c", "-h", "--frobnicate"}, wantErr: ErrHelp.Error()},
		{name: "--help asks for help", args: []string{"--only", "0", "--help"}, wantErr: ErrHelp.Error()},
		{name: "--only with --only-visible", args: []string{"--only", "0", "--only-visible"}, wantErr: "--only and --only-visible cannot be used together"},
		{name: "the tool's check comes first", args: []string{"--fail-own-check", "--only", "0", "--only-visible"}, wantErr: "own check failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseViewer(tt.args, tt.withGraphics)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("%q: %+v, %v; want the error %q", tt.args, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%q: %v", tt.args, err)
			}
			tt.want.checked = true
			if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("%q:\n got %+v\nwant %+v", tt.args, *got, tt.want)
			}
		})
	}
	t.Run("help is ErrHelp", func(t *testing.T) {
		if _, err := parseViewer([]string{"-h"}, false); !errors.Is(err, ErrHelp) {
			t.Errorf("-h: %v; want ErrHelp", err)
		}
	})
}
