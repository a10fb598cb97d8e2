package main

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

func pct(p float64) *nvgo.Percent { v := nvgo.Percent(p); return &v }

func str(s string) *string { return &s }

// defaults returns the options of a bare "nvgo-select", changed by edit.
func defaults(edit func(o *options)) *options {
	o := &options{maxCount: -1, tolerance: 10, format: "uuid", sep: ",", terminator: "\n"}
	if edit != nil {
		edit(o)
	}
	return o
}

func TestParseArgsReadsNviselFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want *options
	}{
		{"no flags give nvisel's defaults, UUIDs and a tolerance of 10", nil, defaults(nil)},
		{"-i alone inherits the environment's CUDA_VISIBLE_DEVICES", []string{"-i"}, defaults(func(o *options) { o.inherit = true })},
		{"-i takes a value", []string{"-i", "0,1"}, defaults(func(o *options) { o.inherit, o.inheritCVD = true, str("0,1") })},
		{"--inherit= inherits an empty list", []string{"--inherit="}, defaults(func(o *options) { o.inherit, o.inheritCVD = true, str("") })},
		{"-i before a flag takes no value", []string{"-i", "-S"}, defaults(func(o *options) { o.inherit, o.noSort = true, true })},
		{"-i0,1 attaches the value", []string{"-i0,1"}, defaults(func(o *options) { o.inherit, o.inheritCVD = true, str("0,1") })},
		{"--account-as-free alone means the current user", []string{"--account-as-free"}, defaults(func(o *options) { o.freeCurrent = true })},
		{"--account-as-free takes several names up to the next flag", []string{"--account-as-free", "alice", "bob", "-S"},
			defaults(func(o *options) { o.freeAccounts, o.noSort = []string{"alice", "bob"}, true })},
		{"--account-as-free=a,b splits on commas", []string{"--account-as-free=a,b"}, defaults(func(o *options) { o.freeAccounts = []string{"a", "b"} })},
		{"-c and -C set the counts", []string{"-c", "1", "-C", "3"}, defaults(func(o *options) { o.minCount, o.maxCount = 1, 3 })},
		{"-n sets both counts", []string{"-n", "2"}, defaults(func(o *options) { o.minCount, o.maxCount = 2, 2 })},
		{"-n wins over -c and -C in any order", []string{"-n", "2", "-c", "1", "-C", "5"}, defaults(func(o *options) { o.minCount, o.maxCount = 2, 2 })},
		{"-n2 and --count=2 attach the value", []string{"-n2"}, defaults(func(o *options) { o.minCount, o.maxCount = 2, 2 })},
		{"-n=2 attaches the value as argparse does", []string{"-n=2"}, defaults(func(o *options) { o.minCount, o.maxCount = 2, 2 })},
		{"-f reads binary units", []string{"-f", "20GiB"}, defaults(func(o *options) { o.minFree = 20 << 30 })},
		{"-t reads decimal units", []string{"-t", "10G"}, defaults(func(o *options) { o.minTotal = 10e9 })},
		{"a bare size is bytes", []string{"--min-free-memory", "4096"}, defaults(func(o *options) { o.minFree = 4096 })},
		{"-G and -M take percentages", []string{"-G", "30", "-M", "50.5%"}, defaults(func(o *options) { o.maxGPU, o.maxMem = pct(30), pct(50.5) })},
		{"--tol 0 is strict", []string{"--tol", "0"}, defaults(func(o *options) { o.tolerance = 0 })},
		{"--tolerance=25", []string{"--tolerance=25"}, defaults(func(o *options) { o.tolerance = 25 })},
		{"--window takes a duration", []string{"--window", "5s"}, defaults(func(o *options) { o.window = 5 * time.Second })},
		{"--window takes seconds", []string{"--window", "1.5"}, defaults(func(o *options) { o.window = 1500 * time.Millisecond })},
		{"-O index", []string{"-O", "index"}, defaults(func(o *options) { o.format = "index" })},
		{"-s sets the separator", []string{"-s", " "}, defaults(func(o *options) { o.sep = " " })},
		{"--sep - takes a dash", []string{"--sep", "-"}, defaults(func(o *options) { o.sep = "-" })},
		{"--separator= takes nothing", []string{"--separator="}, defaults(func(o *options) { o.sep = "" })},
		{"--newline separates with newlines", []string{"--newline"}, defaults(func(o *options) { o.sep = "\n" })},
		{"-0 separates and ends with NULs", []string{"-0"}, defaults(func(o *options) { o.sep, o.terminator = "\x00", "\x00" })},
		{"-0 clusters with switches after it", []string{"-0S"}, defaults(func(o *options) { o.noSort, o.sep, o.terminator = true, "\x00", "\x00" })},
		{"-i -1 inherits CUDA's hide-every-device list", []string{"-i", "-1"}, defaults(func(o *options) { o.inherit, o.inheritCVD = true, str("-1") })},
		{"-i -1,0 takes the list as its value", []string{"-i", "-1,0"}, defaults(func(o *options) { o.inherit, o.inheritCVD = true, str("-1,0") })},
		{"-s -1x takes a separator that starts with a dash and a digit", []string{"-s", "-1x"}, defaults(func(o *options) { o.sep = "-1x" })},
		{"--lock-dir -1d takes the directory", []string{"--lock-dir", "-1d"}, defaults(func(o *options) { o.lockDir = "-1d" })},
		{"--simulate -1.json takes the file", []string{"--simulate", "-1.json"}, defaults(func(o *options) { o.simulate = "-1.json" })},
		{"--account-as-free takes names up to a flag, not up to a number", []string{"--account-as-free", "alice", "-1x", "-S"},
			defaults(func(o *options) { o.freeAccounts, o.noSort = []string{"alice", "-1x"}, true })},
		{"repeated --account-as-free adds names once each, in order", []string{"--account-as-free", "bob", "alice", "--account-as-free=alice,carol"},
			defaults(func(o *options) { o.freeAccounts = []string{"bob", "alice", "carol"} })},
		{"the same separator flag twice is fine", []string{"-s", ";", "--sep", ":"}, defaults(func(o *options) { o.sep = ":" })},
		{"switches cluster", []string{"-S0"}, defaults(func(o *options) { o.noSort, o.sep, o.terminator = true, "\x00", "\x00" })},
		{"--lock-dir and --simulate", []string{"--lock-dir", "/tmp/l", "--simulate=dgx-h100"}, defaults(func(o *options) { o.lockDir, o.simulate = "/tmp/l", "dgx-h100" })},
		{"a command follows --, and needs a device by default", []string{"-f", "1GiB", "--", "python", "-c", "--x"},
			defaults(func(o *options) { o.minFree, o.command, o.minCount = 1<<30, []string{"python", "-c", "--x"}, 1 })},
		{"-c 0 lets a command run without a device", []string{"-c", "0", "--", "true"}, defaults(func(o *options) { o.command = []string{"true"} })},
		{"-C 0 with a command needs no device", []string{"-C", "0", "--", "true"}, defaults(func(o *options) { o.maxCount, o.command = 0, []string{"true"} })},
		{"-i ends at --", []string{"-i", "--", "true"}, defaults(func(o *options) { o.inherit, o.command, o.minCount = true, []string{"true"}, 1 })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.args)
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseArgs(%q) =\n%+v; want\n%+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestParseArgsAsksForHelpAndVersion(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want error
	}{
		{[]string{"-h"}, errHelp},
		{[]string{"--help"}, errHelp},
		{[]string{"-n", "2", "--help"}, errHelp},
		{[]string{"-V"}, errVersion},
		{[]string{"--version"}, errVersion},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			if _, err := parseArgs(tt.args); !errors.Is(err, tt.want) {
				t.Fatalf("parseArgs(%q) error = %v; want %v", tt.args, err, tt.want)
			}
		})
	}
}

// Bad arguments end before NVML is touched, so these run without cgo too.
func TestBadArgumentsExitWith2AndOneLineNamingTheFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the one line
	}{
		{"an unknown flag", []string{"--frobnicate"}, `unknown flag "--frobnicate"`},
		{"an unknown short flag", []string{"-x"}, `unknown flag "-x"`},
		{"a stray word", []string{"python"}, `unexpected argument "python" (put a command after --)`},
		{"a missing count", []string{"-n"}, "-n needs a value"},
		{"a count followed by a flag", []string{"--min-count", "-S"}, "--min-count needs a value"},
		{"a negative count", []string{"-n", "-1"}, `-n: "-1" is not a non-negative integer`},
		{"a negative attached count", []string{"-c-2"}, `-c: "-2" is not a non-negative integer`},
		{"a count that is not a number", []string{"--max-count", "two"}, `--max-count: "two" is not a non-negative integer`},
		{"a maximum below the minimum", []string{"-c", "3", "-C", "2"}, "--max-count 2 is below --min-count 3"},
		{"an unknown unit", []string{"-f", "10XB"}, `-f: "10XB" is not a size`},
		{"a negative size", []string{"--min-total-memory=-1GiB"}, `--min-total-memory: "-1GiB" is not a size: sizes cannot be negative`},
		{"a negative size after -f", []string{"-f", "-5GiB"}, `-f: "-5GiB" is not a size: sizes cannot be negative`},
		{"a negative size after -t", []string{"-t", "-.5G"}, `-t: "-.5G" is not a size: sizes cannot be negative`},
		{"a negative rate", []string{"-G", "-30%"}, `-G: "-30%" is not a percentage from 0 to 100`},
		{"a negative memory rate", []string{"--max-memory-utilization", "-1e2"}, `--max-memory-utilization: "-1e2" is not a percentage from 0 to 100`},
		{"a negative duration after --window", []string{"--window", "-5s"}, `--window: "-5s" is negative`},
		{"a negative fractional duration", []string{"--window", "-.5s"}, `--window: "-.5s" is negative`},
		{"a negative fractional count", []string{"-C", "-0.5"}, `-C: "-0.5" is not a non-negative integer`},
		{"a format that starts like a number", []string{"-O", "-1x"}, `-O: "-1x" is not a format (want index or uuid)`},
		{"a stray negative number", []string{"-1"}, `unexpected argument "-1" (put a command after --)`},
		{"-0 after a flag is --null, not a value", []string{"-c", "-0"}, "-c needs a value"},
		{"a rate that is not a number", []string{"-G", "high"}, `-G: "high" is not a percentage from 0 to 100`},
		{"a rate above 100", []string{"-M", "150"}, `-M: "150" is not a percentage from 0 to 100`},
		{"a negative tolerance", []string{"--tol", "-5"}, `--tol: "-5" is not a percentage from 0 to 100`},
		{"a bad duration", []string{"--window", "soon"}, `--window: "soon" is not a duration`},
		{"a negative duration", []string{"--window=-5s"}, `--window: "-5s" is negative`},
		{"an unknown format", []string{"-O", "json"}, `-O: "json" is not a format (want index or uuid)`},
		{"two separators", []string{"--newline", "-0"}, "--newline and -0 exclude each other"},
		{"a switch with a value", []string{"--no-sort=yes"}, "--no-sort takes no value"},
		{"a short switch with a value", []string{"-S=1"}, "-S takes no value"},
		{"an empty lock directory", []string{"--lock-dir="}, "--lock-dir needs a directory"},
		{"an empty simulation", []string{"--simulate="}, "--simulate needs a preset name or a scenario file"},
		{"-- with no command", []string{"-n", "1", "--"}, "--: no command after it"},
		{"a format with a command", []string{"-O", "index", "--", "true"}, "-O shapes printed output"},
		{"a separator with a command", []string{"-0", "--", "true"}, "-0 shapes printed output"},
		{"-C 1 below a command's default minimum is fine, -c 2 -C 1 is not", []string{"-c", "2", "-C", "1", "--", "true"}, "--max-count 1 is below --min-count 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("run(%q) = %d; want %d", tt.args, code, exitUsage)
			}
			line := stderr.String()
			if strings.Count(line, "\n") != 1 || !strings.Contains(line, tt.want) || !strings.HasSuffix(line, "(see nvgo-select --help)\n") {
				t.Errorf("run(%q) stderr = %q; want one line with %q and (see nvgo-select --help)", tt.args, line, tt.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("run(%q) stdout = %q; want nothing", tt.args, stdout.String())
			}
		})
	}
}

func TestHelpAndVersionGoToStdout(t *testing.T) {
	for _, tt := range []struct {
		arg, want string
		presets   bool // the help names them only in a binary built with cgo
	}{
		{"--help", "usage: nvgo-select [options] [-- COMMAND [ARG ...]]", false},
		{"-h", "default: 10, as nvisel really", false},
		{"--help", "vgpu-h100, or a scenario JSON file", true},
		{"--help", "dgx-h100-mig,", true},
		{"--help", "fewer: print nothing, exit 4", false},
		{"--version", "nvgo-select (nvgo", false},
	} {
		t.Run(tt.arg+" prints "+tt.want, func(t *testing.T) {
			if tt.presets && tool.PresetNames() == nil {
				t.Skip("built without cgo: no fake fleet, so no preset names in the help")
			}
			var stdout, stderr bytes.Buffer
			if code := run([]string{tt.arg}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), tt.want) || stderr.Len() != 0 {
				t.Errorf("run(%s) = %d, stdout %q, stderr %q; want 0 and %q", tt.arg, code, stdout.String(), stderr.String(), tt.want)
			}
		})
	}
}
