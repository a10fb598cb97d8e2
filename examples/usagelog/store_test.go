package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRepairTailCutsATornLastLine(t *testing.T) {
	tests := []struct {
		name     string
		content  *string // nil: no file
		wantFile string
		wantCut  string
	}{
		{name: "a missing file is left alone", content: nil},
		{name: "an empty file is left alone", content: ptr(""), wantFile: ""},
		{name: "whole lines are left alone", content: ptr("h\n1,a\n"), wantFile: "h\n1,a\n"},
		{name: "half a row is cut", content: ptr("h\n1,a\n2,b,3"), wantFile: "h\n1,a\n", wantCut: "2,b,3"},
		{name: "a file of only half a line is emptied", content: ptr("Timest"), wantFile: "", wantCut: "Timest"},
		{
			name:     "a torn line longer than the read chunk is cut whole",
			content:  ptr("h\n" + strings.Repeat("x", 10000)),
			wantFile: "h\n", wantCut: strings.Repeat("x", 10000),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d.csv")
			if tt.content != nil {
				writeFile(t, path, *tt.content)
			}
			cut, err := repairTail(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(cut) != tt.wantCut {
				t.Errorf("cut %q, want %q", cut, tt.wantCut)
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
	if _, err := lockDir(dir); err == nil || !strings.Contains(err.Error(), "another usagelog") {
		t.Errorf("second lockDir = %v, want \"another usagelog is writing\"", err)
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
