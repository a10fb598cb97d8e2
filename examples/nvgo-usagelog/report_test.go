package main

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// reportRows are two days of two users, and a day outside the range.
func reportRows() []datedRow {
	return []datedRow{
		{"2025-01-01", row{Time: 1, User: "alice", PID: 1, Usage: some(50), Seconds: some(3600), MemMiB: some(2048)}},
		{"2025-01-01", row{Time: 2, User: "alice", PID: 1, GPU: 1, Usage: some(25), Seconds: some(7200), MemMiB: some(1024)}},
		{"2025-01-01", row{Time: 3, User: "bob", PID: 2, Seconds: some(1800)}},                     // GPU Usage N/A, as a MIG process's
		{"2025-01-02", row{Time: 4, User: "bob", PID: 2, Usage: some(100)}},                        // the original five columns
		{"2025-01-03", row{Time: 5, User: "alice", PID: 1, Usage: some(100), Seconds: some(3600)}}, // outside the range
	}
}

func unixAt(s string) int64 {
	t, err := time.Parse(time.DateTime, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

func reportGaps() []gap {
	return []gap{
		{Start: unixAt("2024-12-30 10:00:00"), End: unixAt("2024-12-30 11:00:00"), Reason: gapNotRunning}, // before the range
		{Start: unixAt("2025-01-01 23:58:00"), End: unixAt("2025-01-02 00:03:00"), Reason: gapNotRunning}, // over midnight
	}
}

func TestAggregateSumsGPUHoursPerUserPerDay(t *testing.T) {
	rp := aggregate([]string{"2025-01-01", "2025-01-02"}, reportRows(), reportGaps(), quotas{"alice": 0.75, "*": 2}, 300, time.UTC)
	tests := []struct {
		name string
		got  usage
		want usage
	}{
		// 50% × 1 h + 25% × 2 h busy, 3 h held, 2 GiB × 1 h + 1 GiB × 2 h.
		{"alice on the first day", rp.Cells[cell{"2025-01-01", "alice"}], usage{Busy: 1, Held: 3, MemGiB: 4}},
		{"bob's N/A usage is held, not busy", rp.Cells[cell{"2025-01-01", "bob"}], usage{Held: 0.5, Unknown: 0.5}},
		{"bob's five-column row stands for --legacy-row", rp.Cells[cell{"2025-01-02", "bob"}], usage{Busy: 1.0 / 12, Held: 1.0 / 12}},
		{"alice's total leaves out the day outside the range", rp.ByUser["alice"], usage{Busy: 1, Held: 3, MemGiB: 4}},
		{"bob's total", rp.ByUser["bob"], usage{Busy: 1.0 / 12, Held: 7.0 / 12, Unknown: 0.5}},
		{"the first day", rp.ByDay["2025-01-01"], usage{Busy: 1, Held: 3.5, MemGiB: 4, Unknown: 0.5}},
		{"everything", rp.Total, usage{Busy: 13.0 / 12, Held: 43.0 / 12, MemGiB: 4, Unknown: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !near(tt.got, tt.want) {
				t.Errorf("got %+v, want %+v", tt.got, tt.want)
			}
		})
	}
	if got := strings.Join(rp.Users, ","); got != "alice,bob" {
		t.Errorf("users = %s", got)
	}
	if len(rp.Gaps) != 1 || !rp.GapDays["2025-01-01"] || !rp.GapDays["2025-01-02"] {
		t.Errorf("gaps = %+v on %v; want the one over midnight, on both days", rp.Gaps, rp.GapDays)
	}
}

func TestReportCountsOverlappingGapsOnce(t *testing.T) {
	dir := t.TempDir()
	// A run killed before its first interval ended recorded 10:00 to
	// 10:05; the next start, 10:00 to 10:20.
	a, b, c := unixAt("2025-01-01 10:00:00"), unixAt("2025-01-01 10:05:00"), unixAt("2025-01-01 10:20:00")
	writeFile(t, filepath.Join(dir, gapsName), gapsHeader+"\n"+
		string(formatGap(gap{Start: a, End: b, Reason: gapNotRunning}))+string(formatGap(gap{Start: a, End: c, Reason: gapNotRunning})))
	gaps, err := readGaps(dir, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	rp := aggregate([]string{"2025-01-01"}, nil, gaps, nil, 300, time.UTC)
	var out bytes.Buffer
	if err := writeTable(&out, rp, dir, time.UTC); err != nil {
		t.Fatal(err)
	}
	want := "Gaps in the log (usage was not measured; a gap of one GPU names it):\n  2025-01-01 10:00:00  to  2025-01-01 10:20:00  (20m0s, not running)\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("the table ends:\n%s\nwant it to end:\n%s", out.String(), want)
	}
}

func near(a, b usage) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return eq(a.Busy, b.Busy) && eq(a.Held, b.Held) && eq(a.MemGiB, b.MemGiB) && eq(a.Unknown, b.Unknown)
}

// TestWriteTablePrintsAnAlignedTableWithQuotas also pins down N/A usage:
// bob's first day, all N/A, is N/A (not 0%) busy, of held and of his
// quota, and his N/A half hour is left out of his and everyone's
// BUSY/HELD mean (100% and 1.08/3.08, not 14% and 1.08/3.58).
func TestWriteTablePrintsAnAlignedTableWithQuotas(t *testing.T) {
	rp := aggregate([]string{"2025-01-01", "2025-01-02", "2025-01-03"}, reportRows()[:4], reportGaps(), quotas{"alice": 0.75, "*": 2}, 300, time.UTC)
	var b bytes.Buffer
	if err := writeTable(&b, rp, "/logs", time.UTC); err != nil {
		t.Fatal(err)
	}
	want := `GPU usage by user, 2025-01-01 to 2025-01-03 (/logs)

DAY         USER    BUSY GPU-H  HELD GPU-H  BUSY/HELD  MEM GIB-H  QUOTA GPU-H  QUOTA USE  NOTE
2025-01-01  alice        1.00         3.00        33%       4.00         0.75       133%  OVER QUOTA, gap in the log
            bob           N/A         0.50        N/A       0.00         2.00        N/A
2025-01-02  bob          0.08         0.08       100%       0.00         2.00         4%  gap in the log
2025-01-03  (none)
------------------------------------------------------------------------------------------
TOTAL       alice        1.00         3.00        33%       4.00         2.25        44%
TOTAL       bob          0.08*        0.58       100%       0.00         6.00         1%
TOTAL       (all)        1.08*        3.58        35%       4.00            -          -

* leaves out time whose GPU Usage was N/A (a MIG process's, say): it is held, not
  busy, and BUSY/HELD is over the time whose usage is known; N/A: none was known

Quotas are busy GPU-hours per day; a TOTAL's quota is the daily quota × the days of the range.

Gaps in the log (usage was not measured; a gap of one GPU names it):
  2025-01-01 23:58:00  to  2025-01-02 00:03:00  (5m0s, not running)
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseQuotas(t *testing.T) {
	tests := []struct {
		in      string
		want    quotas
		wantErr string
	}{
		{in: "", want: quotas{}},
		{in: "alice=4,bob=2.5", want: quotas{"alice": 4, "bob": 2.5}},
		{in: " alice = 4 , *=1 ", want: quotas{"alice": 4, "*": 1}},
		{in: "alice", wantErr: "want USER=HOURS"},
		{in: "=4", wantErr: "want USER=HOURS"},
		{in: "alice=-1", wantErr: "positive number"},
		{in: "alice=x", wantErr: "positive number"},
		{in: "alice=1,alice=2", wantErr: "alice given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseQuotas(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseQuotas(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("parseQuotas(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
	q := quotas{"alice": 4, "*": 1}
	if h, ok := q.of("zed"); !ok || h != 1 {
		t.Errorf(`"*" does not give zed a quota: %v, %v`, h, ok)
	}
}

func TestReportRangeDefaultsToTheDaysLogged(t *testing.T) {
	now := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	files := []dataFile{{Day: "2025-03-01"}, {Day: "2025-03-05"}}
	tests := []struct {
		name, from, to   string
		files            []dataFile
		wantFrom, wantTo string
		wantErr          string
	}{
		{name: "no flags: every day logged", files: files, wantFrom: "2025-03-01", wantTo: "2025-03-05"},
		{name: "no flags and no files: today", wantFrom: "2025-03-10", wantTo: "2025-03-10"},
		{name: "yesterday alone", from: "yesterday", to: "yesterday", files: files, wantFrom: "2025-03-09", wantTo: "2025-03-09"},
		{name: "--from alone runs to the last day logged", from: "2025-03-03", files: files, wantFrom: "2025-03-03", wantTo: "2025-03-05"},
		{name: "--to alone starts at the first day logged", to: "today", files: files, wantFrom: "2025-03-01", wantTo: "2025-03-10"},
		{name: "a bad date", from: "March", wantErr: `--from: "March" is not a date`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, err := reportRange(&reportOptions{from: tt.from, to: tt.to}, tt.files, now)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || from != tt.wantFrom || to != tt.wantTo {
				t.Errorf("range = %s..%s, %v; want %s..%s", from, to, err, tt.wantFrom, tt.wantTo)
			}
		})
	}
	if _, err := daysBetween("2025-03-05", "2025-03-01"); err == nil {
		t.Errorf("daysBetween accepted a reversed range")
	}
}

func TestReadRowsSkipsMalformedRowsNamingFileAndLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "2025-01-01.csv")
	writeFile(t, path, header+"\n100,alice,1,0,50,300\nnot,a,row,x,y\n\n200,bob,2,1,101\n300,carol,3,0,5,300\n400,dan,4,0,5")
	files, err := dataFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	rows, err := readRows(files, "2025-01-01", "2025-01-01", func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, r := range rows {
		users = append(users, r.User)
	}
	if got := strings.Join(users, ","); got != "alice,carol" {
		t.Errorf("rows of %s, want alice,carol", got)
	}
	want := []string{
		path + `:3: bad Timestamp "not": want a positive integer; row skipped`,
		path + `:5: bad GPU Usage "101": out of range 0..100; row skipped`,
		path + `:7: last line has no end (being written, or torn by a crash); skipped`,
	}
	if strings.Join(warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"))
	}
}
