package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullWriter takes room bytes, then fails as a full disk does.
type fullWriter struct{ room int }

func (f *fullWriter) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n := f.room
		f.room = 0
		return n, syscall.ENOSPC
	}
	f.room -= len(p)
	return len(p), nil
}

func TestOutputThatCannotBeWrittenIsAnError(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "2025-01-01.csv"), header+"\n1735693200,alice,1,0,50,3600\n")
	writeFile(t, filepath.Join(dir, gapsName), gapsHeader+"\n1735690000,1735690100,100,not running\n")
	svg := filepath.Join(dir, "u.svg")
	report := []string{"report", "--dir", dir, "--svg", svg}
	// How much of the report comes before its last line, "Chart: FILE".
	var whole, stderr bytes.Buffer
	if code := run(context.Background(), report, &whole, &stderr); code != exitOK {
		t.Fatalf("report: exit status %d\n%s", code, stderr.String())
	}
	beforeChart := strings.LastIndex(whole.String(), "\nChart: ")
	if beforeChart < 0 {
		t.Fatalf("the report has no Chart line:\n%s", whole.String())
	}

	const reportFailed = "nvgo-usagelog: report: cannot write the output: no space left on device\n"
	const outputFailed = "nvgo-usagelog: cannot write the output: no space left on device\n"
	tests := []struct {
		name       string
		args       []string
		room       int // bytes written before the disk is full
		wantStderr string
	}{
		{"the table's first line", report, 0, reportFailed},
		{"the middle of the table", report, beforeChart / 2, reportFailed},
		{"the chart's line", report, beforeChart, reportFailed},
		{"--help", []string{"--help"}, 0, outputFailed},
		{"help report", []string{"help", "report"}, 0, outputFailed},
		{"report --help", []string{"report", "--help"}, 10, outputFailed},
		{"run --help", []string{"run", "--help"}, 0, outputFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			code := run(context.Background(), tt.args, &fullWriter{room: tt.room}, &stderr)
			if code != exitError || stderr.String() != tt.wantStderr {
				t.Errorf("run(%q) = %d, stderr %q; want %d, stderr %q", tt.args, code, stderr.String(), exitError, tt.wantStderr)
			}
		})
	}
}
