//go:build cgo

// The logger's tests run logUsage on a fake fleet whose clock moves only
// when a test advances it, one tick at a time, so every interval's rows are
// exact.

package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// syncBuffer collects the log of a logger running in another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rig is logUsage running on a fake fleet and clock.
type rig struct {
	t        *testing.T
	fleet    *fakegpu.Fleet
	clock    *fleetclock.Stepped
	dir      string
	interval time.Duration
	tick     time.Duration
	acc      *nvgo.Accumulator
	wrote    chan nvgo.Interval
	done     chan error
	cancel   context.CancelFunc
	log      *syncBuffer
	stopped  bool
}

// startRig starts logging fleet into dir; the fleet's clock must be on a
// whole tick.
func startRig(t *testing.T, fleet *fakegpu.Fleet, dir string, interval, tick time.Duration) *rig {
	t.Helper()
	clock := fleetclock.NewStepped(fleet)
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{
		t: t, fleet: fleet, clock: clock, dir: dir, interval: interval, tick: tick,
		wrote: make(chan nvgo.Interval, 1000), done: make(chan error, 1), log: &syncBuffer{},
	}
	ready := make(chan *nvgo.Accumulator, 1)
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	cfg := logConfig{
		dir: dir, interval: interval, tick: tick, loc: time.UTC,
		log:   slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		ready: func(a *nvgo.Accumulator) { ready <- a },
		wrote: func(iv nvgo.Interval) { r.wrote <- iv },
	}
	go func() { r.done <- logUsage(ctx, lib, cfg) }()
	t.Cleanup(func() {
		r.stop()
		lib.Close()
	})
	select {
	case r.acc = <-ready:
	case err := <-r.done:
		t.Fatalf("logUsage returned before it started: %v\n%s", err, r.log)
	case <-time.After(10 * time.Second):
		t.Fatal("the logger did not start")
	}
	return r
}

// run advances the clock by d, a tick at a time, waiting for each tick to
// be published and, at an interval's end, for the interval to be written.
func (r *rig) run(d time.Duration) {
	r.t.Helper()
	for range int(d / r.tick) {
		published := r.acc.Updated()
		r.clock.Advance(r.tick)
		select {
		case <-published:
		case <-time.After(10 * time.Second):
			r.t.Fatalf("the tick at %v was not published", r.clock.Now())
		}
		now := r.clock.Now()
		if nextBoundary(now.Add(-time.Nanosecond), r.interval, time.UTC).Equal(now) {
			r.waitWritten()
		}
	}
}

func (r *rig) waitWritten() nvgo.Interval {
	r.t.Helper()
	select {
	case iv := <-r.wrote:
		return iv
	case <-time.After(10 * time.Second):
		r.t.Fatalf("no interval was written at %v\n%s", r.clock.Now(), r.log)
	}
	return nvgo.Interval{}
}

// stop ends the logger as SIGTERM does, and checks that it returned nil.
func (r *rig) stop() {
	r.t.Helper()
	if r.stopped {
		return
	}
	r.stopped = true
	r.cancel()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("logUsage: %v\n%s", err, r.log)
		}
		select {
		case <-r.acc.Done():
		default:
			r.t.Errorf("logUsage returned and left its accumulator running")
		}
	case <-time.After(10 * time.Second):
		r.t.Fatal("the logger did not stop")
	}
}

// Fake PIDs: ghostPID has no host process, so its user reads "?".
const (
	ghostPID  = 4190001
	ghostPID2 = 4190002
)

// selfUser is the user the library reports for this test's own PID, which
// fake processes borrow to have a real owner ("?" where the PID namespace
// is not the host's).
func selfUser(t *testing.T) string {
	t.Helper()
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	if err := fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(os.Getpid())}); err != nil {
		t.Fatal(err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet))
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	snap, err := lib.Snapshot(context.Background())
	if err != nil || len(snap.Devices) == 0 || len(snap.Devices[0].Processes) == 0 {
		t.Fatalf("snapshot of the fake fleet: %v", err)
	}
	return snap.Devices[0].Processes[0].Username.Or("?")
}

// csvLines returns the lines of a file in the rig's directory, header and
// all; none when it does not exist.
func csvLines(t *testing.T, dir, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// rowsIn parses the rows of a daily CSV, checking its header.
func rowsIn(t *testing.T, dir, name string) []row {
	t.Helper()
	lines := csvLines(t, dir, name)
	if len(lines) == 0 {
		return nil
	}
	if lines[0] != header {
		t.Fatalf("%s starts with %q, want the header", name, lines[0])
	}
	var rows []row
	for i, l := range lines[1:] {
		r, err := parseRow(l)
		if err != nil {
			t.Fatalf("%s:%d: %v", name, i+2, err)
		}
		rows = append(rows, r)
	}
	return rows
}

var day0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) // the fake fleet's clock starts here

// at is the Unix time of the fake clock's start plus d.
func at(d time.Duration) int64 { return day0.Add(d).Unix() }

func TestRunWritesAnAveragedRowPerProcessPerInterval(t *testing.T) {
	me := selfUser(t)
	t.Logf("this test's own PID belongs to %q", me)
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(os.Getpid()), SM: 60, Mem: 20, UsedMemory: 2 << 30}))
	must(t, fleet.GPU(1).StartProcess(fakegpu.Process{PID: ghostPID, SM: 30, Mem: 5, UsedMemory: 1 << 30}))
	// GPU 2 stays idle: it has no rows.
	dir := t.TempDir()
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)

	r.run(10 * time.Second)
	// In the second interval the ghost's load changes halfway, and its
	// average is the time-weighted one.
	r.run(5 * time.Second)
	fleet.GPU(1).SetProcessUtilization(ghostPID, 90, 5, 0, 0)
	r.run(15 * time.Second)

	u0, u1 := fleet.GPU(0).UUID(), fleet.GPU(1).UUID()
	want := []string{
		header,
		fmt.Sprintf("%d,%s,%d,0,60,10,2048,20,10,%s", at(10*time.Second), me, os.Getpid(), u0),
		fmt.Sprintf("%d,?,%d,1,30,10,1024,5,10,%s", at(10*time.Second), ghostPID, u1),
		fmt.Sprintf("%d,%s,%d,0,60,10,2048,20,10,%s", at(20*time.Second), me, os.Getpid(), u0),
		fmt.Sprintf("%d,?,%d,1,60,10,1024,5,10,%s", at(20*time.Second), ghostPID, u1),
		fmt.Sprintf("%d,%s,%d,0,60,10,2048,20,10,%s", at(30*time.Second), me, os.Getpid(), u0),
		fmt.Sprintf("%d,?,%d,1,90,10,1024,5,10,%s", at(30*time.Second), ghostPID, u1),
	}
	if got := csvLines(t, dir, "2025-01-01.csv"); !slices.Equal(got, want) {
		t.Errorf("2025-01-01.csv:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	st, err := loadState(dir)
	if err != nil || st == nil || st.LastEnd.Unix() != at(30*time.Second) {
		t.Errorf("state = %+v, %v; want the interval ending at 00:00:30", st, err)
	}
}

func TestRunKeepsTheRowsOfProcessesThatExitMidInterval(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	g := fleet.GPU(0)
	dir := t.TempDir()
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)

	must(t, g.StartProcess(fakegpu.Process{PID: ghostPID, SM: 60, UsedMemory: 1 << 30}))
	r.run(4 * time.Second) // seen at ticks 1-4
	g.StopProcess(ghostPID)
	must(t, g.StartProcess(fakegpu.Process{PID: ghostPID2, SM: 100, UsedMemory: 3 << 30}))
	r.run(3 * time.Second) // seen at ticks 5-7
	g.StopProcess(ghostPID2)
	// The first PID comes back as a new process at another load: one row,
	// its load weighted by time.
	must(t, g.StartProcess(fakegpu.Process{PID: ghostPID, SM: 30, UsedMemory: 1 << 30}))
	r.run(2 * time.Second) // seen at ticks 8-9
	g.StopProcess(ghostPID)
	r.run(time.Second) // tick 10 sees nobody

	want := []string{
		header,
		// (4×60 + 2×30) / 6 = 50
		fmt.Sprintf("%d,?,%d,0,50,6,1024,0,10,%s", at(10*time.Second), ghostPID, g.UUID()),
		fmt.Sprintf("%d,?,%d,0,100,3,3072,0,10,%s", at(10*time.Second), ghostPID2, g.UUID()),
	}
	if got := csvLines(t, dir, "2025-01-01.csv"); !slices.Equal(got, want) {
		t.Errorf("2025-01-01.csv:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The next interval has no row: nobody ran.
	r.run(10 * time.Second)
	if got := len(csvLines(t, dir, "2025-01-01.csv")); got != len(want) {
		t.Errorf("an idle interval added rows: %d lines", got)
	}
}

func TestRunWritesThePartialIntervalWhenStopped(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
	dir := t.TempDir()
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r.run(13 * time.Second)
	r.stop()
	if iv := r.waitWritten(); iv.Duration() != 3*time.Second {
		t.Errorf("the last interval lasted %v, want 3s", iv.Duration())
	}
	rows := rowsIn(t, dir, "2025-01-01.csv")
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2", len(rows))
	}
	last := rows[1]
	if last.Time != at(13*time.Second) || last.Seconds != some(3) || last.Interval != some(3) || last.Usage != some(60) {
		t.Errorf("the partial interval's row = %+v; want 00:00:13, 3 s of 3 at 60%%", last)
	}
	st, err := loadState(dir)
	if err != nil || st == nil || st.LastEnd.Unix() != at(13*time.Second) {
		t.Errorf("state = %+v, %v; want the interval ending at 00:00:13", st, err)
	}
}

func TestRunPutsRowsInTheFileOfTheIntervalEndsDate(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
	fleet.Advance(24*time.Hour - 20*time.Second) // 23:59:40
	dir := t.TempDir()
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r.run(40 * time.Second) // to 00:00:20

	times := func(name string) []int64 {
		var ts []int64
		for _, row := range rowsIn(t, dir, name) {
			ts = append(ts, row.Time)
		}
		return ts
	}
	day := 24 * time.Hour
	if got, want := times("2025-01-01.csv"), []int64{at(day - 10*time.Second)}; !slices.Equal(got, want) {
		t.Errorf("2025-01-01.csv has rows at %v, want %v", got, want)
	}
	// The interval that ends at midnight is the new day's first row.
	if got, want := times("2025-01-02.csv"), []int64{at(day), at(day + 10*time.Second), at(day + 20*time.Second)}; !slices.Equal(got, want) {
		t.Errorf("2025-01-02.csv has rows at %v, want %v", got, want)
	}
}

func TestRestartRecordsTheGapAndRepeatsNothing(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
	dir := t.TempDir()
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r.run(20 * time.Second)
	r.stop()

	fleet.Advance(95 * time.Second) // down from 00:00:20 to 00:01:55
	r2 := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r2.run(15 * time.Second) // rows at 00:02:00 (5 s) and 00:02:10

	var times []int64
	for _, row := range rowsIn(t, dir, "2025-01-01.csv") {
		times = append(times, row.Time)
	}
	if want := []int64{at(10 * time.Second), at(20 * time.Second), at(2 * time.Minute), at(130 * time.Second)}; !slices.Equal(times, want) {
		t.Errorf("rows at %v, want %v", times, want)
	}
	wantGaps := []string{gapsHeader, fmt.Sprintf("%d,%d,95,not running,,", at(20*time.Second), at(115*time.Second))}
	if got := csvLines(t, dir, gapsName); !slices.Equal(got, wantGaps) {
		t.Errorf("gaps.csv = %q, want %q", got, wantGaps)
	}
	if !strings.Contains(r2.log.String(), "usage was not measured") {
		t.Errorf("the gap was not logged:\n%s", r2.log)
	}
}

// TestAGPUWhoseProcessesCannotBeReadIsAGapOfThatGPU makes GPU 1's
// processes unreadable from 00:00:05 to 00:00:15, across an interval end:
// its process's rows miss that time, and gaps.csv and the log say so.
func TestAGPUWhoseProcessesCannotBeReadIsAGapOfThatGPU(t *testing.T) {
	tests := []struct {
		name       string
		fault      func(*fakegpu.GPU)
		heal       func(*fakegpu.GPU) // nil: the fault lasts
		wantReason string             // the gaps' Reason, up to the error
		wantWarn   string
		wantGaps   [][2]time.Duration // the gap rows' spans
		wantRows   []float64          // the Seconds of GPU 1's rows
	}{
		{
			name:       "its process lists fail",
			fault:      func(g *fakegpu.GPU) { g.Fail("processes", nvml.ERROR_UNKNOWN) },
			heal:       func(g *fakegpu.GPU) { g.ClearFail("processes") },
			wantReason: "processes of GPU 1 not listed: ",
			wantWarn:   `msg="the processes of a GPU cannot be listed: they are not measured while it fails; the time is recorded in gaps.csv" gpu=1 err=`,
			wantGaps:   [][2]time.Duration{{5 * time.Second, 10 * time.Second}, {10 * time.Second, 15 * time.Second}},
			wantRows:   []float64{5, 5},
		},
		{
			name:       "it is lost",
			fault:      func(g *fakegpu.GPU) { g.Lose() },
			wantReason: "GPU 1 not readable: ",
			wantWarn:   `msg="a GPU cannot be read: its processes are not measured while it fails; the time is recorded in gaps.csv" gpu=1 err=`,
			wantGaps:   [][2]time.Duration{{5 * time.Second, 10 * time.Second}, {10 * time.Second, 20 * time.Second}},
			wantRows:   []float64{5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
			g1 := fleet.GPU(1)
			must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
			must(t, g1.StartProcess(fakegpu.Process{PID: ghostPID2, SM: 30}))
			dir := t.TempDir()
			r := startRig(t, fleet, dir, 10*time.Second, time.Second)
			r.run(5 * time.Second)
			tt.fault(g1)
			r.run(10 * time.Second) // the ticks at 00:00:06 to 00:00:15 fail
			if tt.heal != nil {
				tt.heal(g1)
			}
			r.run(5 * time.Second)
			r.stop()

			lines := csvLines(t, dir, gapsName)
			if len(lines) != 1+len(tt.wantGaps) || lines[0] != gapsHeader {
				t.Fatalf("gaps.csv = %q; want its header and %d rows\n%s", lines, len(tt.wantGaps), r.log)
			}
			for i, span := range tt.wantGaps {
				g, err := parseGap(lines[i+1])
				want := gap{Start: at(span[0]), End: at(span[1]), Reason: g.Reason, OnGPU: true, GPU: 1, UUID: g1.UUID()}
				if err != nil || g != want || !strings.HasPrefix(g.Reason, tt.wantReason) || !isWholeGap(lines[i+1]) {
					t.Errorf("gap row %q = %+v, %v; want %+v with a reason starting %q", lines[i+1], g, err, want, tt.wantReason)
				}
			}
			var seconds []float64
			for _, row := range rowsIn(t, dir, "2025-01-01.csv") {
				if row.GPU == 1 {
					seconds = append(seconds, row.Seconds.v)
				}
			}
			if !slices.Equal(seconds, tt.wantRows) {
				t.Errorf("GPU 1's rows have Seconds %v, want %v", seconds, tt.wantRows)
			}
			log := r.log.String()
			if n := strings.Count(log, tt.wantWarn); n != 1 {
				t.Errorf("the log has %d times %q, want once:\n%s", n, tt.wantWarn, log)
			}
			wantAgain := 0
			if tt.heal != nil {
				wantAgain = 1
			}
			if n := strings.Count(log, `msg="the processes of a GPU are measured again" gpu=1`); n != wantAgain {
				t.Errorf("the log says %d times that GPU 1 is measured again, want %d:\n%s", n, wantAgain, log)
			}

			// The report counts the fault once, as one gap of GPU 1.
			gaps, err := readGaps(dir, func(s string) { t.Error(s) })
			if err != nil {
				t.Fatal(err)
			}
			rp := aggregate([]string{"2025-01-01"}, nil, gaps, nil, 300, time.UTC)
			last := tt.wantGaps[len(tt.wantGaps)-1][1]
			if len(rp.Gaps) != 1 || rp.Gaps[0].Start != at(5*time.Second) || rp.Gaps[0].End != at(last) || !rp.Gaps[0].OnGPU {
				t.Errorf("the report's gaps = %+v; want one of GPU 1 from 00:00:05 to %v", rp.Gaps, last)
			}
		})
	}
}

func TestStartAddsTheGPUColumnsToAnOldGapsFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, gapsName), fmt.Sprintf("%s\n%d,%d,5,not running\n", oldGapsHeader, at(5*time.Second), at(10*time.Second)))
	writeFile(t, filepath.Join(dir, stateName), stateJSON(at(20*time.Second)))
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	fleet.Advance(25 * time.Second)
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r.stop()
	want := []string{
		gapsHeader,
		fmt.Sprintf("%d,%d,5,not running,,", at(5*time.Second), at(10*time.Second)),
		fmt.Sprintf("%d,%d,5,not running,,", at(20*time.Second), at(25*time.Second)),
	}
	if got := csvLines(t, dir, gapsName); !slices.Equal(got, want) {
		t.Errorf("gaps.csv = %q, want %q", got, want)
	}
	if !strings.Contains(r.log.String(), "added the columns GPU Number and GPU UUID to gaps.csv") {
		t.Errorf("the upgrade was not logged:\n%s", r.log)
	}
}

// TestRestartsRecordEveryUnmeasuredSecond restarts a logger of 5 s ticks
// one tick later: the hole is a tick long, and once went unrecorded.
func TestRestartsRecordEveryUnmeasuredSecond(t *testing.T) {
	const tick = 5 * time.Second
	tests := []struct {
		name      string
		stopAfter time.Duration // after the last tick, before the stop
		wantGaps  []string
	}{
		{
			name:     "stopped on a tick and restarted on the next, the tick between is a gap",
			wantGaps: []string{fmt.Sprintf("%d,%d,5,not running,,", at(10*time.Second), at(15*time.Second))},
		},
		{
			name:      "stopped between ticks, the time since the last tick is a gap at the stop, and the restart goes on from it",
			stopAfter: 3 * time.Second,
			wantGaps: []string{
				fmt.Sprintf("%d,%d,3,not running,,", at(10*time.Second), at(13*time.Second)),
				fmt.Sprintf("%d,%d,2,not running,,", at(13*time.Second), at(15*time.Second)),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
			dir := t.TempDir()
			r := startRig(t, fleet, dir, tick, tick)
			r.run(10 * time.Second) // intervals end at 00:00:05 and 00:00:10
			if tt.stopAfter > 0 {
				r.clock.Advance(tt.stopAfter) // before the next tick is due
			}
			r.stop()
			fleet.Advance(15*time.Second - fleet.Now().Sub(day0))
			r2 := startRig(t, fleet, dir, tick, tick)
			r2.run(tick)

			want := append([]string{gapsHeader}, tt.wantGaps...)
			if got := csvLines(t, dir, gapsName); !slices.Equal(got, want) {
				t.Errorf("gaps.csv = %q, want %q\n%s%s", got, want, r.log, r2.log)
			}
		})
	}
}

func TestAStartStoppedBeforeItsFirstIntervalIsNotCountedTwice(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
	dir := t.TempDir()
	r := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r.run(20 * time.Second)
	r.stop()

	fleet.Advance(30 * time.Second)
	// Started at 00:00:50, it records the gap since 00:00:20 and stops
	// before its first interval ends, as a run killed then would.
	startRig(t, fleet, dir, 10*time.Second, time.Second).stop()
	fleet.Advance(30 * time.Second)
	r3 := startRig(t, fleet, dir, 10*time.Second, time.Second)
	r3.run(10 * time.Second)

	// The second start's gap goes on from the first's: no second counted
	// twice.
	wantGaps := []string{
		gapsHeader,
		fmt.Sprintf("%d,%d,30,not running,,", at(20*time.Second), at(50*time.Second)),
		fmt.Sprintf("%d,%d,30,not running,,", at(50*time.Second), at(80*time.Second)),
	}
	if got := csvLines(t, dir, gapsName); !slices.Equal(got, wantGaps) {
		t.Errorf("gaps.csv = %q, want %q", got, wantGaps)
	}
	gaps, err := readGaps(dir, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	rp := aggregate([]string{"2025-01-01"}, nil, gaps, nil, 300, time.UTC)
	if want := []gap{{Start: at(20 * time.Second), End: at(80 * time.Second), Reason: gapNotRunning}}; !slices.Equal(rp.Gaps, want) {
		t.Errorf("the report's gaps = %v, want %v", rp.Gaps, want)
	}
}

func TestRestartReconcilesTheStateFileWithTheCSV(t *testing.T) {
	tests := []struct {
		name string
		// The directory before the start, at 00:00:25.
		csv, state string
		wantGap    string // gaps.csv's row; "" for none
		wantWarn   string // part of the log; "" for none
		wantRows   []int64
		wantTorn   string // 2025-01-01.csv.torn; "" for none
	}{
		{
			name:     "a CSV ahead of the state (a crash between the writes) is kept and not written again",
			csv:      fmt.Sprintf("%s\n%d,?,1,0,5\n%d,?,1,0,5\n", header, at(10*time.Second), at(20*time.Second)),
			state:    stateJSON(at(10 * time.Second)),
			wantGap:  fmt.Sprintf("%d,%d,5,not running,,", at(20*time.Second), at(25*time.Second)),
			wantWarn: "is behind the CSV",
			wantRows: []int64{at(10 * time.Second), at(20 * time.Second), at(30 * time.Second)},
		},
		{
			name:     "a state ahead of the CSV (idle intervals) marks where the log stopped",
			csv:      fmt.Sprintf("%s\n%d,?,1,0,5\n", header, at(10*time.Second)),
			state:    stateJSON(at(20 * time.Second)),
			wantGap:  fmt.Sprintf("%d,%d,5,not running,,", at(20*time.Second), at(25*time.Second)),
			wantRows: []int64{at(10 * time.Second), at(30 * time.Second)},
		},
		{
			name:     "without a state file the newest row marks it",
			csv:      fmt.Sprintf("%s\n%d,?,1,0,5\n", header, at(20*time.Second)),
			wantGap:  fmt.Sprintf("%d,%d,5,not running,,", at(20*time.Second), at(25*time.Second)),
			wantWarn: "no state file",
			wantRows: []int64{at(20 * time.Second), at(30 * time.Second)},
		},
		{
			name:     "a torn last line is cut into the side file and logged, and the rows before it kept",
			csv:      fmt.Sprintf("%s\n%d,?,1,0,5\n%d,?,1,0,", header, at(10*time.Second), at(20*time.Second)),
			state:    stateJSON(at(10 * time.Second)),
			wantGap:  fmt.Sprintf("%d,%d,15,not running,,", at(10*time.Second), at(25*time.Second)),
			wantWarn: `cut a torn last line (a write interrupted by a crash) and kept it in a side file" file=DIR/2025-01-01.csv side_file=DIR/2025-01-01.csv.torn bytes=17`,
			wantRows: []int64{at(10 * time.Second), at(30 * time.Second)},
			wantTorn: fmt.Sprintf("%d,?,1,0,\n", at(20*time.Second)),
		},
		{
			name:     "a whole last row without its newline is kept, ended and counted as written",
			csv:      fmt.Sprintf("%s\n%d,?,1,0,5\n%d,?,1,0,5", header, at(10*time.Second), at(20*time.Second)),
			state:    stateJSON(at(10 * time.Second)),
			wantGap:  fmt.Sprintf("%d,%d,5,not running,,", at(20*time.Second), at(25*time.Second)),
			wantWarn: `ended a whole last line that lacked its newline; it is kept" file=DIR/2025-01-01.csv bytes=18`,
			wantRows: []int64{at(10 * time.Second), at(20 * time.Second), at(30 * time.Second)},
		},
		{
			name:     "a new directory has no gap",
			wantRows: []int64{at(30 * time.Second)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.csv != "" {
				writeFile(t, filepath.Join(dir, "2025-01-01.csv"), tt.csv)
			}
			if tt.state != "" {
				writeFile(t, filepath.Join(dir, stateName), tt.state)
			}
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
			fleet.Advance(25 * time.Second)
			r := startRig(t, fleet, dir, 10*time.Second, time.Second)
			r.run(5 * time.Second)

			var times []int64
			for _, row := range rowsIn(t, dir, "2025-01-01.csv") {
				times = append(times, row.Time)
			}
			if !slices.Equal(times, tt.wantRows) {
				t.Errorf("rows at %v, want %v", times, tt.wantRows)
			}
			gaps := csvLines(t, dir, gapsName)
			switch {
			case tt.wantGap == "" && gaps != nil:
				t.Errorf("gaps.csv = %q, want none", gaps)
			case tt.wantGap != "" && !slices.Equal(gaps, []string{gapsHeader, tt.wantGap}):
				t.Errorf("gaps.csv = %q, want %q", gaps, tt.wantGap)
			}
			if w := strings.ReplaceAll(tt.wantWarn, "DIR", dir); w != "" && !strings.Contains(r.log.String(), w) {
				t.Errorf("the log has no %q:\n%s", w, r.log)
			}
			torn, err := os.ReadFile(filepath.Join(dir, "2025-01-01.csv"+tornSuffix))
			if string(torn) != tt.wantTorn || (tt.wantTorn == "" && !os.IsNotExist(err)) {
				t.Errorf("the side file = %q (%v), want %q", torn, err, tt.wantTorn)
			}
		})
	}
}

func TestRestartsAppendEachTornLineToTheSideFile(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
	dir := t.TempDir()
	path := filepath.Join(dir, "2025-01-01.csv")
	var want string
	for i, torn := range []string{"1735689", "17356890"} {
		b, err := os.ReadFile(path)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		writeFile(t, path, string(b)+torn) // as a crash mid-write leaves it
		want += torn + "\n"
		r := startRig(t, fleet, dir, 10*time.Second, time.Second)
		r.run(10 * time.Second)
		r.stop()
		if got := readFile(t, path+tornSuffix); got != want {
			t.Errorf("after start %d the side file = %q, want %q", i+1, got, want)
		}
		if n := len(rowsIn(t, dir, "2025-01-01.csv")); n != i+1 {
			t.Errorf("after start %d: %d rows, want %d", i+1, n, i+1)
		}
	}
}

// TestAClockBehindTheLogLosesNoInterval starts a logger whose clock is
// behind the log's end, as after a wrong boot clock or an NTP step back.
func TestAClockBehindTheLogLosesNoInterval(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name string
		// The log before the start, at 2025-01-01 00:00:25.
		files     map[string]string
		logEnd    int64
		wantRows  map[string][]int64 // Timestamps per file after 15 s
		wantTorn  string             // 2025-01-01.csv.torn; "" for none
		wantState int64
	}{
		{
			name:      "a minute behind: the rows follow the log's, with the clock's times",
			files:     map[string]string{"2025-01-01.csv": fmt.Sprintf("%s\n%d,?,1,0,5\n", header, at(time.Minute))},
			logEnd:    at(time.Minute),
			wantRows:  map[string][]int64{"2025-01-01.csv": {at(time.Minute), at(30 * time.Second), at(40 * time.Second)}},
			wantState: at(40 * time.Second),
		},
		{
			name: "a day behind: the rows go to the clock's day, whose torn last line is repaired first",
			files: map[string]string{
				"2025-01-01.csv": fmt.Sprintf("%s\n%d,?,1,0,5\n%d,?,1", header, at(10*time.Second), at(20*time.Second)),
				"2025-01-02.csv": fmt.Sprintf("%s\n%d,?,1,0,5\n", header, at(day+time.Minute)),
			},
			logEnd: at(day + time.Minute),
			wantRows: map[string][]int64{
				"2025-01-01.csv": {at(10 * time.Second), at(30 * time.Second), at(40 * time.Second)},
				"2025-01-02.csv": {at(day + time.Minute)},
			},
			wantTorn:  fmt.Sprintf("%d,?,1\n", at(20*time.Second)),
			wantState: at(40 * time.Second),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				writeFile(t, filepath.Join(dir, name), content)
			}
			writeFile(t, filepath.Join(dir, stateName), stateJSON(tt.logEnd))
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: ghostPID, SM: 60}))
			fleet.Advance(25 * time.Second)
			r := startRig(t, fleet, dir, 10*time.Second, time.Second)
			r.run(15 * time.Second)
			r.stop()

			for name, want := range tt.wantRows {
				var got []int64
				for _, row := range rowsIn(t, dir, name) {
					got = append(got, row.Time)
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s has rows at %v, want %v", name, got, want)
				}
			}
			torn, err := os.ReadFile(filepath.Join(dir, "2025-01-01.csv"+tornSuffix))
			if string(torn) != tt.wantTorn || (tt.wantTorn == "" && !os.IsNotExist(err)) {
				t.Errorf("the side file = %q (%v), want %q", torn, err, tt.wantTorn)
			}
			if gaps := csvLines(t, dir, gapsName); gaps != nil {
				t.Errorf("gaps.csv = %q; want none: the time since the log's end is unknown", gaps)
			}
			if st, err := loadState(dir); err != nil || st == nil || st.LastEnd.Unix() != tt.wantState {
				t.Errorf("state = %+v, %v; want the interval ending at %v", st, err, time.Unix(tt.wantState, 0).UTC())
			}
			log := r.log.String()
			want := "the clock is behind the log: it was set back, or was ahead when the log was written"
			if strings.Count(log, want) != 1 || strings.Contains(log, "already has one") {
				t.Errorf("the log does not say once %q (or says more):\n%s", want, log)
			}
		})
	}
}

func TestStopBeforeTheFirstIntervalLogsNoZeroTime(t *testing.T) {
	tests := []struct {
		name     string
		state    string // the state file before the start; "" for none
		wantStop string
	}{
		{name: "a new log says no interval was completed", wantStop: `msg="stopped; no interval was completed"`},
		{
			name:     "an old log names the end of its last interval",
			state:    stateJSON(at(10 * time.Second)),
			wantStop: `msg=stopped last_interval_end=` + time.Unix(at(10*time.Second), 0).UTC().Format(time.RFC3339),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.state != "" {
				writeFile(t, filepath.Join(dir, stateName), tt.state)
			}
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			fleet.Advance(25 * time.Second)
			r := startRig(t, fleet, dir, 10*time.Second, time.Second)
			r.stop()
			log := r.log.String()
			if !strings.Contains(log, tt.wantStop) {
				t.Errorf("the log has no %q:\n%s", tt.wantStop, log)
			}
			if strings.Contains(log, "0001-01-01") {
				t.Errorf("the log shows a zero time:\n%s", log)
			}
		})
	}
}

func stateJSON(lastEnd int64) string {
	return fmt.Sprintf(`{"version": 1, "last_end": %q}`, time.Unix(lastEnd, 0).UTC().Format(time.RFC3339))
}
