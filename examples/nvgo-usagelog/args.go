package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nvgo/nvgo/examples/internal/tool"
)

// mainUsage is "nvgo-usagelog --help".
const mainUsage = `usage: nvgo-usagelog [run] [flags]    log per-process GPU usage to daily CSVs
       nvgo-usagelog report [flags]   per-user GPU-hours per day: table or SVG
       nvgo-usagelog help [run|report]

Run "nvgo-usagelog run --help" or "nvgo-usagelog report --help" for the flags.
Exit status: 0 ok (run: also stopped by SIGINT, SIGTERM or SIGHUP), 1 no
usable NVIDIA driver, a bad --simulate file or an I/O error, 2 bad arguments.
`

// runUsage is "nvgo-usagelog run --help". Its --simulate presets come from
// tool.PresetNames, so that each one nvgo ships is listed.
var runUsage = fmt.Sprintf(`usage: nvgo-usagelog run [--interval 5m] [--dir DIR] [--tick 1s]
                         [--simulate NAME|FILE] [-v]

Samples every GPU each tick and, every --interval, appends one row per
(user, PID, GPU) seen in the interval to DIR/YYYY-MM-DD.csv (the local date
of the interval's end):

  Timestamp,User,PID,GPU Number,GPU Usage,Seconds,GPU Memory MiB,Memory Usage,Interval Seconds,GPU UUID

GPU Usage is the process's mean SM utilization (%%) over the interval, not
one reading. Intervals end on multiples of --interval from local midnight.
Every second nothing was measured (from a stop, or the last tick before it,
to the next start), and every tick that could not read a GPU or list its
processes (a gap of that GPU), is recorded in DIR/gaps.csv. A last line
without its newline (a crash mid-write) is kept if it is a whole row, else
moved to FILE.torn beside its file. SIGINT, SIGTERM or SIGHUP writes the
interval in progress (its real length) and exits 0.

flags:
  --interval DURATION   time between rows (default 5m); a whole number of ticks
  --dir DIR             log directory (default $HOME/gpu_stats)
  --tick DURATION       the accumulator's sampling period: whole seconds, up
                        to 1m (default 1s)
%s
  -v                    debug logging (one line per interval written)
  -h, --help            show this help
`, tool.SimulateHelp("  --simulate NAME|FILE  ", "use", "or a scenario JSON file; its clock follows real time"))

// reportUsage is "nvgo-usagelog report --help".
var reportUsage = fmt.Sprintf(`usage: nvgo-usagelog report [--dir DIR] [--from DATE] [--to DATE]
                            [--quota USER=HOURS,...] [--svg FILE]

Sums the daily CSVs per user per day: busy GPU-hours (GPU Usage/100 × time),
GPU-hours held (time on a GPU, busy or not) and GPU memory GiB-hours, against
an optional daily quota of busy GPU-hours, and lists the gaps in the log.
Malformed rows are skipped with a warning naming FILE:LINE. A report covers
at most %d days (about ten years), --from to --to inclusive.

flags:
  --dir DIR             log directory (default $HOME/gpu_stats)
  --from DATE           first day: YYYY-MM-DD, today or yesterday (default: the
                        first day logged, or --to)
  --to DATE             last day (default: the last day logged, or today)
  --quota LIST          daily quotas of busy GPU-hours, e.g. alice=4,bob=2.5;
                        *=HOURS sets everyone else's
  --svg FILE            also draw the report as an SVG chart: FILE is
                        created, or replaced whole if a regular file
                        (never a link, pipe or device)
  --legacy-row DURATION time one row of the original five columns stands for
                        (its timer's period; default 5m)
  -h, --help            show this help
`, maxDays)

// usageError is a bad argument: exit status 2.
type usageError struct{ error }

// Unwrap returns the error.
func (e usageError) Unwrap() error { return e.error }

// runOptions are the flags of "nvgo-usagelog run".
type runOptions struct {
	dir            string
	interval, tick time.Duration
	simulate       string
	verbose        bool
}

// reportOptions are the flags of "nvgo-usagelog report".
type reportOptions struct {
	dir, from, to string
	quotas        quotas
	svg           string
	legacyRow     time.Duration
}

// parse runs fs over args (tool.ParseFlags): a bad argument is a
// usageError.
func parse(fs *flag.FlagSet, args []string) error {
	err := tool.ParseFlags(fs, args)
	if err != nil && !errors.Is(err, tool.ErrHelp) {
		return usageError{err}
	}
	return err
}

// logDir resolves --dir of fs, whose value is dir: the directory given, or
// $HOME/gpu_stats (where the original service wrote) when the flag is not
// given. An empty name given is a mistake, not a request for the default.
func logDir(fs *flag.FlagSet, dir string) (string, error) {
	given := tool.Given(fs, "dir")
	switch {
	case given && dir == "":
		return "", usageError{errors.New("--dir: empty directory name")}
	case given:
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", usageError{fmt.Errorf("--dir: not given, and no default $HOME/gpu_stats: %w", err)}
	}
	return filepath.Join(home, "gpu_stats"), nil
}

// parseRunArgs reads the flags of "nvgo-usagelog run".
func parseRunArgs(args []string) (*runOptions, error) {
	o := &runOptions{}
	fs := tool.NewFlagSet("run")
	fs.StringVar(&o.dir, "dir", "", "")
	fs.DurationVar(&o.interval, "interval", 5*time.Minute, "")
	fs.DurationVar(&o.tick, "tick", time.Second, "")
	fs.StringVar(&o.simulate, "simulate", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	var err error
	if o.dir, err = logDir(fs, o.dir); err != nil {
		return nil, err
	}
	switch {
	case o.tick < time.Second || o.tick > time.Minute || o.tick%time.Second != 0:
		// Rows are stamped in whole seconds: with whole-second ticks, two
		// intervals (each at least a tick) never share a Timestamp.
		return nil, usageError{fmt.Errorf("--tick %v: want whole seconds, 1s to 1m", o.tick)}
	case o.interval < o.tick || o.interval > 24*time.Hour:
		return nil, usageError{fmt.Errorf("--interval %v: want --tick (%v) to 24h", o.interval, o.tick)}
	case o.interval%o.tick != 0:
		return nil, usageError{fmt.Errorf("--interval %v is not a whole number of ticks of %v", o.interval, o.tick)}
	}
	return o, nil
}

// parseReportArgs reads the flags of "nvgo-usagelog report".
func parseReportArgs(args []string) (*reportOptions, error) {
	o := &reportOptions{}
	var quota string
	fs := tool.NewFlagSet("report")
	fs.StringVar(&o.dir, "dir", "", "")
	fs.StringVar(&o.from, "from", "", "")
	fs.StringVar(&o.to, "to", "", "")
	fs.StringVar(&quota, "quota", "", "")
	fs.StringVar(&o.svg, "svg", "", "")
	fs.DurationVar(&o.legacyRow, "legacy-row", 5*time.Minute, "")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	var err error
	if o.dir, err = logDir(fs, o.dir); err != nil {
		return nil, err
	}
	if o.legacyRow <= 0 {
		return nil, usageError{fmt.Errorf("--legacy-row %v: want a positive duration", o.legacyRow)}
	}
	if o.quotas, err = parseQuotas(quota); err != nil {
		return nil, usageError{err}
	}
	return o, nil
}
