package main

import (
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
	g := gap{Start: 100, End: 195, Reason: gapNotRunning}
	line := string(formatGap(g))
	if line != "100,195,95,not running\n" {
		t.Errorf("formatGap = %q", line)
	}
	got, err := parseGap(strings.TrimSuffix(line, "\n"))
	if err != nil || got != g {
		t.Errorf("parseGap(%q) = %+v, %v; want %+v", line, got, err, g)
	}
	for _, bad := range []string{"x,1,1,r", "5,4,1,r", "5"} {
		if _, err := parseGap(bad); err == nil {
			t.Errorf("parseGap(%q) accepted it", bad)
		}
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
