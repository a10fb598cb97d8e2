//go:build cgo

package main

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// open returns the system's NVML, or a fake fleet for --simulate together
// with the clock that keeps the fleet in step with real time (nil for the
// system's NVML).
func open(simulate string, log *slog.Logger) (*nvgo.Library, nvgo.Clock, error) {
	if simulate == "" {
		lib, err := nvgo.Open(nvgo.WithLogger(log))
		return lib, nil, err
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, nil, fmt.Errorf("--simulate: %w", err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	return lib, newFleetClock(fleet), nil
}

// fleetClock is the system clock, except that whenever one of its timers
// fires it first moves the fake fleet's clock forward by the real time
// since it last did. The fleet takes its utilization samples as its clock
// moves, so the accumulator finds fresh ones at each tick, as on a real GPU.
type fleetClock struct {
	fleet *fakegpu.Fleet
	mu    sync.Mutex
	last  time.Time // of the latest Advance
}

// newFleetClock first moves the fleet's clock (which starts in 2025) to
// now, so that its sample and accounting timestamps are real times, as a
// driver's are: an accounting record's start can then be compared with its
// host process's.
func newFleetClock(fleet *fakegpu.Fleet) *fleetClock {
	now := time.Now()
	fleet.Advance(now.Sub(fleet.Now()))
	return &fleetClock{fleet: fleet, last: now}
}

// Now implements nvgo.Clock.
func (c *fleetClock) Now() time.Time { return time.Now() }

// NewTimer implements nvgo.Clock.
func (c *fleetClock) NewTimer(d time.Duration) nvgo.Timer {
	t := &fleetTimer{c: make(chan time.Time, 1)}
	t.t = time.AfterFunc(d, func() {
		c.advance()
		t.c <- time.Now()
	})
	return t
}

// advance moves the fleet's clock to now.
func (c *fleetClock) advance() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	c.fleet.Advance(now.Sub(c.last))
	c.last = now
}

type fleetTimer struct {
	t *time.Timer
	c chan time.Time
}

func (t *fleetTimer) C() <-chan time.Time { return t.c }
func (t *fleetTimer) Stop() bool          { return t.t.Stop() }
