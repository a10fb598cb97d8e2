package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/nvgo/nvgo"
)

// logConfig configures logUsage.
type logConfig struct {
	dir      string
	interval time.Duration  // between rows
	tick     time.Duration  // the accumulator's
	loc      *time.Location // of the daily files' dates and the interval grid
	log      *slog.Logger

	// ready, if set (tests), is called once the accumulator runs and the
	// baseline is read.
	ready func(*nvgo.Accumulator)
	// wrote, if set (tests), is called after each interval is handled.
	wrote func(nvgo.Interval)
}

// logger appends intervals to a log directory.
type logger struct {
	logConfig
	resume   resume    // where the directory left off; Last advances with each interval
	dropped  uint64    // exits the reader dropped, as last logged
	coverage *coverage // which GPUs' processes were measured, from the first tick
	// repaired holds the files whose last line this run has repaired
	// (repairTail), which it does before it first appends to one.
	repaired map[string]bool
}

// logUsage runs the usage log until ctx ends: it repairs and reconciles
// the directory, starts an accumulator, appends one row per process to the
// day's CSV at every interval end, and when ctx ends writes the interval
// in progress (with its real length) and returns nil. It returns an error
// when the directory cannot be used or the accumulator cannot start.
func logUsage(ctx context.Context, lib *nvgo.Library, cfg logConfig) error {
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return err
	}
	lock, err := lockDir(cfg.dir)
	if err != nil {
		return err
	}
	defer lock.Close()
	l := &logger{logConfig: cfg, repaired: map[string]bool{}}
	if l.resume, err = l.recover(); err != nil {
		return err
	}

	if err := l.alignToTick(ctx, lib.Clock()); err != nil {
		l.logStopped() // before starting: nothing was measured
		return nil
	}
	// The sampler stops when ctx ends, or when logUsage returns early.
	accCtx, stopAcc := context.WithCancel(ctx)
	defer stopAcc()
	acc, err := lib.StartAccumulator(accCtx, nvgo.WithAccumulatorInterval(l.tick))
	if errors.Is(err, context.Canceled) {
		l.logStopped()
		return nil
	}
	if err != nil {
		return err
	}
	defer func() {
		stopAcc()
		<-acc.Done()
	}()
	reader := acc.NewReader()
	defer reader.Close()
	prev := reader.Read()
	l.coverage = newCoverage(l.log, prev)
	l.log.Info("logging GPU usage", "dir", l.dir, "interval", l.interval, "tick", l.tick, "gpus", len(prev.GPUs), "start", prev.Time.Format(time.RFC3339))
	l.checkClock(prev.Time)
	if err := l.recordGap(prev.Time, slog.LevelWarn, "usage was not measured between the last interval and this start"); err != nil {
		return err
	}
	if l.ready != nil {
		l.ready(acc)
	}

	for {
		next := nextBoundary(prev.Time, l.interval, l.loc)
		cur, ok := l.waitFor(ctx, acc, reader, next)
		if !ok {
			break
		}
		if err := l.writeInterval(reader, prev, cur); err != nil {
			return err
		}
		prev = cur
	}
	// The sampler stops with ctx; its last tick ends the partial interval.
	<-acc.Done()
	cur := reader.Read()
	if cur.Ticks > prev.Ticks {
		if err := l.writeInterval(reader, prev, cur); err != nil {
			return err
		}
	}
	// The time since the last tick (less than one) is measured by no
	// tick: the next start's gap goes on from it.
	if err := l.recordGap(lib.Clock().Now(), slog.LevelInfo, "usage since the last tick was not measured"); err != nil {
		return err
	}
	l.logStopped()
	return nil
}

// logStopped logs the stop and the end of the last interval in the log; a
// log that has none (stopped before its first interval ended) says so
// rather than show a zero time.
func (l *logger) logStopped() {
	if !l.resume.Known {
		l.log.Info("stopped; no interval was completed", "dir", l.dir)
		return
	}
	l.log.Info("stopped", "last_interval_end", l.resume.Last.Format(time.RFC3339))
}

// recover repairs the last lines of the files it appends to (see
// repairTail) and works out where the directory left off.
func (l *logger) recover() (resume, error) {
	files, err := dataFiles(l.dir)
	if err != nil {
		return resume{}, err
	}
	gapsPath := filepath.Join(l.dir, gapsName)
	if err := l.repair(gapsPath, isWholeGap); err != nil {
		return resume{}, err
	}
	if upgraded, err := upgradeGaps(gapsPath); err != nil {
		return resume{}, fmt.Errorf("add the GPU columns to %s: %w", gapsPath, err)
	} else if upgraded {
		l.log.Info("added the columns GPU Number and GPU UUID to "+gapsName+" (empty in its rows: gaps of the whole log)", "file", gapsPath)
	}
	// The newest daily CSV is read below; another is repaired before this
	// run first appends to it (after the clock was set back, say).
	if len(files) > 0 {
		if err := l.repair(files[len(files)-1].Path, isWholeRow); err != nil {
			return resume{}, err
		}
	}
	st, err := loadState(l.dir)
	if err != nil {
		l.log.Warn("ignoring the state file", "err", err)
		st = nil
	}
	// The newest row, from the newest file that has one.
	var last int64
	var ok bool
	for i := len(files) - 1; i >= 0 && !ok; i-- {
		if last, ok, err = lastRowTime(files[i].Path); err != nil {
			return resume{}, err
		}
	}
	gaps, err := readGaps(l.dir, func(s string) { l.log.Warn(s) })
	if err != nil {
		return resume{}, err
	}
	r := reconcile(st, last, ok, gaps)
	if r.Note != "" {
		l.log.Warn(r.Note)
	}
	return r, nil
}

// repair repairs the last line of path (repairTail) once per run, and
// logs what it did.
func (l *logger) repair(path string, whole func(string) bool) error {
	if l.repaired[path] {
		return nil
	}
	done, err := repairTail(path, whole)
	if err != nil {
		return fmt.Errorf("repair %s: %w", path, err)
	}
	l.repaired[path] = true
	switch {
	case done.Ended > 0:
		l.log.Warn("ended a whole last line that lacked its newline; it is kept", "file", path, "bytes", done.Ended)
	case done.Cut != nil:
		l.log.Warn("cut a torn last line (a write interrupted by a crash) and kept it in a side file", "file", path, "side_file", done.Side, "bytes", len(done.Cut))
	}
	return nil
}

// alignToTick waits for the next whole tick of the clock, so that ticks,
// and thus interval ends, fall on round times.
func (l *logger) alignToTick(ctx context.Context, clock nvgo.Clock) error {
	now := clock.Now()
	wait := now.Truncate(l.tick).Add(l.tick).Sub(now)
	if wait == l.tick {
		return nil
	}
	return clock.Sleep(ctx, wait)
}

// checkClock warns when the first tick of this run, at start, is before
// the time the log accounts for: the clock was set back, or was ahead when
// the log was written, and nothing tells which. The intervals of this run
// are written all the same, with this clock's times (dropping them until
// the clock caught up would lose real usage, for good if the log was
// ahead); the time since the log's end cannot be known, so no gap is
// recorded for it.
func (l *logger) checkClock(start time.Time) {
	if !l.resume.Known || !start.Before(l.resume.Accounted) {
		return
	}
	l.log.Warn("the clock is behind the log: it was set back, or was ahead when the log was written. "+
		"Intervals are written with this clock's times, before rows already in the log, and the time since the log's end is unknown, so no gap is recorded for it",
		"log_end", l.resume.Accounted.Format(time.RFC3339), "now", start.Format(time.RFC3339), "behind", l.resume.Accounted.Sub(start).Round(time.Second))
}

// recordGap records in gaps.csv the span from where the log accounts for
// the GPUs until end, if there is one (gapBefore), and logs msg at level.
func (l *logger) recordGap(end time.Time, level slog.Level, msg string) error {
	g, ok := gapBefore(l.resume, end)
	if !ok {
		return nil
	}
	l.log.Log(context.Background(), level, msg+"; recorded in "+gapsName,
		"from", time.Unix(g.Start, 0).Format(time.RFC3339), "to", time.Unix(g.End, 0).Format(time.RFC3339), "length", g.Duration())
	if err := appendLines(filepath.Join(l.dir, gapsName), gapsHeader, formatGap(g)); err != nil {
		return err
	}
	l.resume.Accounted = time.Unix(g.End, 0)
	return nil
}

// waitFor waits for the accumulator's tick at the interval end next (the
// first within half a tick of it) and reads it; ok is false once ctx ends.
func (l *logger) waitFor(ctx context.Context, acc *nvgo.Accumulator, r *nvgo.Reader, next time.Time) (nvgo.Counters, bool) {
	due := next.Add(-l.tick / 2)
	for {
		updated := acc.Updated() // before the check, so that no tick is missed
		c := acc.Counters()
		l.coverage.observe(c)
		if !c.Time.Before(due) {
			return r.Read(), true
		}
		select {
		case <-ctx.Done():
			return nvgo.Counters{}, false
		case <-updated:
		}
	}
}

// writeInterval appends the rows of the interval from prev to cur to the
// day's CSV in one write, then records it in the state file.
func (l *logger) writeInterval(r *nvgo.Reader, prev, cur nvgo.Counters) error {
	iv, err := nvgo.Delta(prev, cur)
	if err != nil {
		return err
	}
	// The gaps of GPUs whose processes were not measured go first: a
	// crash before the rows then leaves them inside the next start's gap,
	// never rows without them.
	l.coverage.observe(cur)
	if gaps := l.coverage.drain(); len(gaps) > 0 {
		var data []byte
		for _, g := range gaps {
			data = append(data, formatGap(g)...)
		}
		if err := appendLines(filepath.Join(l.dir, gapsName), gapsHeader, data); err != nil {
			return err
		}
	}
	if d := r.Dropped(); d > l.dropped {
		l.log.Warn("exited processes were dropped before they were read; their last seconds are missing", "dropped", d-l.dropped)
		l.dropped = d
	}
	rows := rowsOf(iv, l.tick)
	st := state{LastEnd: iv.End, Interval: l.interval.String(), Tick: l.tick.String()}
	if len(rows) > 0 {
		var data []byte
		for _, row := range rows {
			data = append(data, formatRow(row)...)
		}
		path := dayFile(l.dir, iv.End, l.loc)
		if err := l.repair(path, isWholeRow); err != nil {
			return err
		}
		if err := appendLines(path, header, data); err != nil {
			return err
		}
		st.File = filepath.Base(path)
	}
	if err := saveState(l.dir, st); err != nil {
		return err
	}
	l.resume.Last, l.resume.Known = iv.End, true
	if iv.End.After(l.resume.Accounted) {
		l.resume.Accounted = iv.End
	}
	l.log.Debug("interval written", "end", iv.End.Format(time.RFC3339), "length", iv.Duration(), "ticks", iv.Ticks, "rows", len(rows), "file", st.File)
	if l.wrote != nil {
		l.wrote(iv)
	}
	return nil
}
