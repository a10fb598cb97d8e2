//go:build cgo

package fleetclock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// sleep runs c.Sleep(ctx, d) in a goroutine and returns its result channel
// once the sleeper is armed.
func sleep(t *testing.T, c *fleetclock.Stepped, ctx context.Context, d time.Duration) <-chan error {
	t.Helper()
	armed := c.Armed()
	done := make(chan error, 1)
	go func() { done <- c.Sleep(ctx, d) }()
	for deadline := time.Now().Add(5 * time.Second); c.Armed() == armed; {
		if time.Now().After(deadline) {
			t.Fatal("the sleeper was never armed")
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

func TestSteppedWakesAtTheDeadlineAndMovesTheFleet(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	c := fleetclock.NewStepped(fleet)
	start := c.Now()
	ctx, cancel := context.WithCancel(context.Background())
	first := sleep(t, c, context.Background(), time.Second)
	second := sleep(t, c, ctx, 3*time.Second)
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled Sleep returned %v; want context.Canceled", err)
	}
	if n := c.Armed(); n != 1 {
		t.Errorf("%d sleepers armed after one was cancelled; want 1", n)
	}
	c.Advance(500 * time.Millisecond)
	select {
	case <-first:
		t.Fatal("woke before its deadline")
	default:
	}
	c.Advance(500 * time.Millisecond)
	select {
	case err := <-first:
		if err != nil || !fleet.Now().Equal(start.Add(time.Second)) {
			t.Errorf("woke with %v, the fleet at %v; want nil at start+1s", err, fleet.Now().Sub(start))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not wake at its deadline")
	}
	if n := c.Armed(); n != 0 {
		t.Errorf("%d sleepers armed, want 0", n)
	}
	if err := c.Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v; want nil at once", err)
	}
}

func TestRealTimeBringsTheFleetToNow(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	c := fleetclock.RealTime(fleet)
	if lag := time.Since(fleet.Now()); lag < 0 || lag > time.Minute {
		t.Fatalf("the fleet is %v behind real time, want ~0", lag)
	}
	before := fleet.Now()
	if err := c.Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if moved := fleet.Now().Sub(before); moved < 20*time.Millisecond {
		t.Errorf("the fleet moved %v by the time the sleep ended, want ≥ 20ms", moved)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep with a cancelled context = %v; want context.Canceled", err)
	}
}
