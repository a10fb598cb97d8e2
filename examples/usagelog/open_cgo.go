//go:build cgo

package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// open returns the system's NVML and clock, or for --simulate a fake fleet
// and a clock that moves the fleet's clock up to real time whenever one of
// its timers fires.
func open(simulate string, log *slog.Logger) (*nvgo.Library, nvgo.Clock, error) {
	if simulate == "" {
		lib, err := nvgo.Open(nvgo.WithLogger(log))
		return lib, nvgo.SystemClock(), err
	}
	fleet, err := fakegpu.Load(simulate)
	if err != nil {
		return nil, nil, fmt.Errorf("--simulate: %w", err)
	}
	clock := simClock{fleet}
	// The fleet's clock starts in 2025: bring it to now, so that its sample
	// timestamps read like the real clock's.
	clock.catchUp()
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithLogger(log))
	if err != nil {
		return nil, nil, err
	}
	return lib, clock, nil
}

// simClock is the system clock, except that a timer moves the fleet's clock
// to now before it fires: every accumulator tick then finds a fresh sample
// of each busy process, as a real driver's sample buffer would hold.
type simClock struct{ fleet *fakegpu.Fleet }

func (c simClock) Now() time.Time { return time.Now() }

func (c simClock) catchUp() { c.fleet.Advance(time.Since(c.fleet.Now())) }

func (c simClock) NewTimer(d time.Duration) nvgo.Timer {
	t := &simTimer{c: make(chan time.Time, 1)}
	t.t = time.AfterFunc(d, func() {
		c.catchUp()
		t.c <- time.Now()
	})
	return t
}

type simTimer struct {
	t *time.Timer
	c chan time.Time
}

func (t *simTimer) C() <-chan time.Time { return t.c }
func (t *simTimer) Stop() bool          { return t.t.Stop() }
