package nvgo

import (
	"errors"
	"fmt"
	"time"
)

// UtilizationCounter accumulates a percentage, one value per tick.
//
// Last is the value of the latest tick, or N/A with the reason it could not
// be read. Sum adds up the values of the Samples ticks that had one, so
// Sum/Samples is the average since the accumulator started and Delta gives
// it over any interval. A metric the GPU has never reported keeps Sum N/A
// (atop's -1), with the reason; once a value was summed, Sum stays a number
// and a later failure only leaves the tick out.
type UtilizationCounter struct {
	Last    Value[Percent]
	Sum     Value[float64]
	Samples uint64
}

// Mean returns Sum/Samples, or N/A when nothing was summed.
func (c UtilizationCounter) Mean() Value[Percent] {
	return meanPercent(c.Sum, c.Samples, c.Last)
}

// add records one tick's value.
func (c *UtilizationCounter) add(v Value[Percent]) {
	c.Last = v
	p, ok := v.Get()
	if !ok {
		if c.Samples == 0 {
			c.Sum = NA[float64](v.Reason(), v.Err())
		}
		return
	}
	c.Sum = Some(c.Sum.Or(0) + float64(p))
	c.Samples++
}

// MemoryCounter accumulates a memory size, one value per tick, like
// UtilizationCounter. SumKiB is in KiB (as atop counts), so it cannot
// overflow in any plausible lifetime.
type MemoryCounter struct {
	Last    Value[Bytes]
	SumKiB  Value[uint64]
	Samples uint64
}

// Mean returns the average size over the summed ticks, or N/A when nothing
// was summed.
func (c MemoryCounter) Mean() Value[Bytes] {
	return meanBytes(c.SumKiB, c.Samples, c.Last)
}

func (c *MemoryCounter) add(v Value[Bytes]) {
	c.Last = v
	b, ok := v.Get()
	if !ok {
		if c.Samples == 0 {
			c.SumKiB = NA[uint64](v.Reason(), v.Err())
		}
		return
	}
	c.SumKiB = Some(c.SumKiB.Or(0) + uint64(b)/1024)
	c.Samples++
}

var errNoSample = fmt.Errorf("no sample in the interval: %w", ErrNotReported)

func meanPercent(sum Value[float64], n uint64, last Value[Percent]) Value[Percent] {
	s, ok := sum.Get()
	switch {
	case !ok:
		return NA[Percent](sum.Reason(), sum.Err())
	case n == 0 && last.IsNA():
		return NA[Percent](last.Reason(), last.Err())
	case n == 0:
		return NA[Percent](NotReported, errNoSample)
	}
	return Some(Percent(s / float64(n)))
}

func meanBytes(sumKiB Value[uint64], n uint64, last Value[Bytes]) Value[Bytes] {
	s, ok := sumKiB.Get()
	switch {
	case !ok:
		return NA[Bytes](sumKiB.Reason(), sumKiB.Err())
	case n == 0 && last.IsNA():
		return NA[Bytes](last.Reason(), last.Err())
	case n == 0:
		return NA[Bytes](NotReported, errNoSample)
	}
	return Some(Bytes(s * 1024 / n))
}

// Counters is everything an Accumulator has counted since it started, as of
// one tick. It is a value: keep it, and hand it to Delta with a later one to
// get the averages in between.
type Counters struct {
	// Start is when the accumulator started; Time is the latest tick.
	Start, Time time.Time
	// Ticks is how many ticks were taken; Missed how many were skipped
	// because a tick overran its interval.
	Ticks, Missed uint64
	// GPUs are in the order of their NVML index.
	GPUs []GPUCounters

	acc uint64 // the accumulator's identity, for Delta
}

// GPUCounters are one GPU's counters.
type GPUCounters struct {
	Index int
	// UUID and BusID (NVML's form, e.g. "00000000:17:00.0") identify the
	// GPU; Name is the product name. Each is N/A when the GPU could not be
	// read when the accumulator started (lost, say).
	UUID, BusID, Name Value[string]

	// Samples is how many ticks read the GPU (all but those that failed as
	// a whole, e.g. while the GPU was lost).
	Samples uint64
	// GPUUtilization is the percentage of time a kernel ran;
	// MemoryUtilization the percentage of time device memory was read or
	// written. Each tick's value is the time-weighted mean of the driver's
	// samples since the previous tick, so activity between ticks counts.
	GPUUtilization, MemoryUtilization UtilizationCounter
	// MemoryUsed is the device memory in use; MemoryTotal its size.
	MemoryUsed  MemoryCounter
	MemoryTotal Value[Bytes]

	// Err is why the latest tick could not read the GPU (e.g. ErrGPULost);
	// nil when it could. The counters keep what they had.
	Err error

	// ProcessSamples is how many ticks read the GPU's process lists; fewer
	// than Samples when the lists failed while the GPU's readings did not.
	ProcessSamples uint64
	// ProcessesErr is why the latest tick could not read the process lists
	// (the GPU's own error when Err is set); nil when it could. Processes
	// then still holds those of the latest tick that could: "no processes"
	// and "could not list them" are told apart by this, never by an empty
	// list.
	ProcessesErr error
	// Processes are those on the GPU at the latest tick, by PID.
	Processes []ProcessCounters
	// Exited are the processes that left the GPU since the previous read,
	// with their final counters. Only Reader.Read fills it, and each exit
	// reaches each Reader once.
	Exited []ProcessCounters

	// Vgpus are the vGPU instances on the GPU at the latest tick, by ID;
	// nil on a GPU that is not a vGPU host.
	Vgpus []VgpuCounters
	// VgpusErr is why the latest tick could not list or sample the
	// instances; nil when it could.
	VgpusErr error
}

// VgpuCounters are one vGPU instance's counters on its GPU. An instance
// that is destroyed leaves Vgpus at the next tick.
type VgpuCounters struct {
	// ID is NVML's instance ID; Since the first tick that saw the
	// instance, LastSeen the latest.
	ID              uint32
	Since, LastSeen time.Time
	// UUID, Type (e.g. "NVIDIA H100-20C") and VMID are read once.
	UUID, Type, VMID Value[string]
	// Samples is how many ticks saw the instance.
	Samples uint64
	// The utilizations count the driver's utilization samples of the
	// instance: each tick adds the mean of the samples newer
	// than the previous tick's, and a tick without one adds nothing.
	SMUtilization, FramebufferUtilization, EncoderUtilization, DecoderUtilization UtilizationCounter
	// FramebufferUsed is the instance's framebuffer memory in use.
	FramebufferUsed MemoryCounter
}

// ProcessKey identifies one process on one GPU across ticks: its PID and the
// tick it was first seen at. A PID reused by a new process gets a new key.
type ProcessKey struct {
	PID   int
	Since time.Time
}

// ProcessCounters are one process's counters on one GPU.
type ProcessCounters struct {
	ProcessKey
	// LastSeen is the latest tick the process was on the GPU.
	LastSeen time.Time
	// Exited is set once the process has left the GPU.
	Exited bool
	Type   ProcessType
	// Name, Username and CreateTime are read from the host once, when the
	// process is first seen.
	Name, Username Value[string]
	CreateTime     Value[time.Time]

	// Samples is how many ticks saw the process.
	Samples uint64
	// GPUMemory is the device memory it used.
	GPUMemory MemoryCounter
	// GPUSMUtilization and GPUMemoryUtilization are its share of the GPU's
	// SM and memory-interface time: the mean of its driver samples since
	// the previous tick, 0 when it had none (it was idle).
	GPUSMUtilization, GPUMemoryUtilization UtilizationCounter
	// Accounting is the driver's accounting record of the process (its
	// lifetime figures) as of the latest tick, and for an exited process
	// its final record; N/A while accounting mode is off (see
	// Device.SetAccountingMode).
	Accounting Value[ProcessAccounting]
}

// GPU returns the counters of the GPU with NVML index index.
func (c Counters) GPU(index int) (GPUCounters, bool) {
	for _, g := range c.GPUs {
		if g.Index == index {
			return g, true
		}
	}
	return GPUCounters{}, false
}

// Interval is what happened between two Counters: averages per GPU and per
// process. Build one with Delta.
type Interval struct {
	Start, End time.Time
	// Ticks is how many ticks fell in the interval.
	Ticks uint64
	GPUs  []GPUInterval
}

// Duration is End - Start.
func (iv Interval) Duration() time.Duration { return iv.End.Sub(iv.Start) }

// GPUInterval is one GPU's averages over an interval.
type GPUInterval struct {
	Index             int
	UUID, BusID, Name Value[string]
	Samples           uint64
	GPUUtilization    Value[Percent]
	MemoryUtilization Value[Percent]
	MemoryUsed        Value[Bytes]
	MemoryTotal       Value[Bytes]
	Err               error
	// ProcessSamples is how many ticks in the interval read the process
	// lists; below Samples, the processes' figures miss the other ticks.
	// ProcessesErr is the latest tick's error reading them (see
	// GPUCounters.ProcessesErr).
	ProcessSamples uint64
	ProcessesErr   error
	// Processes holds every process seen in the interval, those that
	// exited in it included (Exited set), by PID.
	Processes []ProcessInterval
	// Vgpus holds the vGPU instances present at the interval's end, by ID.
	Vgpus []VgpuInterval
}

// VgpuInterval is one vGPU instance's averages over an interval.
type VgpuInterval struct {
	ID                                     uint32
	UUID, Type, VMID                       Value[string]
	Samples                                uint64
	SMUtilization, FramebufferUtilization  Value[Percent]
	EncoderUtilization, DecoderUtilization Value[Percent]
	FramebufferUsed                        Value[Bytes]
}

// ProcessInterval is one process's averages on one GPU over an interval.
type ProcessInterval struct {
	ProcessKey
	Exited         bool
	Type           ProcessType
	Name, Username Value[string]
	// Samples is how many ticks in the interval saw the process; times the
	// tick interval, it is how long the process held the GPU.
	Samples              uint64
	GPUMemory            Value[Bytes]
	GPUSMUtilization     Value[Percent]
	GPUMemoryUtilization Value[Percent]
	// Accounting is the process's latest accounting record (lifetime
	// figures, not the interval's).
	Accounting Value[ProcessAccounting]
}

// ErrForeignCounters is returned by Delta for Counters of two different
// accumulators, or a "previous" one that is newer than the current one.
var ErrForeignCounters = errors.New("nvgo: counters are not from the same accumulator, in order")

// Delta returns the averages between prev and cur, two Counters of the same
// accumulator with prev not newer. The zero Counters as prev means "since
// the accumulator started". A process in cur but not in prev started in the
// interval; one in cur.Exited left in it.
func Delta(prev, cur Counters) (Interval, error) {
	zero := prev.acc == 0 && prev.Ticks == 0
	if !zero && (prev.acc != cur.acc || prev.Ticks > cur.Ticks) {
		return Interval{}, ErrForeignCounters
	}
	iv := Interval{Start: prev.Time, End: cur.Time, Ticks: cur.Ticks - prev.Ticks}
	if zero {
		iv.Start = cur.Start
	}
	if len(cur.GPUs) > 0 {
		iv.GPUs = make([]GPUInterval, 0, len(cur.GPUs))
	}
	for _, g := range cur.GPUs {
		p, _ := prev.GPU(g.Index)
		iv.GPUs = append(iv.GPUs, gpuDelta(p, g))
	}
	return iv, nil
}

func gpuDelta(p, c GPUCounters) GPUInterval {
	out := GPUInterval{
		Index: c.Index, UUID: c.UUID, BusID: c.BusID, Name: c.Name,
		Samples:           c.Samples - p.Samples,
		GPUUtilization:    utilDelta(p.GPUUtilization, c.GPUUtilization),
		MemoryUtilization: utilDelta(p.MemoryUtilization, c.MemoryUtilization),
		MemoryUsed:        memDelta(p.MemoryUsed, c.MemoryUsed),
		MemoryTotal:       c.MemoryTotal,
		Err:               c.Err,
		ProcessSamples:    c.ProcessSamples - p.ProcessSamples,
		ProcessesErr:      c.ProcessesErr,
	}
	if n := len(c.Processes) + len(c.Exited); n > 0 {
		out.Processes = make([]ProcessInterval, 0, n)
	}
	before := make(map[ProcessKey]*ProcessCounters, len(p.Processes))
	for i := range p.Processes {
		before[p.Processes[i].ProcessKey] = &p.Processes[i]
	}
	add := func(list []ProcessCounters) {
		for i := range list {
			pc := &list[i]
			var old ProcessCounters
			if o := before[pc.ProcessKey]; o != nil {
				old = *o
			}
			out.Processes = append(out.Processes, ProcessInterval{
				ProcessKey: pc.ProcessKey, Exited: pc.Exited, Type: pc.Type,
				Name: pc.Name, Username: pc.Username,
				Samples:              pc.Samples - old.Samples,
				GPUMemory:            memDelta(old.GPUMemory, pc.GPUMemory),
				GPUSMUtilization:     utilDelta(old.GPUSMUtilization, pc.GPUSMUtilization),
				GPUMemoryUtilization: utilDelta(old.GPUMemoryUtilization, pc.GPUMemoryUtilization),
				Accounting:           pc.Accounting,
			})
		}
	}
	add(c.Processes)
	add(c.Exited)
	out.Vgpus = vgpuDeltas(p.Vgpus, c.Vgpus)
	return out
}

// vgpuDeltas pairs the instances of cur with those of prev by ID and
// Since (an ID the driver reused is a new instance).
func vgpuDeltas(prev, cur []VgpuCounters) []VgpuInterval {
	if cur == nil {
		return nil
	}
	out := make([]VgpuInterval, 0, len(cur))
	for _, c := range cur {
		var p VgpuCounters
		for _, x := range prev {
			if x.ID == c.ID && x.Since.Equal(c.Since) {
				p = x
				break
			}
		}
		out = append(out, VgpuInterval{
			ID: c.ID, UUID: c.UUID, Type: c.Type, VMID: c.VMID,
			Samples:                c.Samples - p.Samples,
			SMUtilization:          utilDelta(p.SMUtilization, c.SMUtilization),
			FramebufferUtilization: utilDelta(p.FramebufferUtilization, c.FramebufferUtilization),
			EncoderUtilization:     utilDelta(p.EncoderUtilization, c.EncoderUtilization),
			DecoderUtilization:     utilDelta(p.DecoderUtilization, c.DecoderUtilization),
			FramebufferUsed:        memDelta(p.FramebufferUsed, c.FramebufferUsed),
		})
	}
	return out
}

func utilDelta(p, c UtilizationCounter) Value[Percent] {
	s, ok := c.Sum.Get()
	if !ok {
		return NA[Percent](c.Sum.Reason(), c.Sum.Err())
	}
	return meanPercent(Some(s-p.Sum.Or(0)), c.Samples-p.Samples, c.Last)
}

func memDelta(p, c MemoryCounter) Value[Bytes] {
	s, ok := c.SumKiB.Get()
	if !ok {
		return NA[Bytes](c.SumKiB.Reason(), c.SumKiB.Err())
	}
	return meanBytes(Some(s-p.SumKiB.Or(0)), c.Samples-p.Samples, c.Last)
}

// GPU returns the interval's averages of the GPU with NVML index i, or nil
// when the accumulator does not watch it.
func (iv Interval) GPU(index int) *GPUInterval {
	for i := range iv.GPUs {
		if iv.GPUs[i].Index == index {
			return &iv.GPUs[i]
		}
	}
	return nil
}

// Running returns the averages of the process with PID pid that still runs
// on the GPU at the interval's end (not one that exited during it, whose PID
// may be another's now), or nil when there is none. A nil g (a GPU the
// interval lacks) has none.
func (g *GPUInterval) Running(pid int) *ProcessInterval {
	if g == nil {
		return nil
	}
	for i := range g.Processes {
		if p := &g.Processes[i]; p.PID == pid && !p.Exited {
			return p
		}
	}
	return nil
}
