package nvgo

import (
	"slices"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
	"github.com/nvgo/nvgo/internal/sampling"
)

// vgpuAccum is the sampler's state for the vGPU instances of one GPU. It
// keeps its own reader of the sample buffer, apart from the Device's, so
// that other readers of the device never take samples away from the
// counters. Make one with newVgpuAccum.
type vgpuAccum struct {
	util  sampling.VgpusPerTick
	byID  map[uint32]*VgpuCounters
	order []uint32 // the IDs of byID, sorted
	err   error
}

func newVgpuAccum() vgpuAccum { return vgpuAccum{util: sampling.NewVgpusPerTick()} }

// sample takes one tick of the GPU's instances: one listing, one read of
// the sample buffer and one framebuffer read per instance. A GPU that is
// not a vGPU host costs nothing after its first tick.
func (a *vgpuAccum) sample(d *Device, h nvmlx.Device, now time.Time) {
	if d.mig != nil {
		return
	}
	r := &passReader{d: d, h: h}
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
	means, err := a.util.Read(h, now)
	if err != nil {
		a.err = err // no means: the instances' utilization is not added
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
			c.Type = FlatMap(v.Type(), func(t VgpuType) Value[string] { return t.Name })
			c.VMID = Map(v.VM(), func(vm VM) string { return vm.ID })
			na := NA[Percent](NotReported, errNoSample)
			c.SMUtilization.Last, c.FramebufferUtilization.Last, c.EncoderUtilization.Last, c.DecoderUtilization.Last = na, na, na, na
			a.byID[v.id] = c
		}
		c.LastSeen = now
		c.Samples++
		if m, ok := means[v.id]; ok {
			c.SMUtilization.add(Some(Percent(m.SM)))
			c.FramebufferUtilization.add(Some(Percent(m.Framebuffer)))
			c.EncoderUtilization.add(Some(Percent(m.Encoder)))
			c.DecoderUtilization.add(Some(Percent(m.Decoder)))
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
