// Command nvgo-usagelog keeps a per-user log of GPU usage and reports on it: the
// "GPU Stats Service" (a systemd timer running nvidia-smi every five
// minutes into daily CSVs) done with nvgo's Accumulator, so that each row
// is an average over its interval rather than one instantaneous reading.
// It is built only on nvgo's public API.
//
//	nvgo-usagelog [run] [--interval 5m] [--dir DIR] [--tick 1s] [--simulate NAME|FILE] [-v]
//	nvgo-usagelog report [--dir DIR] [--from DATE] [--to DATE] [--quota USER=HOURS,...] [--svg FILE]
//
// nvgo-usagelog run samples every GPU each tick (nvgo.Accumulator) and every
// interval appends a row per (user, PID, GPU) seen in it to DIR/DATE.csv:
//
//	Timestamp,User,PID,GPU Number,GPU Usage,Seconds,GPU Memory MiB,Memory Usage,Interval Seconds,GPU UUID
//
// The first five columns are the original service's: the interval's end
// (Unix seconds), the process's owner (its UID when the name is unknown,
// "?" when unreadable), PID, NVML index and mean SM utilization (%). The
// rest: seconds the process was seen in the interval (ticks × tick), its
// mean GPU memory (MiB) and memory-interface utilization (%), the
// interval's length (s) and the GPU's UUID. An N/A value is an empty field.
//
// Each interval is one write(2) with O_APPEND, synced, then recorded in
// DIR/usagelog.state (written to a temporary file, synced, renamed). At
// start a last line without its newline is ended when it is a whole row,
// or else cut off into a side file (DIR/DATE.csv.torn, appended to), and
// the state file is reconciled with the newest CSV row, so that nothing is
// written twice. Every second not measured is recorded in DIR/gaps.csv
// (Start,End,Seconds,Reason,GPU Number,GPU UUID): the time since the last
// interval written (a stop records the time since its last tick), and the
// ticks that could not read one GPU or its process lists (a gap of that
// GPU), so that nothing is lost silently. SIGINT, SIGTERM and SIGHUP write
// the interval in progress and exit 0.
//
// nvgo-usagelog report sums the CSVs per user per day (busy GPU-hours, GPU-hours
// held, memory GiB-hours, share of a daily quota) into a table, and with
// --svg a bar chart.
//
// Exit status: 0 ok; 1 no usable NVIDIA driver, a bad --simulate file or an
// I/O error; 2 bad arguments.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // no driver, bad --simulate file, I/O
	exitUsage = 2
)

// main runs the command, stopping "run" cleanly on stopSignals.
func main() {
	ctx, stop := stopContext()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// stopSignals stop "run" cleanly: it writes the interval in progress and
// exits 0. SIGHUP is one of them, not a reason to die: a closed terminal,
// or a hangup sent to reload, must not lose the interval in progress (the
// logger has no configuration to reload).
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// stopContext returns a context that ends at the first of stopSignals; a
// second one kills at once, as if none were handled.
func stopContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// run runs a subcommand; ctx ending stops "run" cleanly (as a signal does).
// Output that cannot be written (a full disk, stdout on /dev/full) is an
// error, whatever the command: exit status 1 and a line on stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := tool.NewOutput(stdout)
	code := runCommand(ctx, args, out, stderr)
	if code != exitOK && out.Err() != nil {
		return code // the command has said what failed
	}
	return out.Finish("nvgo-usagelog", code, stderr)
}

// runCommand is run, before the check of stdout.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	}
	switch cmd {
	case "run":
		o, err := parseRunArgs(args)
		if code, done := argsDone(err, cmd, runUsage, stdout, stderr); done {
			return code
		}
		return runLog(ctx, o, stderr)
	case "report":
		o, err := parseReportArgs(args)
		if code, done := argsDone(err, cmd, reportUsage, stdout, stderr); done {
			return code
		}
		return runReport(o, stdout, stderr, time.Now())
	case "help":
		switch {
		case len(args) == 0:
			fmt.Fprint(stdout, mainUsage)
		case args[0] == "run":
			fmt.Fprint(stdout, runUsage)
		case args[0] == "report":
			fmt.Fprint(stdout, reportUsage)
		default:
			return badUsage(stderr, "", fmt.Errorf("help: no command %q", args[0]))
		}
		return exitOK
	}
	return badUsage(stderr, "", fmt.Errorf("unknown command %q", cmd))
}

// isHelp reports whether arg asks for the help.
func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// argsDone handles the result of parsing cmd's flags (tool.ArgsDone): the
// help (help) on stdout, or a bad argument in one line as badUsage writes
// it.
func argsDone(err error, cmd, help string, stdout, stderr io.Writer) (int, bool) {
	return tool.ArgsDone(err, help, stdout, stderr, badArgs, helpFor(cmd))
}

// badUsage reports a bad argument of cmd ("" for none) as the other tools
// do: "nvgo-usagelog: ERROR", then where the help is; exit status 2.
func badUsage(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, badArgs, err, helpFor(cmd))
	return exitUsage
}

// badArgs is the format of a bad argument's line: the error, then where
// the help is.
const badArgs = "nvgo-usagelog: %v\n(see %s)\n"

// helpFor is how to ask for cmd's help ("" for nvgo-usagelog's own).
func helpFor(cmd string) string {
	if cmd == "" {
		return "nvgo-usagelog --help"
	}
	return "nvgo-usagelog " + cmd + " --help"
}

// runLog is "nvgo-usagelog run".
func runLog(ctx context.Context, o *runOptions, stderr io.Writer) int {
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	// A simulation's clock follows real time; its processes have owners.
	lib, err := tool.OpenAvailable(o.simulate, true, nvgo.WithLogger(log))
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-usagelog: %v\n", err)
		return exitError
	}
	defer lib.Close()
	err = logUsage(ctx, lib, logConfig{
		dir: o.dir, interval: o.interval, tick: o.tick,
		loc: time.Local, log: log,
	})
	if err != nil {
		return driverFailure(stderr, err)
	}
	return exitOK
}

// driverFailure reports err in one line, explaining a missing driver;
// exit status 1.
func driverFailure(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "nvgo-usagelog: %v\n", tool.ExplainNoDriver(err))
	return exitError
}

// runReport is "nvgo-usagelog report"; now decides "today" and the default range.
func runReport(o *reportOptions, stdout, stderr io.Writer, now time.Time) int {
	warn := func(s string) { fmt.Fprintf(stderr, "nvgo-usagelog: warning: %s\n", s) }
	files, err := dataFiles(o.dir)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-usagelog: report: %v\n", err)
		return exitError
	}
	from, to, err := reportRange(o, files, now)
	if err != nil {
		return badUsage(stderr, "report", err)
	}
	days, err := daysBetween(from, to)
	if err != nil {
		return badUsage(stderr, "report", err)
	}
	rows, err := readRows(files, from, to, warn)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-usagelog: report: %v\n", err)
		return exitError
	}
	gaps, err := readGaps(o.dir, warn)
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-usagelog: report: %v\n", err)
		return exitError
	}
	rp := aggregate(days, rows, gaps, o.quotas, o.legacyRow.Seconds(), now.Location())
	if err := writeTable(stdout, rp, o.dir, now.Location()); err != nil {
		return outputFailure(stderr, err)
	}
	if o.svg != "" {
		if err := replaceFile(o.svg, func(w io.Writer) error { return writeSVG(w, rp, now.Location()) }); err != nil {
			fmt.Fprintf(stderr, "nvgo-usagelog: --svg: %v\n", err)
			return exitError
		}
		if _, err := fmt.Fprintf(stdout, "\nChart: %s\n", o.svg); err != nil {
			return outputFailure(stderr, err)
		}
	}
	return exitOK
}

// outputFailure reports that the report could not be written to stdout;
// exit status 1.
func outputFailure(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "nvgo-usagelog: report: cannot write the output: %v\n", err)
	return exitError
}

// reportRange resolves --from and --to; by default the days logged.
func reportRange(o *reportOptions, files []dataFile, now time.Time) (from, to string, err error) {
	if o.from != "" {
		if from, err = parseDay(o.from, now); err != nil {
			return "", "", fmt.Errorf("--from: %w", err)
		}
	}
	if o.to != "" {
		if to, err = parseDay(o.to, now); err != nil {
			return "", "", fmt.Errorf("--to: %w", err)
		}
	}
	first, last := now.Format(dayLayout), now.Format(dayLayout)
	if len(files) > 0 {
		first, last = files[0].Day, files[len(files)-1].Day
	}
	switch {
	case from == "" && to == "":
		from, to = first, last
	case from == "":
		from = min(first, to)
	case to == "":
		to = max(last, from)
	}
	return from, to, nil
}
