package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRepairTailEndsWholeLinesAndCutsTornOnes(t *testing.T) {
	const (
		row5  = "1795400300,bob,1235,1,60"
		row10 = "1795400300,bob,1235,1,60,300,1024,5,300,GPU-1"
	)
	tests := []struct {
		name     string
		content  *string // nil: no file
		side     *string // the side file before; nil: none
		wantFile string
		wantCut  string
		wantSide string // the side file after; "" for none
	}{
		{name: "a missing file is left alone", content: nil},
		{name: "an empty file is left alone", content: ptr(""), wantFile: ""},
		{name: "whole lines are left alone", content: ptr("h\n1,a\n"), wantFile: "h\n1,a\n"},
		{
			name:    "a whole row of the five original columns without its newline is kept and ended",
			content: ptr(header + "\n" + row5), wantFile: header + "\n" + row5 + "\n",
		},
		{
			name:    "a whole row of every column without its newline is kept and ended",
			content: ptr(header + "\n" + row10), wantFile: header + "\n" + row10 + "\n",
		},
		{
			name:    "half a row is cut and kept in the side file",
			content: ptr(header + "\n" + row5 + "\n2,b,3"), wantFile: header + "\n" + row5 + "\n",
			wantCut: "2,b,3", wantSide: "2,b,3\n",
		},
		{
			name:    "a row of every column cut after its fifth is cut",
			content: ptr(header + "\n" + row10[:len(row5)+4]), wantFile: header + "\n",
			wantCut: row10[:len(row5)+4], wantSide: row10[:len(row5)+4] + "\n",
		},
		{
			name:    "garbage is cut and kept in the side file",
			content: ptr(header + "\n" + row5 + "\n\x00\x00garbage"), wantFile: header + "\n" + row5 + "\n",
			wantCut: "\x00\x00garbage", wantSide: "\x00\x00garbage\n",
		},
		{
			name:    "a second cut is appended to the side file",
			content: ptr(header + "\n" + row5 + "\n17954"), side: ptr("2,b,3\n"),
			wantFile: header + "\n" + row5 + "\n", wantCut: "17954", wantSide: "2,b,3\n17954\n",
		},
		{name: "a file of only half a header is emptied", content: ptr("Timest"), wantFile: "", wantCut: "Timest", wantSide: "Timest\n"},
		{
			name:     "a torn line longer than the read chunk is cut whole",
			content:  ptr("h\n" + strings.Repeat("x", 10000)),
			wantFile: "h\n", wantCut: strings.Repeat("x", 10000), wantSide: strings.Repeat("x", 10000) + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "2025-01-01.csv")
			if tt.content != nil {
				writeFile(t, path, *tt.content)
			}
			if tt.side != nil {
				writeFile(t, path+tornSuffix, *tt.side)
			}
			got, err := repairTail(path, isWholeRow)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.Cut) != tt.wantCut {
				t.Errorf("cut %q, want %q", got.Cut, tt.wantCut)
			}
			if tt.content == nil {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("repairTail created the file")
				}
				return
			}
			if got := readFile(t, path); got != tt.wantFile {
				t.Errorf("file = %q, want %q", got, tt.wantFile)
			}
			side, err := os.ReadFile(path + tornSuffix)
			switch {
			case tt.wantSide == "" && !os.IsNotExist(err):
				t.Errorf("side file %q (%v), want none", side, err)
			case tt.wantSide != "" && string(side) != tt.wantSide:
				t.Errorf("side file = %q (%v), want %q", side, err, tt.wantSide)
			case tt.wantSide != "" && got.Side != path+tornSuffix:
				t.Errorf("repairTail named side file %q, want %q", got.Side, path+tornSuffix)
			}
		})
	}
}

func TestWholeLinesAreToldFromTornOnes(t *testing.T) {
	tests := []struct {
		name  string
		whole func(string) bool
		line  string
		want  bool
	}{
		{"a row of the five original columns", isWholeRow, "1795400300,bob,1235,1,60", true},
		{"a row of every column, N/A included", isWholeRow, "1795400300,bob,1235,1,60,300,,5,300,GPU-1", true},
		{"a row with columns of a later version", isWholeRow, "1795400300,bob,1235,1,60,300,1,5,300,GPU-1,x", true},
		{"a row of every column cut after its sixth", isWholeRow, "1795400300,bob,1235,1,60,3", false},
		{"a row cut before its fifth column", isWholeRow, "1795400300,bob,1235,1", false},
		{"a row cut just after its fourth comma", isWholeRow, "1795400300,bob,1235,1,", false},
		{"a row of the five original columns with an N/A usage", isWholeRow, "1795400300,bob,1235,1,[N/A]", true},
		{"a row cut inside a quoted user", isWholeRow, `1795400300,"bo`, false},
		{"the header", isWholeRow, header, false},
		{"a gap as formatGap writes it", isWholeGap, "100,195,95,not running", true},
		{"a gap whose Seconds disagree with Start and End", isWholeGap, "100,195,9,not running", false},
		{"a gap cut before its Reason", isWholeGap, "100,195,95", false},
		{"the gaps header", isWholeGap, gapsHeader, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.whole(tt.line); got != tt.want {
				t.Errorf("whole(%q) = %v, want %v", tt.line, got, tt.want)
			}
		})
	}
}

func TestAppendLinesWritesTheHeaderOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.csv")
	for _, data := range []string{"1,a\n2,b\n", "3,c\n"} {
		if err := appendLines(path, "H", []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readFile(t, path), "H\n1,a\n2,b\n3,c\n"; got != want {
		t.Errorf("file = %q, want %q", got, want)
	}
}

func TestLastRowTimeFindsTheNewestWellFormedRow(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    int64
		ok      bool
	}{
		{name: "only a header has no row", content: header + "\n"},
		{name: "the newest of several rows", content: header + "\n100,a,1,0,5\n300,a,1,0,5\n200,a,1,0,5\n", want: 300, ok: true},
		{name: "a malformed line is passed over", content: header + "\n100,a,1,0,5\nxx,yy\n", want: 100, ok: true},
		{name: "a last line without its end does not count", content: header + "\n100,a,1,0,5\n900,a,1,0,5", want: 100, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.csv")
			writeFile(t, path, tt.content)
			got, ok, err := lastRowTime(path)
			if err != nil || got != tt.want || ok != tt.ok {
				t.Errorf("lastRowTime = %d, %v, %v; want %d, %v", got, ok, err, tt.want, tt.ok)
			}
		})
	}
}

func TestStateFileRoundTripsAndRejectsGarbage(t *testing.T) {
	dir := t.TempDir()
	if st, err := loadState(dir); st != nil || err != nil {
		t.Fatalf("loadState of an empty directory = %v, %v; want nil, nil", st, err)
	}
	want := state{LastEnd: time.Date(2025, 1, 1, 0, 5, 0, 1234, time.UTC), File: "2025-01-01.csv", Interval: "5m0s", Tick: "1s"}
	if err := saveState(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := loadState(dir)
	if err != nil || got == nil || !got.LastEnd.Equal(want.LastEnd) || got.File != want.File {
		t.Fatalf("loadState = %+v, %v; want %+v", got, err, want)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("saveState left %d files, want only the state file", len(ents))
	}
	writeFile(t, filepath.Join(dir, stateName), "{not json")
	if _, err := loadState(dir); err == nil {
		t.Errorf("loadState accepted a broken state file")
	}
}

func TestLockDirKeepsASecondLoggerOut(t *testing.T) {
	dir := t.TempDir()
	first, err := lockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockDir(dir); err == nil || !strings.Contains(err.Error(), "another nvgo-usagelog") {
		t.Errorf("second lockDir = %v, want \"another nvgo-usagelog is writing\"", err)
	}
	first.Close()
	second, err := lockDir(dir)
	if err != nil {
		t.Fatalf("lockDir after the first closed: %v", err)
	}
	second.Close()
}

func TestDataFilesListsDailyCSVsByDate(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"2025-01-02.csv", "2025-01-01.csv", "gaps.csv", "2025-13-01.csv", "notes.txt"} {
		writeFile(t, filepath.Join(dir, n), "")
	}
	files, err := dataFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var days []string
	for _, f := range files {
		days = append(days, f.Day)
	}
	if got := strings.Join(days, " "); got != "2025-01-01 2025-01-02" {
		t.Errorf("days = %s", got)
	}
}

func ptr[T any](v T) *T { return &v }

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
