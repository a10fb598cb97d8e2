//go:build cgo

package fleetclock_test

import (
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

func TestSteppedFiresAtTheDeadlineAndMovesTheFleet(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	c := fleetclock.NewStepped(fleet)
	start := c.Now()
	t1 := c.NewTimer(time.Second)
	t2 := c.NewTimer(3 * time.Second)
	if !t2.Stop() || t2.Stop() {
		t.Error("Stop: want true once, then false")
	}
	c.Advance(500 * time.Millisecond)
	select {
	case <-t1.C():
		t.Fatal("fired before its deadline")
	default:
	}
	c.Advance(500 * time.Millisecond)
	select {
	case at := <-t1.C():
		if !at.Equal(start.Add(time.Second)) || !fleet.Now().Equal(at) {
			t.Errorf("fired at %v (fleet at %v), want start+1s", at.Sub(start), fleet.Now().Sub(start))
		}
	default:
		t.Fatal("did not fire at its deadline")
	}
	if n := c.Armed(); n != 0 {
		t.Errorf("%d timers armed, want 0 (one fired, one stopped)", n)
	}
	select {
	case <-c.NewTimer(0).C():
	default:
		t.Error("a timer of 0 has not fired at once")
	}
}

func TestRealTimeBringsTheFleetToNow(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	c := fleetclock.RealTime(fleet)
	if lag := time.Since(fleet.Now()); lag < 0 || lag > time.Minute {
		t.Fatalf("the fleet is %v behind real time, want ~0", lag)
	}
	before := fleet.Now()
	<-c.NewTimer(20 * time.Millisecond).C()
	if moved := fleet.Now().Sub(before); moved < 20*time.Millisecond {
		t.Errorf("the fleet moved %v by the time the timer fired, want ≥ 20ms", moved)
	}
}
