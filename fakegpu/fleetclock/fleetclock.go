//go:build cgo

// Package fleetclock gives nvgo's samplers (Accumulator, Collector) clocks
// tied to a fake fleet's clock, whose movement is what makes the fake
// driver take utilization and accounting samples.
//
// Stepped is for tests: time stands still until the test moves it, so each
// tick of a sampler can be stepped and checked. RealTime is for simulations
// (--simulate in the examples): the system clock, with the fleet brought up
// to the real time before every timer fires, so each tick finds fresh
// samples as it would on a real GPU.
package fleetclock

import (
	"slices"
	"sync"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// armWait bounds how long Stepped.Advance waits for a timer to be armed.
const armWait = 10 * time.Second

// Stepped is an nvgo.Clock on a fleet's clock: time moves only with
// Advance, which moves the fleet (so its sample buffers fill) and fires the
// timers that fall due. It is safe for concurrent use.
type Stepped struct {
	fleet  *fakegpu.Fleet
	mu     sync.Mutex
	timers []*steppedTimer
}

// NewStepped returns a Stepped clock on fleet's clock.
func NewStepped(fleet *fakegpu.Fleet) *Stepped { return &Stepped{fleet: fleet} }

// Now returns the fleet's time.
func (c *Stepped) Now() time.Time { return c.fleet.Now() }

// NewTimer returns a timer that fires once Advance has moved the clock by
// d; one with d <= 0 has fired already.
func (c *Stepped) NewTimer(d time.Duration) nvgo.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &steppedTimer{clock: c, at: c.fleet.Now().Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- t.at
		return t
	}
	c.timers = append(c.timers, t)
	return t
}

// Advance moves the clock, and the fleet, by d and fires the timers that
// fall due. It first waits (up to ten seconds) until some timer is armed:
// a sampler arms its next timer just after a tick, and a clock that moved
// before it did would push that timer one whole interval late, which real
// time never does.
func (c *Stepped) Advance(d time.Duration) {
	for deadline := time.Now().Add(armWait); c.Armed() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.Advance(d)
	now := c.fleet.Now()
	kept := c.timers[:0]
	for _, t := range c.timers {
		if t.at.After(now) {
			kept = append(kept, t)
			continue
		}
		t.c <- now
	}
	c.timers = kept
}

// Armed returns how many timers wait to fire.
func (c *Stepped) Armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

type steppedTimer struct {
	clock *Stepped
	at    time.Time
	c     chan time.Time
}

func (t *steppedTimer) C() <-chan time.Time { return t.c }

func (t *steppedTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.timers)
	c.timers = slices.DeleteFunc(c.timers, func(o *steppedTimer) bool { return o == t })
	return len(c.timers) < n
}

// RealTime returns the system clock for a simulation on fleet: it moves the
// fleet's clock (which starts in 2025) to now at once, so that sample and
// accounting timestamps are real times as a driver's are (an accounting
// record's start can then be compared with its host process's), and again
// before each of its timers fires.
func RealTime(fleet *fakegpu.Fleet) nvgo.Clock {
	c := &realTime{fleet: fleet}
	c.catchUp()
	return c
}

type realTime struct {
	fleet *fakegpu.Fleet
	mu    sync.Mutex // serialises catch-ups, so the fleet never moves back
}

func (c *realTime) Now() time.Time { return time.Now() }

func (c *realTime) catchUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.Advance(time.Since(c.fleet.Now()))
}

func (c *realTime) NewTimer(d time.Duration) nvgo.Timer {
	t := &realTimer{c: make(chan time.Time, 1)}
	t.t = time.AfterFunc(d, func() {
		c.catchUp()
		t.c <- time.Now()
	})
	return t
}

type realTimer struct {
	t *time.Timer
	c chan time.Time
}

func (t *realTimer) C() <-chan time.Time { return t.c }
func (t *realTimer) Stop() bool          { return t.t.Stop() }
