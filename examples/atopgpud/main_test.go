package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseArgsReadsTheFlags(t *testing.T) {
	defaults := options{listen: defaultListen, interval: time.Second}
	with := func(edit func(o *options)) *options {
		o := defaults
		edit(&o)
		return &o
	}
	tests := []struct {
		name    string
		args    []string
		want    *options
		wantErr string // a part of the error; "" for none
	}{
		{name: "no flags give the defaults", want: &defaults},
		{name: "-v turns debug logs on", args: []string{"-v"}, want: with(func(o *options) { o.verbose = true })},
		{name: "--listen takes an address", args: []string{"--listen", "127.0.0.1:0"}, want: with(func(o *options) { o.listen = "127.0.0.1:0" })},
		{name: "--listen=ADDR works too", args: []string{"--listen=[::1]:59123"}, want: with(func(o *options) { o.listen = "[::1]:59123" })},
		{name: "--interval takes a duration", args: []string{"--interval", "500ms"}, want: with(func(o *options) { o.interval = 500 * time.Millisecond })},
		{name: "--simulate takes a preset", args: []string{"--simulate", "dgx-h100"}, want: with(func(o *options) { o.simulate = "dgx-h100" })},
		{name: "--simulate= with nothing is an error", args: []string{"--simulate="}, wantErr: "--simulate needs"},
		{name: "--simulate alone is an error", args: []string{"--simulate"}, wantErr: "flag needs an argument"},
		{name: "--interval 0 is an error", args: []string{"--interval", "0s"}, wantErr: "want at least 10ms"},
		{name: "--interval x is an error", args: []string{"--interval", "x"}, wantErr: "invalid value"},
		// A negative value is the flag's value, not the next flag, and the
		// error names it.
		{name: "a negative --interval is named in the error", args: []string{"--interval", "-1s"}, wantErr: "--interval -1s: want at least 10ms"},
		{name: "a negative --interval= is named in the error", args: []string{"--interval=-5ms"}, wantErr: "--interval -5ms: want at least 10ms"},
		{name: "a negative --interval without a unit is named in the error", args: []string{"--interval", "-1"}, wantErr: `invalid value "-1" for flag -interval`},
		{name: "an empty --listen is an error", args: []string{"--listen="}, wantErr: "--listen needs an address"},
		{name: "an unknown flag is an error", args: []string{"--frobnicate"}, wantErr: "not defined"},
		{name: "a stray word is an error", args: []string{"start"}, wantErr: `unexpected argument "start"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseArgs(%q) = %+v, %v; want an error containing %q", tt.args, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseArgs(%q): %v", tt.args, err)
			}
			if *got != *tt.want {
				t.Errorf("parseArgs(%q) = %+v, want %+v", tt.args, *got, *tt.want)
			}
		})
	}
}

func TestRunExitStatusForHelpAndBadFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		status int
		stdout string // a part of it
		stderr string // a part of it
	}{
		{name: "--help prints the usage and exits 0", args: []string{"--help"}, status: 0, stdout: "atop -k"},
		{name: "-h is --help", args: []string{"-h"}, status: 0, stdout: "127.0.0.1:59123"},
		{name: "a bad flag prints the error and the usage and exits 2", args: []string{"--nope"}, status: 2, stderr: "usage: atopgpud"},
		{name: "a bad interval exits 2", args: []string{"--interval", "-1s"}, status: 2, stderr: "--interval -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.args, &stdout, &stderr); got != tt.status {
				t.Errorf("run(%q) = %d, want %d; stderr:\n%s", tt.args, got, tt.status, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stdout:\n%s\nstderr:\n%s\nwant %q in stdout and %q in stderr", stdout.String(), stderr.String(), tt.stdout, tt.stderr)
			}
			if tt.stdout != "" && stderr.Len() > 0 || tt.stderr != "" && stdout.Len() > 0 {
				t.Errorf("output on the wrong stream: stdout %q, stderr %q", stdout.String(), stderr.String())
			}
		})
	}
}
