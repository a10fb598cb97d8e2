package sampling

import (
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// VgpuUtilization is a vGPU instance's utilization in one driver sample,
// in percent, and when the driver took it.
type VgpuUtilization struct {
	SM, Framebuffer, Encoder, Decoder uint32
	Time                              time.Time
}

// CurrentVgpus keeps each vGPU instance's newest utilization sample,
// however old (its Time says), read from a GPU's vGPU buffer with a
// cursor of its own. Make one with NewCurrentVgpus.
//
// A CurrentVgpus is not safe for concurrent use.
type CurrentVgpus struct {
	newest newestByKey[uint32, nvmlx.VgpuSample]
}

// NewCurrentVgpus returns a reader that has read nothing yet.
func NewCurrentVgpus() CurrentVgpus {
	return CurrentVgpus{newest: newNewestByKey(newestSampleRules, func(s nvmlx.VgpuSample) uint32 { return s.Instance })}
}

// Poll reads the samples new to the cursor and keeps each instance's
// newest. A failed read changes nothing.
func (c *CurrentVgpus) Poll(h nvmlx.Device, now time.Time) error {
	return c.newest.poll(now, h.VgpuUtilization)
}

// Get returns the newest sample of the instance with ID id; ok is false
// while the driver has none for it.
func (c *CurrentVgpus) Get(id uint32, now time.Time) (u VgpuUtilization, ok bool) {
	s, ok := c.newest.get(id, now)
	if !ok {
		return u, false
	}
	return VgpuUtilization{
		SM: s.SM, Framebuffer: s.Framebuffer, Encoder: s.Encoder, Decoder: s.Decoder,
		Time: time.UnixMicro(int64(s.Timestamp)),
	}, true
}

// Retain drops the samples of the instances keep refuses (those no longer
// listed).
func (c *CurrentVgpus) Retain(keep func(id uint32) bool) { c.newest.forget(keep) }

// VgpuProcessUtilization is one process inside a VM in one driver sample:
// its vGPU instance, its PID and name in the guest, its share of the
// instance's engines in percent, and when the driver took the sample.
type VgpuProcessUtilization struct {
	Instance, PID                uint32
	Name                         string
	SM, Memory, Encoder, Decoder uint32
	Time                         time.Time
}

// CurrentVgpuProcesses keeps the newest utilization sample of each process
// inside the VMs of a GPU's vGPU instances, read with a cursor of its own.
// A sample counts as CurrentProcesses says: the driver samples only busy
// processes, so one without a recent sample is idle (or gone). Make one
// with NewCurrentVgpuProcesses.
//
// A CurrentVgpuProcesses is not safe for concurrent use.
type CurrentVgpuProcesses struct {
	newest newestByKey[vgpuProcessKey, nvmlx.VgpuProcessSample]
}

// vgpuProcessKey names a guest process: guest PIDs are unique only within
// their VM.
type vgpuProcessKey struct{ instance, pid uint32 }

// NewCurrentVgpuProcesses returns a reader that has read nothing yet.
func NewCurrentVgpuProcesses() CurrentVgpuProcesses {
	return CurrentVgpuProcesses{newest: newNewestByKey(currentProcessRules, func(s nvmlx.VgpuProcessSample) vgpuProcessKey {
		return vgpuProcessKey{s.Instance, s.PID}
	})}
}

// Poll reads the samples new to the cursor and keeps each process's
// newest; samples that no longer count at now are dropped. A failed read
// changes nothing.
func (c *CurrentVgpuProcesses) Poll(h nvmlx.Device, now time.Time) error {
	return c.newest.poll(now, h.VgpuProcessUtilization)
}

// Each calls f with the kept sample of every process on the instance with
// ID instance, in no particular order: those that counted at the last
// Poll.
func (c *CurrentVgpuProcesses) Each(instance uint32, f func(VgpuProcessUtilization)) {
	for k, s := range c.newest.newest {
		if k.instance != instance {
			continue
		}
		f(VgpuProcessUtilization{
			Instance: s.Instance, PID: s.PID, Name: s.Name,
			SM: s.SM, Memory: s.Memory, Encoder: s.Encoder, Decoder: s.Decoder,
			Time: time.UnixMicro(int64(s.Timestamp)),
		})
	}
}

// Retain drops the samples of the processes on the instances keep refuses
// (those no longer listed).
func (c *CurrentVgpuProcesses) Retain(keep func(instance uint32) bool) {
	c.newest.forget(func(k vgpuProcessKey) bool { return keep(k.instance) })
}

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
