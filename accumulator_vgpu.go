package nvgo

import (
	"slices"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// vgpuAccum is the sampler's state for the vGPU instances of one GPU. It
// keeps its own sample cursor, apart from the Device's, so that other
// readers of the device never take samples away from the counters.
type vgpuAccum struct {
	cursor sampleCursor[nvmlx.VgpuSample] // the rules are tickVgpuRules
	byID   map[uint32]*VgpuCounters
	order  []uint32 // the IDs of byID, sorted
	err    error
}

// sample takes one tick of the GPU's instances: one listing, one read of
// the sample buffer and one framebuffer read per instance. A GPU that is
// not a vGPU host costs nothing after its first tick.
func (a *vgpuAccum) sample(d *Device, h nvmlx.Device, now time.Time) {
	if d.mig != nil {
		return
	}
	r := &reader{d: d, h: h}
	vs, err := d.listVgpus(r)
	a.err = err
	if err != nil {
		return
	}
	if len(vs) == 0 && a.byID == nil {
		return
	}
	if a.byID == nil {
		a.byID = map[uint32]*VgpuCounters{}
	}
	a.cursor.rules = tickVgpuRules
	means := map[uint32][4]float64{}
	if samples, _, err := a.cursor.read(now, h.VgpuUtilization); err != nil {
		a.err = err
	} else {
		var sums = map[uint32]*[5]float64{}
		for _, s := range samples {
			x := sums[s.Instance]
			if x == nil {
				x = new([5]float64)
				sums[s.Instance] = x
			}
			x[0] += float64(s.SM)
			x[1] += float64(s.Framebuffer)
			x[2] += float64(s.Encoder)
			x[3] += float64(s.Decoder)
			x[4]++
		}
		for id, x := range sums {
			means[id] = [4]float64{x[0] / x[4], x[1] / x[4], x[2] / x[4], x[3] / x[4]}
		}
	}
	live := make(map[uint32]bool, len(vs))
	for _, v := range vs {
		if !v.hasID {
			continue
		}
		live[v.id] = true
		c := a.byID[v.id]
		if c == nil {
			c = &VgpuCounters{ID: v.id, Since: now}
			c.UUID = v.UUID()
			c.Type = Map(v.Type(), func(t VgpuType) string { return t.Name })
			c.VMID = Map(v.VM(), func(vm VM) string { return vm.ID })
			na := NA[Percent](NotReported, errNoSample)
			c.SM.Last, c.Framebuffer.Last, c.Encoder.Last, c.Decoder.Last = na, na, na, na
			a.byID[v.id] = c
		}
		c.LastSeen = now
		c.Samples++
		if m, ok := means[v.id]; ok {
			c.SM.add(Some(Percent(m[0])))
			c.Framebuffer.add(Some(Percent(m[1])))
			c.Encoder.add(Some(Percent(m[2])))
			c.Decoder.add(Some(Percent(m[3])))
		}
		c.FramebufferUsed.add(v.FramebufferUsed())
	}
	for id := range a.byID {
		if !live[id] {
			delete(a.byID, id)
		}
	}
	a.order = a.order[:0]
	for id := range a.byID {
		a.order = append(a.order, id)
	}
	slices.Sort(a.order)
}

// publish returns a copy of the instances' counters, by ID; nil on a GPU
// that never had any.
func (a *vgpuAccum) publish() []VgpuCounters {
	if a.byID == nil {
		return nil
	}
	out := make([]VgpuCounters, len(a.order))
	for i, id := range a.order {
		out[i] = *a.byID[id]
	}
	return out
}
