package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

var (
	// errHelp is -h or --help: tool.ErrHelp, which run answers with the
	// help.
	errHelp = tool.ErrHelp
	// errVersion is -V or --version.
	errVersion = errors.New("version")
)

var usage = fmt.Sprintf(`usage: nvgo-select [options] [-- COMMAND [ARG ...]]

Select GPUs for a job, like nvitop's nvisel. Without a command, print the
chosen devices (for CUDA_VISIBLE_DEVICES); with one, reserve them and run it.

constraints:
  -i, --inherit [CVD]        choose among the devices CUDA sees now: those of CVD, or without
                             it of $CUDA_VISIBLE_DEVICES (all devices when that is unset)
  --account-as-free [USER ...]
                             count the GPU memory of USER's processes as free
                             (no names: the current user); may be repeated
  -c, --min-count N          at least N devices; fewer: print nothing, exit 4 (default: 0,
                             or 1 with a command)
  -C, --max-count N          at most N devices (default: all that qualify)
  -n, --count N              exactly N devices: both of the above
  -f, --min-free-memory SIZE at least SIZE free, e.g. 20GiB, 512MiB, 10G; a bare number is bytes
  -t, --min-total-memory SIZE
                             at least SIZE in all
  -G, --max-gpu-utilization RATE
                             at most RATE percent GPU utilization, e.g. 30
  -M, --max-memory-utilization RATE
                             at most RATE percent memory bandwidth utilization
  --tol, --tolerance TOL     loosen every constraint by TOL percent; devices that pass only
                             the loosened ones come last (default: 10, as nvisel really
                             uses, although its help says 0; --tol 0 is strict)
  --window DURATION          judge utilization by its average over DURATION, e.g. 5s,
                             not one reading (a bare number is seconds; default: one reading)

formatting (without a command):
  -O, --format index|uuid    print UUIDs (default) or NVML indices. Indices are printed only
                             where CUDA numbers the GPUs the same way (same model or
                             CUDA_DEVICE_ORDER=PCI_BUS_ID, no MIG device); else exit 3.
                             With --inherit too, they are values for CUDA_VISIBLE_DEVICES
                             in place of the inherited one (GPU 5 prints 5), not CUDA
                             ordinals inside it. (nvisel's default is index)
  -s, --sep SEP              separator between devices (default: ","); also --separator
  --newline                  separate with newlines
  -0, --null                 separate and end with NUL characters, for xargs -0
  -S, --no-sort              keep the devices in index order (with --inherit, CUDA's order)

command (after --):
  The devices are reserved with a lock file each in the lock directory, so that other
  nvgo-select commands sharing it do not take them while COMMAND runs; COMMAND
  gets CUDA_VISIBLE_DEVICES set to their UUIDs and inherits the locks. nvgo-select
  forwards SIGTERM and SIGHUP to it, and SIGINT unless nvgo-select runs in the
  terminal's foreground (where ^C already reaches COMMAND), and exits with its
  status.
  --lock-dir DIR             lock directory (default: $NVGO_LOCK_DIR, else /run/lock/nvgo,
                             else nvgo-locks in the temporary directory). Printed
                             selections take no lock but leave out reserved devices

other:
%s
  -h, --help                 show this help
  -V, --version              show the version

When stdout is not a terminal, what is printed is also written to stderr as
CUDA_VISIBLE_DEVICES="...".

exit status: 0 ok; 1 no usable NVIDIA driver or bad scenario; 2 bad arguments or another
NVML error; 3 CUDA's numbering cannot be decided (--inherit, --format index); 4 fewer
devices than --min-count. Devices are printed only with status 0. With a command: its
exit status (128+N if killed by signal N), 126 if it cannot be executed, 127 if it is
not found.
`, tool.SimulateHelp("  --simulate NAME|FILE       ", "use", "or a scenario JSON file"))

// options are the parsed flags.
type options struct {
	inherit      bool
	inheritCVD   *string // the value given to --inherit; nil: the environment's
	freeAccounts []string
	freeCurrent  bool // --account-as-free without names
	minCount     int
	maxCount     int // -1: no maximum
	minFree      nvgo.Bytes
	minTotal     nvgo.Bytes
	maxGPU       *nvgo.Percent
	maxMem       *nvgo.Percent
	tolerance    nvgo.Percent
	window       time.Duration
	format       string // "uuid" or "index"
	sep          string
	terminator   string // after the list: "\n", or "\x00" with --null
	noSort       bool
	lockDir      string
	simulate     string
	command      []string // after "--"
}

// flag describes one flag: its names and how many values it takes.
type flag struct {
	names []string
	arity arity
}

type arity uint8

const (
	none     arity = iota // a switch
	one                   // exactly one value
	optional              // zero or one value
	many                  // zero or more values
)

var flags = []flag{
	{[]string{"-h", "--help"}, none},
	{[]string{"-V", "--version"}, none},
	{[]string{"-i", "--inherit"}, optional},
	{[]string{"--account-as-free"}, many},
	{[]string{"-c", "--min-count"}, one},
	{[]string{"-C", "--max-count"}, one},
	{[]string{"-n", "--count"}, one},
	{[]string{"-f", "--min-free-memory"}, one},
	{[]string{"-t", "--min-total-memory"}, one},
	{[]string{"-G", "--max-gpu-utilization"}, one},
	{[]string{"-M", "--max-memory-utilization"}, one},
	{[]string{"--tol", "--tolerance"}, one},
	{[]string{"--window"}, one},
	{[]string{"-O", "--format"}, one},
	{[]string{"-s", "--sep", "--separator"}, one},
	{[]string{"--newline"}, none},
	{[]string{"-0", "--null"}, none},
	{[]string{"-S", "--no-sort"}, none},
	{[]string{"--lock-dir"}, one},
	{[]string{"--simulate"}, one},
}

func lookup(name string) (flag, bool) {
	for _, f := range flags {
		for _, n := range f.names {
			if n == name {
				return f, true
			}
		}
	}
	return flag{}, false
}

// isSwitch reports whether name is a flag that takes no value, so that
// what is attached to it ("-S0") is more switches.
func isSwitch(name string) bool {
	f, ok := lookup(name)
	return ok && f.arity == none
}

// take reads the values of the current flag of a, which takes ar of them.
func (ar arity) take(a *tool.Args) ([]string, error) {
	switch ar {
	case none:
		return nil, a.NoValue()
	case one:
		v, err := a.Value()
		if err != nil {
			return nil, err
		}
		return []string{v}, nil
	case optional:
		if v, ok := a.OptionalValue(); ok {
			return []string{v}, nil
		}
		return nil, nil
	}
	return a.Values(), nil
}

// looksLikeFlag reports whether s is a flag rather than a value: it starts
// with "-", except "-" itself and words whose dash a digit or "." follows.
// Those are negative numbers and sizes ("-1", "-5GiB", "-.5s"), so that
// "-f -5GiB" is a bad size that the error can name, not a missing one. The
// one flag that starts with a digit, -0 (--null), stays a flag alone and
// with switches after it ("-0S"), but not before more of a number ("-0.5").
func looksLikeFlag(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	if strings.HasPrefix(s, "-0") && !startsLikeNumber(s[2:]) {
		return true
	}
	return !startsLikeNumber(s[1:])
}

// startsLikeNumber reports whether s starts with a digit or ".".
func startsLikeNumber(s string) bool {
	return s != "" && (s[0] == '.' || '0' <= s[0] && s[0] <= '9')
}

// parseArgs reads nvisel's flags the way argparse does
// (tool.NewArgparseArgs): "--flag value", "--flag=value", "-fVALUE",
// "-f=value", clustered switches ("-S0"), an optional value for --inherit
// and any number of names for --account-as-free. Everything after "--" is
// the command.
func parseArgs(args []string) (*options, error) {
	p := &parser{o: &options{maxCount: -1, tolerance: 10, format: "uuid", sep: ",", terminator: "\n"}, count: -1}
	o := p.o
	a := tool.NewArgparseArgs(args, looksLikeFlag, isSwitch)
	for a.Next() {
		name := a.Name()
		f, ok := lookup(name)
		if !ok {
			if looksLikeFlag(a.Word()) {
				return nil, fmt.Errorf("unknown flag %q", a.Word())
			}
			return nil, fmt.Errorf("unexpected argument %q (put a command after --)", a.Word())
		}
		vals, err := f.arity.take(a)
		if err != nil {
			return nil, err
		}
		if err := p.set(f.names[len(f.names)-1], name, vals); err != nil {
			return nil, err
		}
	}
	if command, ok := a.Rest(); ok {
		if len(command) == 0 {
			return nil, fmt.Errorf("--: no command after it")
		}
		o.command = command
	}
	if len(p.sepFlags) > 1 {
		return nil, fmt.Errorf("%s and %s exclude each other", p.sepFlags[0], p.sepFlags[1])
	}
	if p.count >= 0 {
		o.minCount, o.maxCount = p.count, p.count
	} else if !p.minSet && len(o.command) > 0 && o.maxCount != 0 {
		o.minCount = 1 // a job is not started without a GPU unless -c 0 says so
	}
	if o.maxCount >= 0 && o.maxCount < o.minCount {
		return nil, fmt.Errorf("--max-count %d is below --min-count %d", o.maxCount, o.minCount)
	}
	if len(o.command) > 0 && len(p.printFlags) > 0 {
		return nil, fmt.Errorf("%s shapes printed output, and with a command nothing is printed (the command gets UUIDs)", p.printFlags[0])
	}
	return o, nil
}

// parser is the state of one parseArgs.
type parser struct {
	o          *options
	count      int      // --count, -1 when not given
	minSet     bool     // --min-count given
	sepFlags   []string // separator flags given, as written
	sepKeys    []string // and their canonical names
	printFlags []string // flags that shape the printed output
}

// set applies one flag: key is its canonical (last) name, name the one used.
func (p *parser) set(key, name string, vals []string) error {
	o := p.o
	if key == "--format" || key == "--separator" || key == "--newline" || key == "--null" {
		p.printFlags = append(p.printFlags, name)
	}
	if (key == "--separator" || key == "--newline" || key == "--null") && !slices.Contains(p.sepKeys, key) {
		p.sepFlags, p.sepKeys = append(p.sepFlags, name), append(p.sepKeys, key) // one flag twice: the last wins
	}
	var v string
	if len(vals) > 0 {
		v = vals[0]
	}
	var err error
	switch key {
	case "--help":
		return errHelp
	case "--version":
		return errVersion
	case "--inherit":
		o.inherit, o.inheritCVD = true, nil
		if len(vals) > 0 {
			o.inheritCVD = &v
		}
	case "--account-as-free":
		named := false
		for _, s := range vals {
			for _, u := range strings.Split(s, ",") {
				if u = strings.TrimSpace(u); u != "" {
					named = true
					if !slices.Contains(o.freeAccounts, u) {
						o.freeAccounts = append(o.freeAccounts, u)
					}
				}
			}
		}
		o.freeCurrent = o.freeCurrent || !named
	case "--min-count":
		o.minCount, err = parseCount(name, v)
		p.minSet = true
	case "--max-count":
		o.maxCount, err = parseCount(name, v)
	case "--count":
		p.count, err = parseCount(name, v)
	case "--min-free-memory":
		o.minFree, err = parseSize(name, v)
	case "--min-total-memory":
		o.minTotal, err = parseSize(name, v)
	case "--max-gpu-utilization":
		var pc nvgo.Percent
		pc, err = parsePercent(name, v)
		o.maxGPU = &pc
	case "--max-memory-utilization":
		var pc nvgo.Percent
		pc, err = parsePercent(name, v)
		o.maxMem = &pc
	case "--tolerance":
		o.tolerance, err = parsePercent(name, v)
	case "--window":
		o.window, err = parseWindow(name, v)
	case "--format":
		if v != "index" && v != "uuid" {
			return fmt.Errorf("%s: %q is not a format (want index or uuid)", name, v)
		}
		o.format = v
	case "--separator":
		o.sep = v
	case "--newline":
		o.sep = "\n"
	case "--null":
		o.sep, o.terminator = "\x00", "\x00"
	case "--no-sort":
		o.noSort = true
	case "--lock-dir":
		if v == "" {
			return fmt.Errorf("%s needs a directory", name)
		}
		o.lockDir = v
	case "--simulate":
		if v == "" {
			return tool.ErrNoSimulation
		}
		o.simulate = v
	}
	return err
}

func parseCount(name, v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative integer", name, v)
	}
	return n, nil
}

func parseSize(name, v string) (nvgo.Bytes, error) {
	if strings.HasPrefix(strings.TrimSpace(v), "-") {
		return 0, fmt.Errorf("%s: %q is not a size: sizes cannot be negative", name, v)
	}
	b, err := nvgo.ParseBytes(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a size (want bytes, or a number with a unit: 20GiB, 512MiB, 10G)", name, v)
	}
	return b, nil
}

// parsePercent reads a percentage from 0 to 100; a trailing "%" is allowed.
func parsePercent(name, v string) (nvgo.Percent, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil || math.IsNaN(p) || p < 0 || p > 100 {
		return 0, fmt.Errorf("%s: %q is not a percentage from 0 to 100", name, v)
	}
	return nvgo.Percent(p), nil
}

// parseWindow reads a Go duration ("5s", "1m30s") or a number of seconds.
func parseWindow(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		s, ferr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if ferr != nil || math.IsNaN(s) || math.IsInf(s, 0) || s > 1e6 {
			return 0, fmt.Errorf("%s: %q is not a duration (want e.g. 5s, 500ms)", name, v)
		}
		d = time.Duration(s * float64(time.Second))
	}
	if d < 0 {
		return 0, fmt.Errorf("%s: %q is negative", name, v)
	}
	return d, nil
}
