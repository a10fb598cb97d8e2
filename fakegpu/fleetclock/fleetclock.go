//go:build cgo

// Package fleetclock gives nvgo's samplers (Accumulator, Collector) clocks
// tied to a fake fleet's clock, whose movement is what makes the fake
// driver take utilization and accounting samples. Open the Library with
// one (nvgo.WithClock).
//
// Stepped is for tests: time stands still until the test moves it, so each
// tick of a sampler can be stepped and checked. RealTime is for simulations
// (--simulate in the examples): the system clock, with the fleet brought up
// to the real time each time a sleep ends, so each tick finds fresh
// samples as it would on a real GPU.
package fleetclock

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
)

// armWait bounds how long Stepped.Advance waits for a sleeper.
const armWait = 10 * time.Second

// Stepped is a clock (an nvgo.Clock) on a fleet's clock: time moves only
// with Advance, which moves the fleet (so its sample buffers fill) and
// wakes the sleepers whose time has come. It is safe for concurrent use.
type Stepped struct {
	fleet    *fakegpu.Fleet
	mu       sync.Mutex
	sleepers []*sleeper
}

// sleeper is one Sleep waiting for Advance.
type sleeper struct {
	at   time.Time
	wake chan struct{}
}

// NewStepped returns a Stepped clock on fleet's clock.
func NewStepped(fleet *fakegpu.Fleet) *Stepped { return &Stepped{fleet: fleet} }

// Now returns the fleet's time.
func (c *Stepped) Now() time.Time { return c.fleet.Now() }

// Sleep waits until Advance has moved the clock by d, or until ctx ends;
// with d <= 0 it returns at once.
func (c *Stepped) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	s := &sleeper{at: c.fleet.Now().Add(d), wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		c.sleepers = slices.DeleteFunc(c.sleepers, func(o *sleeper) bool { return o == s })
		c.mu.Unlock()
		return ctx.Err()
	}
}

// Advance moves the clock, and the fleet, by d and wakes the sleepers
// whose time has come. It first waits (up to ten seconds) until some
// Sleep waits: a sampler sleeps just after a tick, and a clock that moved
// before it did would push that sleep one whole interval late, which real
// time never does.
func (c *Stepped) Advance(d time.Duration) {
	for deadline := time.Now().Add(armWait); c.Armed() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.Advance(d)
	now := c.fleet.Now()
	kept := c.sleepers[:0]
	for _, s := range c.sleepers {
		if s.at.After(now) {
			kept = append(kept, s)
			continue
		}
		close(s.wake)
	}
	clear(c.sleepers[len(kept):])
	c.sleepers = kept
}

// Armed returns how many Sleeps wait.
func (c *Stepped) Armed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleepers)
}

// RealTime returns the system clock for a simulation on fleet: it moves the
// fleet's clock (which starts in 2025) to now at once, so that sample and
// accounting timestamps are real times as a driver's are (an accounting
// record's start can then be compared with its host process's), and again
// each time a Sleep ends.
func RealTime(fleet *fakegpu.Fleet) *RealTimeClock {
	c := &RealTimeClock{fleet: fleet}
	c.catchUp()
	return c
}

// RealTimeClock is the system clock with a fake fleet brought up to it
// (RealTime). It is safe for concurrent use.
type RealTimeClock struct {
	fleet *fakegpu.Fleet
	mu    sync.Mutex // serialises catch-ups, so the fleet never moves back
}

// Now returns the system time.
func (c *RealTimeClock) Now() time.Time { return time.Now() }

func (c *RealTimeClock) catchUp() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleet.Advance(time.Since(c.fleet.Now()))
}

// Sleep waits on the system clock until d has passed or ctx ends; the fleet
// is then brought up to the time.
func (c *RealTimeClock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	c.catchUp()
	return ctx.Err()
}
