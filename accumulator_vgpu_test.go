//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// The accumulator counts each driver sample of an instance once: a tick
// without a new sample adds nothing.
func TestVgpuCountersCountEachSampleOnce(t *testing.T) {
	_, fleet := vgpuHost(t)
	r := startRig(t, fleet)
	first := r.acc.Counters() // the first tick is taken at start
	g := gpuOf(t, first, 0)
	if len(g.Vgpus) != 2 || g.VgpusErr != nil {
		t.Fatalf("first tick: %d instances (err %v), want 2", len(g.Vgpus), g.VgpusErr)
	}
	if bare := gpuOf(t, first, 1); bare.Vgpus != nil {
		t.Errorf("bare-metal GPU has vGPU counters %v", bare.Vgpus)
	}
	v := g.Vgpus[0]
	if v.ID != 101 || v.Type.String() != "NVIDIA H100-20C" || v.UUID.String() != "11111111-2222-3333-4444-555555555555" ||
		v.VMID.String() != "9d3c5c1e-0000-4000-8000-000000000001" || v.FramebufferUsed.Last.String() != "6144MiB" {
		t.Errorf("instance counters = %d %s %s %s %s", v.ID, v.Type, v.UUID, v.VMID, v.FramebufferUsed.Last)
	}
	fa := fleet.GPU(0).Vgpu(101)
	// Second 1 at 40% (the sample the clock's step takes), second 2 at 80%.
	c1 := r.tick(time.Second)
	fa.SetUtilization(80, 30, 0, 0) // replaces the sample already counted: not seen again
	c2 := r.tick(time.Second)
	if v2 := gpuOf(t, c2, 0).Vgpus[0]; v2.Samples != 3 || v2.SMUtilization.Samples != 3 {
		t.Errorf("instance seen by %d ticks with %d samples, want 3 and 3", v2.Samples, v2.SMUtilization.Samples)
	}
	iv, err := nvgo.Delta(c1, c2)
	must(t, err)
	got := iv.GPUs[0].Vgpus[0]
	if got.SMUtilization.String() != "80%" || got.FramebufferUtilization.String() != "30%" || got.Samples != 1 {
		t.Errorf("last second: sm %s fb %s over %d ticks, want 80%% 30%% over 1", got.SMUtilization, got.FramebufferUtilization, got.Samples)
	}
	all, err := nvgo.Delta(nvgo.Counters{}, c2)
	must(t, err)
	if got := all.GPUs[0].Vgpus[0].SMUtilization.String(); got != "53.3%" {
		t.Errorf("since start: sm %s, want 53.3%% (40, 40, 80)", got)
	}
	// A tick whose read brings no sample newer than the cursor adds none.
	fleet.GPU(0).Fail("GetVgpuUtilization", nvml.ERROR_NOT_FOUND)
	c3 := r.tick(time.Second)
	if v3 := gpuOf(t, c3, 0).Vgpus[0]; v3.Samples != 4 || v3.SMUtilization.Samples != 3 || v3.SMUtilization.Last.String() != "80%" {
		t.Errorf("a tick without a new sample: %d ticks, %d samples, last %s; want 4, 3, 80%%", v3.Samples, v3.SMUtilization.Samples, v3.SMUtilization.Last)
	}
	fleet.GPU(0).ClearFail("GetVgpuUtilization")
	// A destroyed instance leaves the counters.
	fleet.GPU(0).Vgpu(102).Destroy()
	if left := gpuOf(t, r.tick(time.Second), 0).Vgpus; len(left) != 1 || left[0].ID != 101 {
		t.Errorf("after destroying 102: %v", left)
	}
}

// The accumulator reads the vGPU sample buffer from zero, with a cursor of
// its own: reads through the Device do not move it.
func TestVgpuCountersKeepTheirOwnCursor(t *testing.T) {
	_, fleet := vgpuHost(t)
	spy := &cursorSpy{Fleet: fleet}
	clk := fleetclock.NewStepped(fleet)
	lib, err := nvgo.Open(nvgo.WithNVML(spy), nvgo.WithClock(clk))
	must(t, err)
	defer lib.Close()
	v := instancesOf(t, lib, 0)[0]
	_ = v.Utilization()
	_ = v.Utilization()
	spy.mu.Lock()
	spy.util = nil
	spy.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	acc, err := lib.StartAccumulator(ctx)
	must(t, err)
	defer func() { cancel(); <-acc.Done() }()
	t0 := uint64(fleet.Now().UnixMicro())
	ch := acc.Updated()
	clk.Advance(time.Second)
	<-ch
	spy.mu.Lock()
	got := fmt.Sprint(spy.util)
	spy.mu.Unlock()
	if want := fmt.Sprint([]uint64{0, t0}); got != want {
		t.Errorf("accumulator's reads: lastSeen %s, want %s", got, want)
	}
}
