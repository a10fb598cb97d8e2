package sampling

import (
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// VgpuMeans is one vGPU instance's mean utilization over its samples of
// one tick, in percent.
type VgpuMeans struct {
	SM, Framebuffer, Encoder, Decoder float64
}

// VgpusPerTick reads a GPU's vGPU utilization buffer once per tick of a
// sampler, with a cursor of its own (every sample the driver keeps counts
// on the first tick). Make one with NewVgpusPerTick.
//
// A VgpusPerTick is not safe for concurrent use.
type VgpusPerTick struct {
	cursor cursor[nvmlx.VgpuSample]
	sums   map[uint32]vgpuSums
	means  map[uint32]VgpuMeans
}

type vgpuSums struct{ sm, fb, enc, dec, n float64 }

// NewVgpusPerTick returns a reader at the start of the buffer.
func NewVgpusPerTick() VgpusPerTick {
	return VgpusPerTick{cursor: cursor[nvmlx.VgpuSample]{rules: tickVgpuRules}}
}

// Read is one tick: it returns, by instance ID, each instance's mean
// utilization over its samples newer than the cursor; an instance without
// one is not in the map. The map is the reader's, valid until the next
// Read.
func (t *VgpusPerTick) Read(h nvmlx.Device, now time.Time) (map[uint32]VgpuMeans, error) {
	samples, _, err := t.cursor.read(now, h.VgpuUtilization)
	if err != nil {
		return nil, err
	}
	if t.means == nil {
		t.sums, t.means = map[uint32]vgpuSums{}, map[uint32]VgpuMeans{}
	}
	clear(t.sums)
	clear(t.means)
	for _, s := range samples {
		x := t.sums[s.Instance]
		x.sm += float64(s.SM)
		x.fb += float64(s.Framebuffer)
		x.enc += float64(s.Encoder)
		x.dec += float64(s.Decoder)
		x.n++
		t.sums[s.Instance] = x
	}
	for id, x := range t.sums {
		t.means[id] = VgpuMeans{SM: x.sm / x.n, Framebuffer: x.fb / x.n, Encoder: x.enc / x.n, Decoder: x.dec / x.n}
	}
	return t.means, nil
}
