package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func TestReconcileTrustsWhicheverRecordIsAhead(t *testing.T) {
	tests := []struct {
		name     string
		st       *state
		csvLast  int64
		csvOK    bool
		want     resume
		wantNote string // part of the note; "" for none
	}{
		{name: "a new directory has no past", want: resume{}},
		{
			name: "the state alone says where the log stopped",
			st:   &state{LastEnd: t0}, want: resume{Last: t0, Known: true},
		},
		{
			name: "a state ahead of the CSV is normal: idle intervals write no rows",
			st:   &state{LastEnd: t0}, csvLast: t0.Add(-time.Hour).Unix(), csvOK: true,
			want: resume{Last: t0, Known: true},
		},
		{
			name: "a state level with the CSV agrees",
			st:   &state{LastEnd: t0.Add(300 * time.Millisecond)}, csvLast: t0.Unix(), csvOK: true,
			want: resume{Last: t0.Add(300 * time.Millisecond), Known: true},
		},
		{
			name: "a CSV ahead of the state (a crash between the writes) wins, so its interval is not written again",
			st:   &state{LastEnd: t0}, csvLast: t0.Add(5 * time.Minute).Unix(), csvOK: true,
			want:     resume{Last: time.Unix(t0.Add(5*time.Minute).Unix(), 0), Known: true},
			wantNote: "is behind the CSV",
		},
		{
			name:    "without a state file the newest row is where the log stopped",
			csvLast: t0.Unix(), csvOK: true,
			want:     resume{Last: time.Unix(t0.Unix(), 0), Known: true},
			wantNote: "no state file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := reconcile(tt.st, tt.csvLast, tt.csvOK, nil)
			if !got.Last.Equal(tt.want.Last) || got.Known != tt.want.Known {
				t.Errorf("reconcile = %v known=%v, want %v known=%v", got.Last, got.Known, tt.want.Last, tt.want.Known)
			}
			if (tt.wantNote == "") != (got.Note == "") || !strings.Contains(got.Note, tt.wantNote) {
				t.Errorf("note = %q, want one containing %q", got.Note, tt.wantNote)
			}
		})
	}
}

func TestGapBeforeRecordsUnmeasuredTime(t *testing.T) {
	tests := []struct {
		name  string
		r     resume
		start time.Time
		want  gap
		ok    bool
	}{
		{name: "a new directory has no gap", r: resume{}, start: t0},
		{
			name: "one tick after the last interval is a gap of a tick: the start's first tick begins its first interval",
			r:    resume{Last: t0, Known: true, Accounted: t0}, start: t0.Add(5 * time.Second),
			want: gap{Start: t0.Unix(), End: t0.Unix() + 5, Reason: gapNotRunning}, ok: true,
		},
		{name: "the same second is no gap", r: resume{Last: t0, Known: true, Accounted: t0}, start: t0.Add(999 * time.Millisecond)},
		{
			name: "a gap starts where the log accounts for the GPUs",
			r:    resume{Last: t0, Known: true, Accounted: t0.Add(30 * time.Second)}, start: t0.Add(95 * time.Second),
			want: gap{Start: t0.Unix() + 30, End: t0.Unix() + 95, Reason: gapNotRunning}, ok: true,
		},
		{
			name: "a restart 95 seconds later is a gap of 95 seconds",
			r:    resume{Last: t0, Known: true, Accounted: t0}, start: t0.Add(95 * time.Second),
			want: gap{Start: t0.Unix(), End: t0.Unix() + 95, Reason: gapNotRunning}, ok: true,
		},
		{name: "a start before the last interval (the clock went back) is no gap", r: resume{Last: t0, Known: true, Accounted: t0}, start: t0.Add(-time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := gapBefore(tt.r, tt.start)
			if ok != tt.ok || got != tt.want {
				t.Errorf("gapBefore = %+v, %v; want %+v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestNextBoundaryLaysIntervalsFromMidnight(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	tests := []struct {
		name     string
		t        time.Time
		interval time.Duration
		loc      *time.Location
		want     time.Time
	}{
		{name: "the next multiple of 5m", t: t0.Add(2*time.Minute + 7*time.Second), interval: 5 * time.Minute, loc: time.UTC, want: t0.Add(5 * time.Minute)},
		{name: "a boundary is followed by the next one", t: t0, interval: 5 * time.Minute, loc: time.UTC, want: t0.Add(5 * time.Minute)},
		{
			name: "the last interval of a day ends at midnight",
			t:    time.Date(2025, 1, 1, 23, 57, 0, 0, time.UTC), interval: 5 * time.Minute, loc: time.UTC,
			want: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC),
		},
		{
			name: "an interval that does not divide the day is cut at midnight",
			t:    time.Date(2025, 1, 1, 23, 50, 0, 0, time.UTC), interval: 7 * time.Hour, loc: time.UTC,
			want: time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC),
		},
		{
			name: "boundaries follow local midnight",
			t:    time.Date(2025, 1, 1, 22, 10, 0, 0, time.UTC), interval: time.Hour, loc: berlin,
			want: time.Date(2025, 1, 1, 23, 0, 0, 0, time.UTC), // midnight in Berlin
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nextBoundary(tt.t, tt.interval, tt.loc); !got.Equal(tt.want) {
				t.Errorf("nextBoundary(%v, %v) = %v, want %v", tt.t, tt.interval, got, tt.want)
			}
		})
	}
}

func TestParseGapReadsWhatFormatGapWrites(t *testing.T) {
	tests := []struct {
		name string
		g    gap
		line string
	}{
		{name: "a gap of the whole log leaves the GPU columns empty", g: gap{Start: 100, End: 195, Reason: gapNotRunning}, line: "100,195,95,not running,,"},
		{
			name: "a gap of one GPU names it",
			g:    gap{Start: 100, End: 110, Reason: "processes of GPU 1 not listed: Unknown Error", OnGPU: true, GPU: 1, UUID: "GPU-1"},
			line: "100,110,10,processes of GPU 1 not listed: Unknown Error,1,GPU-1",
		},
		{name: "GPU 0 is a GPU, not the whole log", g: gap{Start: 1, End: 2, Reason: "r", OnGPU: true}, line: "1,2,1,r,0,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(formatGap(tt.g)); got != tt.line+"\n" {
				t.Errorf("formatGap = %q, want %q", got, tt.line+"\n")
			}
			got, err := parseGap(tt.line)
			if err != nil || got != tt.g {
				t.Errorf("parseGap(%q) = %+v, %v; want %+v", tt.line, got, err, tt.g)
			}
			if !isWholeGap(tt.line) {
				t.Errorf("isWholeGap(%q) = false", tt.line)
			}
		})
	}
	if got := string(formatGap(gap{Start: 1, End: 2, Reason: "a, b\nc"})); got != "1,2,1,a; b?c,,\n" {
		t.Errorf("a reason with a comma and a line break is written %q", got)
	}
}

func TestParseGapReadsRowsOfEveryVersion(t *testing.T) {
	tests := []struct {
		line    string
		want    gap
		wantErr string // part of the error; "" for none
		whole   bool   // isWholeGap
	}{
		{line: "100,195,95,not running", want: gap{Start: 100, End: 195, Reason: gapNotRunning}, whole: true},
		{line: "100,195,95,not running,,", want: gap{Start: 100, End: 195, Reason: gapNotRunning}, whole: true},
		{line: "100,110,10,r,3,GPU-3\r", want: gap{Start: 100, End: 110, Reason: "r", OnGPU: true, GPU: 3, UUID: "GPU-3"}, whole: true},
		{line: "100,110,10,r,3,GPU-3,later", want: gap{Start: 100, End: 110, Reason: "r", OnGPU: true, GPU: 3, UUID: "GPU-3"}},
		{line: "100,110", want: gap{Start: 100, End: 110}},
		{line: "100,110,10,r,", want: gap{Start: 100, End: 110, Reason: "r"}},
		{line: "100,110,9,r,,", want: gap{Start: 100, End: 110, Reason: "r"}}, // Seconds disagrees: not whole
		{line: "x,1,1,r", wantErr: "bad Start"},
		{line: "5,4,1,r", wantErr: "Start ≤ End"},
		{line: "5", wantErr: "want Start,End"},
		{line: "1,2,1,r,-1,", wantErr: `bad GPU Number "-1"`},
		{line: "1,2,1,r,one,", wantErr: `bad GPU Number "one"`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := parseGap(tt.line)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("parseGap = %+v, %v; want an error with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseGap = %+v, %v; want %+v", got, err, tt.want)
			}
			if w := isWholeGap(tt.line); w != tt.whole {
				t.Errorf("isWholeGap = %v, want %v", w, tt.whole)
			}
		})
	}
}

// FuzzParseGap checks that parseGap never panics, that what it accepts is
// a span forward in time, and that writing a parsed gap and reading it
// back gives the same gap, as a whole row.
func FuzzParseGap(f *testing.F) {
	for _, s := range []string{
		gapsHeader, oldGapsHeader,
		"100,195,95,not running", "100,195,95,not running,,",
		"100,110,10,processes of GPU 1 not listed: Unknown Error,1,GPU-1",
		"1,2", "1,2,1,r,-1,", "1,2,1,r,7", "5,4,1,r", "", ",,,,,", "1,2,1,\x00\xff,0,\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		g, err := parseGap(line)
		if err != nil {
			return
		}
		if g.Start <= 0 || g.End < g.Start || (g.OnGPU && g.GPU < 0) || (!g.OnGPU && g.GPU != 0) {
			t.Fatalf("parseGap(%q) accepted %+v", line, g)
		}
		out := string(formatGap(g))
		if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
			t.Fatalf("formatGap(parseGap(%q)) = %q: not one line", line, out)
		}
		body := strings.TrimSuffix(out, "\n")
		g2, err := parseGap(body)
		if err != nil || g2 != g || !isWholeGap(body) {
			t.Fatalf("the written gap %q reads back as %+v, %v (whole: %v); want %+v", out, g2, err, isWholeGap(body), g)
		}
	})
}

// FuzzUpgradeGaps checks that adding the GPU columns to an old gaps.csv
// changes nothing parseGap reads from it, line by line, and gives every
// whole row the header's six fields.
func FuzzUpgradeGaps(f *testing.F) {
	for _, s := range []string{
		"100,195,95,not running\n",
		"100,195,95,not running\r\n200,300,100,x\n",
		"100,195,95,not running\n100,1",
		"junk\n\n1,2\n1,2,1,r,0,GPU-0\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rows string) {
		path := filepath.Join(t.TempDir(), gapsName)
		before := oldGapsHeader + "\n" + rows
		if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		upgraded, err := upgradeGaps(path)
		if err != nil || !upgraded {
			t.Fatalf("upgradeGaps = %v, %v; want true, nil", upgraded, err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		after := string(b)
		oldLines, newLines := strings.SplitAfter(before, "\n"), strings.SplitAfter(after, "\n")
		if len(oldLines) != len(newLines) || newLines[0] != gapsHeader+"\n" {
			t.Fatalf("upgraded %q to %q: want the same lines under the new header", before, after)
		}
		for i := 1; i < len(oldLines); i++ {
			o, n := strings.TrimSuffix(oldLines[i], "\n"), strings.TrimSuffix(newLines[i], "\n")
			og, oerr := parseGap(o)
			ng, nerr := parseGap(n)
			if (oerr == nil) != (nerr == nil) || og != ng {
				t.Fatalf("line %d %q read %+v, %v; upgraded %q reads %+v, %v", i+1, o, og, oerr, n, ng, nerr)
			}
			if isWholeGap(o) != isWholeGap(n) || (isWholeGap(n) && strings.Count(strings.TrimSuffix(n, "\r"), ",") != 5) {
				t.Fatalf("line %d %q upgraded to %q: a whole row must stay whole, with six fields", i+1, o, n)
			}
		}
		if again, err := upgradeGaps(path); err != nil || again {
			t.Fatalf("a second upgradeGaps = %v, %v; want false, nil", again, err)
		}
	})
}

func TestUpgradeGapsAddsTheGPUColumnsToAnOldFile(t *testing.T) {
	tests := []struct {
		name, before, after string
		upgraded            bool
	}{
		{name: "no file", upgraded: false},
		{
			name:     "an old file's rows get empty GPU columns",
			before:   oldGapsHeader + "\n100,195,95,not running\n200,300,100,not running\n",
			after:    gapsHeader + "\n100,195,95,not running,,\n200,300,100,not running,,\n",
			upgraded: true,
		},
		{
			name:     "lines that are not whole rows are kept as they are",
			before:   oldGapsHeader + "\r\n100,195,95,not running\r\nnot a row\n100,1",
			after:    gapsHeader + "\n100,195,95,not running,,\r\nnot a row\n100,1",
			upgraded: true,
		},
		{name: "a new file is left alone", before: gapsHeader + "\n1,2,1,r,,\n", after: gapsHeader + "\n1,2,1,r,,\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), gapsName)
			if tt.before != "" {
				writeFile(t, path, tt.before)
			}
			upgraded, err := upgradeGaps(path)
			if err != nil || upgraded != tt.upgraded {
				t.Fatalf("upgradeGaps = %v, %v; want %v", upgraded, err, tt.upgraded)
			}
			if tt.before == "" {
				if fileExists(path) {
					t.Errorf("upgradeGaps made a file")
				}
				return
			}
			if got := readFile(t, path); got != tt.after {
				t.Errorf("after upgradeGaps:\n%q\nwant:\n%q", got, tt.after)
			}
		})
	}
}

func TestMergeGapsCountsNoTimeTwice(t *testing.T) {
	notRunning := func(start, end int64) gap { return gap{Start: start, End: end, Reason: gapNotRunning} }
	tests := []struct {
		name string
		in   []gap
		want []gap
	}{
		{name: "none", in: nil, want: nil},
		{name: "apart, they stay apart", in: []gap{notRunning(10, 20), notRunning(30, 40)}, want: []gap{notRunning(10, 20), notRunning(30, 40)}},
		{
			name: "a run stopped before its first interval and the next start, both from the same interval end, are one gap",
			in:   []gap{notRunning(10, 20), notRunning(10, 35)}, want: []gap{notRunning(10, 35)},
		},
		{name: "overlapping, they are one", in: []gap{notRunning(10, 25), notRunning(20, 40)}, want: []gap{notRunning(10, 40)}},
		{name: "one inside another is the outer one", in: []gap{notRunning(10, 40), notRunning(20, 30)}, want: []gap{notRunning(10, 40)}},
		{name: "back to back, they are one", in: []gap{notRunning(10, 20), notRunning(20, 30)}, want: []gap{notRunning(10, 30)}},
		{name: "out of order, they are sorted", in: []gap{notRunning(30, 40), notRunning(10, 20)}, want: []gap{notRunning(10, 20), notRunning(30, 40)}},
		{
			name: "a reason with a semicolon of its own is still joined once",
			in:   []gap{{Start: 10, End: 20, Reason: "a; b"}, {Start: 20, End: 30, Reason: "a; b"}},
			want: []gap{{Start: 10, End: 30, Reason: "a; b"}},
		},
		{
			name: "gaps of different scopes are not merged",
			in:   []gap{notRunning(10, 20), {Start: 15, End: 25, Reason: "r", OnGPU: true, GPU: 1}, {Start: 20, End: 30, Reason: "r", OnGPU: true, GPU: 1}, {Start: 20, End: 30, Reason: "r", OnGPU: true, GPU: 2}},
			want: []gap{notRunning(10, 20), {Start: 15, End: 30, Reason: "r", OnGPU: true, GPU: 1}, {Start: 20, End: 30, Reason: "r", OnGPU: true, GPU: 2}},
		},
		{
			name: "merged, their reasons are joined once each",
			in:   []gap{notRunning(10, 20), {Start: 15, End: 25, Reason: "other"}, notRunning(20, 30)},
			want: []gap{{Start: 10, End: 30, Reason: gapNotRunning + "; other"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mergeGaps(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("mergeGaps(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestReconcileResumesAfterGapsRecordedBackToBack(t *testing.T) {
	last := t0.Unix()
	tests := []struct {
		name string
		gaps []gap
		want int64 // Accounted, Unix seconds
	}{
		{name: "without gaps the last interval's end", want: last},
		{name: "gaps before the last interval do not count", gaps: []gap{{Start: last - 100, End: last - 50}}, want: last},
		{name: "a gap from the last interval's end", gaps: []gap{{Start: last, End: last + 30}}, want: last + 30},
		{name: "gaps back to back", gaps: []gap{{Start: last, End: last + 30}, {Start: last + 30, End: last + 90}}, want: last + 90},
		{name: "a gap after a hole does not follow", gaps: []gap{{Start: last + 10, End: last + 30}}, want: last},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reconcile(&state{LastEnd: t0}, 0, false, tt.gaps)
			if got := r.Accounted.Unix(); got != tt.want || !r.Last.Equal(t0) {
				t.Errorf("Accounted = %d, Last = %v; want %d, %v", got, r.Last, tt.want, t0)
			}
		})
	}
}
