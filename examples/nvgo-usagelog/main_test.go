//go:build cgo

// These tests run the command through run(), as a user runs the binary
// (--simulate needs cgo).

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
	"github.com/nvgo/nvgo/nvgotest"
)

func TestCommandLineExitStatuses(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // a part of stdout
		wantStderr string // a part of stderr
	}{
		{name: "--help prints the commands", args: []string{"--help"}, wantCode: 0, wantStdout: "nvgo-usagelog report [flags]"},
		{name: "help report prints report's flags", args: []string{"help", "report"}, wantCode: 0, wantStdout: "--quota LIST"},
		{name: "run --help prints run's flags", args: []string{"run", "--help"}, wantCode: 0, wantStdout: "--interval DURATION"},
		{name: "report -h prints report's flags", args: []string{"report", "-h"}, wantCode: 0, wantStdout: "--svg FILE"},
		{name: "an unknown command", args: []string{"frobnicate"}, wantCode: 2, wantStderr: `unknown command "frobnicate"`},
		{name: "an unknown flag", args: []string{"run", "--bogus"}, wantCode: 2, wantStderr: "flag provided but not defined: -bogus"},
		{name: "a flag of run alone means run", args: []string{"--interval", "0s", "--dir", dir}, wantCode: 2, wantStderr: "--interval 0s: want --tick (1s) to 24h"},
		{name: "a tick of less than a second", args: []string{"run", "--tick", "500ms", "--dir", dir}, wantCode: 2, wantStderr: "--tick 500ms: want whole seconds"},
		{name: "an interval that is not whole ticks", args: []string{"run", "--interval", "7s", "--tick", "2s", "--dir", dir}, wantCode: 2, wantStderr: "not a whole number of ticks"},
		{name: "a stray argument", args: []string{"run", "--dir", dir, "now"}, wantCode: 2, wantStderr: `unexpected argument "now"`},
		{name: "a bad quota", args: []string{"report", "--dir", dir, "--quota", "alice"}, wantCode: 2, wantStderr: "want USER=HOURS"},
		{name: "a bad date", args: []string{"report", "--dir", dir, "--from", "March"}, wantCode: 2, wantStderr: `--from: "March" is not a date`},
		{name: "a bad simulation file", args: []string{"run", "--dir", dir, "--simulate", filepath.Join(dir, "none.json")}, wantCode: 1, wantStderr: "nvgo-usagelog: --simulate:"},
		{name: "a report of a missing directory", args: []string{"report", "--dir", filepath.Join(dir, "none")}, wantCode: 1, wantStderr: "no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit status %d, want %d\nstderr: %s", code, tt.wantCode, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout has no %q:\n%s", tt.wantStdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr has no %q:\n%s", tt.wantStderr, stderr.String())
			}
		})
	}
}

func TestBadArgumentsAreOneLineThatPointsToTheHelp(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "2025-01-01.csv"), header+"\n")
	tests := []struct {
		name     string
		args     []string
		wantErr  string // the whole error
		wantHelp string // the command whose help it points to
	}{
		{"an unknown flag", []string{"run", "--bogus"}, "flag provided but not defined: -bogus", "nvgo-usagelog run"},
		{"an unknown flag of report", []string{"report", "--bogus"}, "flag provided but not defined: -bogus", "nvgo-usagelog report"},
		{"an unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, "nvgo-usagelog"},
		{"help for an unknown command", []string{"help", "frobnicate"}, `help: no command "frobnicate"`, "nvgo-usagelog"},
		{"an empty --dir", []string{"run", "--dir", ""}, "--dir: empty directory name", "nvgo-usagelog run"},
		{"an empty --dir=", []string{"--dir="}, "--dir: empty directory name", "nvgo-usagelog run"},
		{"an empty --dir of report", []string{"report", "--dir", ""}, "--dir: empty directory name", "nvgo-usagelog report"},
		{
			"a report range past the limit", []string{"report", "--dir", dir, "--from", "1900-01-01", "--to", "9999-12-31"},
			"the range 1900-01-01 to 9999-12-31 is 2958464 days, and a report covers at most 3660 (about ten years): give a later --from or an earlier --to",
			"nvgo-usagelog report",
		},
		{
			"a report range one day past the limit", []string{"report", "--dir", dir, "--from", "2020-01-01", "--to", "2030-01-08"},
			"the range 2020-01-01 to 2030-01-08 is 3661 days, and a report covers at most 3660 (about ten years): give a later --from or an earlier --to",
			"nvgo-usagelog report",
		},
		{"a reversed report range", []string{"report", "--dir", dir, "--from", "2025-03-05", "--to", "2025-03-01"}, "--from 2025-03-05 is after --to 2025-03-01", "nvgo-usagelog report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, &stdout, &stderr)
			want := "nvgo-usagelog: " + tt.wantErr + "\n(see " + tt.wantHelp + " --help)\n"
			if code != exitUsage || stderr.String() != want || stdout.Len() != 0 {
				t.Errorf("run(%q) = %d, stderr %q, stdout %q; want %d, stderr %q and no stdout", tt.args, code, stderr.String(), stdout.String(), exitUsage, want)
			}
		})
	}
}

func TestReportCoversTheDaysUpToTheLimit(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"report", "--dir", dir, "--from", "2020-01-01", "--to", "2030-01-07"}, &stdout, &stderr)
	if code != exitOK {
		t.Errorf("a report of %d days: exit status %d\n%s", maxDays, code, stderr.String())
	}
}

func TestHelpListsEveryPresetAndTheReportLimit(t *testing.T) {
	presets := tool.PresetNames()
	if !slices.Contains(presets, "vgpu-h100") {
		t.Fatalf("tool.PresetNames() = %q; the test expects vgpu-h100 among them", presets)
	}
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"run --help", []string{"run", "--help"}, presets},
		{"help run", []string{"help", "run"}, presets},
		{"report --help", []string{"report", "--help"}, []string{"at most 3660 days"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(context.Background(), tt.args, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
				t.Fatalf("exit status %d, stderr %q; want 0 and none", code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("the help has no %q:\n%s", w, stdout.String())
				}
			}
			for _, line := range strings.Split(stdout.String(), "\n") {
				if strings.HasPrefix(line, "  -") && utf8.RuneCountInString(line) > tool.HelpWidth {
					t.Errorf("a flag's help is wider than %d: %q", tool.HelpWidth, line)
				}
			}
		})
	}
}

func TestRunWithoutADriverSaysSoInOneLine(t *testing.T) {
	if lib, err := nvgo.Open(); err == nil {
		avail := lib.Available()
		lib.Close()
		if avail == nil {
			t.Skip("this machine has a usable NVIDIA driver")
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "--dir", t.TempDir()}, &stdout, &stderr)
	if code != 1 || strings.Count(stderr.String(), "\n") != 1 || !strings.HasPrefix(stderr.String(), "nvgo-usagelog: no usable NVIDIA driver: ") {
		t.Errorf("exit status %d, stderr %q; want 1 and one line about the driver", code, stderr.String())
	}
}

// TestSimulatedRunLogsTheFleetThenReports runs "nvgo-usagelog run --simulate" on
// the real clock until it has written six rows (two intervals of the
// preset's three busy GPUs), stops it as SIGTERM would, and reports.
func TestSimulatedRunLogsTheFleetThenReports(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"run", "--simulate", "dgx-h100", "--dir", dir, "--tick", "1s", "--interval", "1s"}, &stdout, stderr)
	}()
	seen := eventually(30*time.Second, func() bool { return len(loggedRows(t, dir)) >= 6 })
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("run: exit status %d\n%s", code, stderr)
	}
	if !seen {
		t.Fatalf("no six rows within 30 s\n%s", stderr)
	}
	files, err := dataFiles(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("no daily CSV in %s: %v\n%s", dir, err, stderr)
	}
	// The dgx-h100 preset's busy GPUs 0-2 run one process each at a
	// steady SM load, with the host facts of a simulated user's process.
	type want struct{ usage, user string }
	wantRow := map[int]want{4194401: {"97", "alice"}, 4194402: {"88", "bob"}, 4194403: {"64", "carol"}}
	n := 0
	for _, f := range files {
		for _, r := range rowsIn(t, dir, filepath.Base(f.Path)) {
			n++
			if got := (want{formatNum(r.Usage), r.User}); got != wantRow[r.PID] {
				t.Errorf("row %+v: usage and user %v; want %v", r, got, wantRow[r.PID])
			}
		}
	}
	if n < 6 {
		t.Errorf("%d rows after six were seen, want at least 6\n%s", n, stderr)
	}

	stdout.Reset()
	var reportErr bytes.Buffer
	svg := filepath.Join(dir, "u.svg")
	code := run(context.Background(), []string{"report", "--dir", dir, "--quota", "*=1", "--svg", svg}, &stdout, &reportErr)
	if code != 0 || reportErr.Len() > 0 {
		t.Fatalf("report: exit status %d\n%s", code, reportErr.String())
	}
	if !strings.Contains(stdout.String(), "BUSY GPU-H") || !strings.Contains(stdout.String(), "Chart: "+svg) {
		t.Errorf("report printed:\n%s", stdout.String())
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	parseSVG(t, b)
}

func TestReportWarnsOfMalformedRowsAndGoesOn(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "2025-01-01.csv")
	writeFile(t, path, fmt.Sprintf("%s\n1735693200,alice,1,0,50,3600\n1735693200,bob,2,0,oops,3600\n", header))
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"report", "--dir", dir, "--quota", "alice=0.25"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit status %d\n%s", code, stderr.String())
	}
	if want := "nvgo-usagelog: warning: " + path + `:3: bad GPU Usage "oops": not a number; row skipped` + "\n"; stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
	if out := stdout.String(); !strings.Contains(out, "2025-01-01  alice        0.50") || !strings.Contains(out, "200%  OVER QUOTA") {
		t.Errorf("stdout:\n%s", out)
	}
}

// TestEveryStopSignalEndsRunCleanly runs "nvgo-usagelog run" as a program of
// its own and stops it with each signal main handles: each must take the
// clean way out (the one that writes the interval in progress, as
// TestRunWritesThePartialIntervalWhenStopped checks) and exit 0.
func TestEveryStopSignalEndsRunCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := nvgotest.Program(t, "run", "--simulate", "dgx-h100", "--dir", dir, "--tick", "1s", "--interval", "1s")
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := false
			t.Cleanup(func() {
				if !waited {
					cmd.Process.Kill()
					cmd.Wait()
				}
			})
			// Stop it while it runs: after its first interval.
			if !eventually(30*time.Second, func() bool { return len(loggedRows(t, dir)) > 0 }) {
				t.Fatalf("no row within 30 s\n%s", stderr)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			waited = true
			if err != nil {
				t.Fatalf("after %v: %v; want exit status 0\n%s", sig, err, stderr)
			}
			st, err := loadState(dir)
			if err != nil || st == nil {
				t.Fatalf("no state file after %v: %v", sig, err)
			}
			if want := "msg=stopped last_interval_end=" + st.LastEnd.Format(time.RFC3339); !strings.Contains(stderr.String(), want) {
				t.Errorf("after %v the log has no %q:\n%s", sig, want, stderr)
			}
		})
	}
}

// TestReportToDevFullFails runs "nvgo-usagelog report >/dev/full" as a
// program of its own: the table cannot be written, so it must not exit 0.
func TestReportToDevFullFails(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full to write to:", err)
	}
	defer full.Close()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "2025-01-01.csv"), header+"\n1735693200,alice,1,0,50,3600\n")
	cmd := nvgotest.Program(t, "report", "--dir", dir)
	cmd.Stdout = full
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	const want = "nvgo-usagelog: report: cannot write the output: write /dev/stdout: no space left on device\n"
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != exitError || stderr.String() != want {
		t.Errorf("report >/dev/full: %v, stderr %q; want exit status %d and %q", err, stderr.String(), exitError, want)
	}
}
