package nvgo

import (
	"context"
	"time"
)

// Clock is the time source of a Library: the timestamps of its snapshots
// and the ticks of its samplers (Accumulator, Collector). Programs use
// SystemClock; tests pass a fake that moves only when told to, so a
// sampler's ticks can be stepped one by one (package fakegpu/fleetclock
// has clocks on a fake fleet's time). Its methods use only the standard
// library's types, so a clock needs nothing of nvgo to be one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits until d has passed on the clock, or until ctx ends, and
	// then returns ctx's error. With d <= 0 it returns at once.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock returns the Clock of the operating system.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// schedule is the one timetable of nvgo's samplers (Accumulator,
// Collector): deadlines at start + n·interval on a Clock, so a sampler
// never drifts, and a deadline that passes while the work of an earlier one
// still runs is skipped and counted, not made up in a burst. Deadline 0 is
// start itself, which the sampler takes at once.
type schedule struct {
	start    time.Time
	interval time.Duration
	n        uint64 // the index of the next deadline
	missed   uint64 // deadlines skipped so far
}

func newSchedule(start time.Time, interval time.Duration) schedule {
	return schedule{start: start, interval: interval, n: 1}
}

// due returns the next deadline.
func (s *schedule) due() time.Time { return s.start.Add(time.Duration(s.n) * s.interval) }

// take records that the due deadline is taken at now; deadlines that
// passed since it was due are skipped.
func (s *schedule) take(now time.Time) {
	s.n++
	s.skipPast(now)
}

// skipPast skips, and counts as missed, every deadline at or before t that
// was not taken. A sampler calls it when its work ends, so that deadlines
// that passed while the work ran are not made up.
func (s *schedule) skipPast(t time.Time) {
	if t.Before(s.start) {
		return
	}
	if after := uint64(t.Sub(s.start)/s.interval) + 1; after > s.n {
		s.missed += after - s.n
		s.n = after
	}
}

// sleepUntil waits on clock until t or until ctx ends, whichever comes
// first, and returns ctx's error in the second case.
func sleepUntil(ctx context.Context, clock Clock, t time.Time) error {
	if err := clock.Sleep(ctx, t.Sub(clock.Now())); err != nil {
		return err
	}
	return ctx.Err()
}
