package sampling

import (
	"errors"
	"time"

	"github.com/nvgo/nvgo/internal/nverr"
	"github.com/nvgo/nvgo/internal/nvmlx"
)

// ProcessUtilization is one process's utilization in one driver sample
// (nvmlProcessUtilizationSample_t), in percent.
type ProcessUtilization struct {
	SM, Memory, Encoder, Decoder uint32
}

// CurrentProcesses keeps each process's newest utilization sample, read
// from a GPU's per-process buffer with a cursor of its own. A sample
// counts while it is at most a second older than the newest the GPU
// reported and the GPU reported one in the last two seconds: the driver
// samples only busy processes, so one without a recent sample is idle.
// Make one with NewCurrentProcesses.
//
// A CurrentProcesses is not safe for concurrent use.
type CurrentProcesses struct {
	newest newestByKey[uint32, nvmlx.ProcessSample]
}

// NewCurrentProcesses returns a reader that has read nothing yet.
func NewCurrentProcesses() CurrentProcesses {
	return CurrentProcesses{newest: newNewestByKey(currentProcessRules, func(s nvmlx.ProcessSample) uint32 { return s.PID })}
}

// Poll reads the samples new to the cursor and keeps each process's
// newest; samples that no longer count at now are dropped. A failed read
// changes nothing.
func (c *CurrentProcesses) Poll(h nvmlx.Device, now time.Time) error {
	return c.newest.poll(now, h.ProcessUtilization)
}

// Get returns pid's newest sample if it counts at now; ok is false when
// the process has no recent sample (it is idle).
func (c *CurrentProcesses) Get(pid uint32, now time.Time) (u ProcessUtilization, ok bool) {
	s, ok := c.newest.get(pid, now)
	if !ok {
		return u, false
	}
	return ProcessUtilization{SM: s.SM, Memory: s.Memory, Encoder: s.Enc, Decoder: s.Dec}, true
}

// Retain drops the samples of the processes keep refuses (those that left
// the GPU).
func (c *CurrentProcesses) Retain(keep func(pid uint32) bool) { c.newest.forget(keep) }

// ProcessMeans is one process's mean utilization over its samples of one
// tick, in percent; a process without a sample was idle (0).
type ProcessMeans struct {
	SM, Memory float64
}

// ProcessesPerTick reads a GPU's per-process utilization buffer once per
// tick of a sampler, with a cursor of its own, and remembers a GPU that
// keeps no such buffer. On the first tick only the samples of the newest
// second count. Make one with NewProcessesPerTick.
//
// A ProcessesPerTick is not safe for concurrent use.
type ProcessesPerTick struct {
	cursor      cursor[nvmlx.ProcessSample]
	unsupported error // the GPU keeps no per-process samples
	sums        map[uint32]processSums
	means       map[uint32]ProcessMeans
}

type processSums struct {
	sm, mem float64
	n       int
}

// NewProcessesPerTick returns a reader at the start of the buffer.
func NewProcessesPerTick() ProcessesPerTick {
	return ProcessesPerTick{cursor: cursor[nvmlx.ProcessSample]{rules: tickProcessRules}}
}

// Read is one tick: it returns, by PID, each process's mean SM and memory
// utilization over its samples newer than the cursor; a process without
// one is not in the map. The map is the reader's, valid until the next
// Read. Once the GPU answered that it keeps no per-process samples (an
// error matching nverr.ErrNotSupported), Read returns that error again
// without a call.
func (t *ProcessesPerTick) Read(h nvmlx.Device, now time.Time) (map[uint32]ProcessMeans, error) {
	if t.unsupported != nil {
		return nil, t.unsupported
	}
	if t.means == nil {
		t.sums, t.means = map[uint32]processSums{}, map[uint32]ProcessMeans{}
	}
	clear(t.sums)
	clear(t.means)
	samples, _, err := t.cursor.read(now, h.ProcessUtilization)
	if err != nil {
		if errors.Is(err, nverr.ErrNotSupported) {
			t.unsupported = err
		}
		return nil, err
	}
	for _, s := range samples {
		x := t.sums[s.PID]
		x.sm, x.mem, x.n = x.sm+float64(s.SM), x.mem+float64(s.Memory), x.n+1
		t.sums[s.PID] = x
	}
	for pid, x := range t.sums {
		t.means[pid] = ProcessMeans{SM: x.sm / float64(x.n), Memory: x.mem / float64(x.n)}
	}
	return t.means, nil
}
