package nvgo

import "time"

// Clock is the time source of nvgo's samplers (Accumulator, Collector).
// Programs use SystemClock; tests pass a fake that moves only when told to,
// so a sampler's ticks can be stepped one by one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a Timer that fires once, after d.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer made by a Clock.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did so.
	Stop() bool
}

// SystemClock returns the Clock of the operating system.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) NewTimer(d time.Duration) Timer { return sysTimer{time.NewTimer(d)} }

type sysTimer struct{ t *time.Timer }

func (t sysTimer) C() <-chan time.Time { return t.t.C }
func (t sysTimer) Stop() bool          { return t.t.Stop() }

// nextDeadline returns the first deadline start + n·interval that lies after
// now, so a sampler that fell behind skips the ticks it missed instead of
// firing them in a burst, and never drifts.
func nextDeadline(start, now time.Time, interval time.Duration) time.Time {
	if now.Before(start) {
		return start
	}
	n := now.Sub(start)/interval + 1
	return start.Add(n * interval)
}
