package nvgo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
	"github.com/nvgo/nvgo/internal/sampling"
)

// DefaultAccumulatorInterval is an Accumulator's tick unless configured: one
// second, as atopgpud samples.
const DefaultAccumulatorInterval = time.Second

// DefaultMaxPendingExits bounds the exited processes a Reader holds between
// two reads unless configured.
const DefaultMaxPendingExits = 4096

// AccumulatorOption configures Library.StartAccumulator.
type AccumulatorOption func(*accumulatorOptions)

type accumulatorOptions struct {
	interval   time.Duration
	devices    []*Device
	devicesSet bool
	maxExits   int
}

// WithAccumulatorInterval sets the time between ticks (default
// DefaultAccumulatorInterval). It must be positive.
func WithAccumulatorInterval(d time.Duration) AccumulatorOption {
	return func(o *accumulatorOptions) { o.interval = d }
}

// WithAccumulatorDevices limits the accumulator to devs (default: every GPU
// of the Library). MIG devices are not sampled on their own: their
// processes count on the parent GPU, which is sampled in their place.
func WithAccumulatorDevices(devs ...*Device) AccumulatorOption {
	return func(o *accumulatorOptions) {
		o.devices = append(o.devices, devs...)
		o.devicesSet = true
	}
}

// WithMaxPendingExits bounds the exits a Reader that does not read keeps
// (default DefaultMaxPendingExits); beyond it the oldest are dropped (and
// counted in Reader.Dropped). It must be positive.
func WithMaxPendingExits(n int) AccumulatorOption {
	return func(o *accumulatorOptions) { o.maxExits = n }
}

// Accumulator samples GPUs and their processes once per tick into monotonic
// counters, as atopgpud does, so that any reader can difference them at its
// own pace (see Delta). It runs until the context given to StartAccumulator
// ends, on the Library's clock (WithClock): over a fake fleet, use one of
// package fakegpu/fleetclock's, since the fake driver takes samples only as
// the fleet's clock moves. Reading it (Counters, Reader.Read) never blocks the sampler and
// never waits on NVML: each tick publishes an immutable Counters value.
//
// Device and per-process utilization come from the driver's sample buffers
// (nvmlDeviceGetSamples, nvmlDeviceGetProcessUtilization), each read from a
// cursor at the newest sample seen, so what happened between two ticks is
// counted; where a GPU keeps no buffer, the instantaneous reading is used.
//
// A process is identified by its PID and the tick it was first seen at: one
// that leaves the GPU's process list is final, and a PID that comes back is
// a new process with new counters.
//
// An Accumulator is safe for concurrent use.
type Accumulator struct {
	interval time.Duration
	clock    Clock
	maxExits int
	id       uint64

	cur  atomic.Pointer[Counters]
	done chan struct{}

	mu      sync.Mutex // guards readers and updated
	readers map[*Reader]struct{}
	updated chan struct{} // closed at the next publish

	// Owned by the sampler goroutine.
	gpus  []*gpuAccum
	start time.Time
	sched schedule
	ticks uint64
}

var accumulatorIDs atomic.Uint64

// StartAccumulator takes the first tick now and then samples every interval
// (drift-free: tick n is due at start + n·interval; a tick that overruns
// skips the ones it missed) until ctx ends. It fails only when the Library
// cannot be used (no driver), ctx has ended or an option is invalid
// (wrapping ErrInvalidArgument); on a machine with no GPU the counters are
// empty. A GPU that fails later keeps its counters and reports the error
// in GPUCounters.Err.
func (l *Library) StartAccumulator(ctx context.Context, opts ...AccumulatorOption) (*Accumulator, error) {
	o := accumulatorOptions{interval: DefaultAccumulatorInterval, maxExits: DefaultMaxPendingExits}
	for _, opt := range opts {
		opt(&o)
	}
	if o.interval <= 0 || o.maxExits <= 0 {
		return nil, fmt.Errorf("nvgo: accumulator: interval %v and MaxPendingExits %d must be positive: %w", o.interval, o.maxExits, ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	devs := o.devices
	if !o.devicesSet {
		var err error
		if devs, err = l.Devices(); err != nil {
			return nil, err
		}
	}
	a := &Accumulator{
		interval: o.interval,
		clock:    l.clock,
		maxExits: o.maxExits,
		id:       accumulatorIDs.Add(1),
		done:     make(chan struct{}),
		readers:  map[*Reader]struct{}{},
		updated:  make(chan struct{}),
	}
	for _, d := range devs {
		if d == nil {
			continue
		}
		if d.mig != nil {
			d = d.mig.parent
		}
		if !slices.ContainsFunc(a.gpus, func(g *gpuAccum) bool { return g.d == d }) {
			a.gpus = append(a.gpus, newGPUAccum(d))
		}
	}
	a.start = a.clock.Now()
	a.sched = newSchedule(a.start, a.interval)
	a.tick(a.start)
	go a.run(ctx)
	return a, nil
}

// Interval returns the time between ticks.
func (a *Accumulator) Interval() time.Duration { return a.interval }

// Done is closed once the sampler has stopped (its context ended).
func (a *Accumulator) Done() <-chan struct{} { return a.done }

// Counters returns the counters as of the latest tick. Exited processes are
// not in it: read them through a Reader.
func (a *Accumulator) Counters() Counters { return *a.cur.Load() }

// Updated returns a channel that is closed when the next tick is published.
func (a *Accumulator) Updated() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.updated
}

func (a *Accumulator) run(ctx context.Context) {
	defer close(a.done)
	for sleepUntil(ctx, a.clock, a.sched.due()) == nil {
		now := a.clock.Now()
		a.sched.take(now)
		a.tick(now)
		a.sched.skipPast(a.clock.Now())
	}
}

// tick samples every GPU and publishes the result.
func (a *Accumulator) tick(now time.Time) {
	a.ticks++
	var exits [][]ProcessCounters
	gpus := make([]GPUCounters, len(a.gpus))
	for i, g := range a.gpus {
		gone := g.sample(now)
		gpus[i] = g.publish()
		exits = append(exits, gone)
	}
	c := &Counters{Start: a.start, Time: now, Ticks: a.ticks, Missed: a.sched.missed, GPUs: gpus, acc: a.id}

	a.mu.Lock()
	for r := range a.readers {
		r.deliver(exits)
	}
	a.cur.Store(c)
	close(a.updated)
	a.updated = make(chan struct{})
	a.mu.Unlock()
}

// Reader reads an Accumulator and receives each exited process once. Exits
// that happen before the Reader is created are not delivered to it.
type Reader struct {
	a       *Accumulator
	pending [][]ProcessCounters // per GPU, in the accumulator's GPU order
	n       int
	dropped uint64
}

// NewReader returns a Reader that will hand over every process that exits
// from now on, once.
func (a *Accumulator) NewReader() *Reader {
	r := &Reader{a: a, pending: make([][]ProcessCounters, len(a.gpus))}
	a.mu.Lock()
	a.readers[r] = struct{}{}
	a.mu.Unlock()
	return r
}

// deliver queues one tick's exits; a.mu is held.
func (r *Reader) deliver(exits [][]ProcessCounters) {
	for i, list := range exits {
		r.pending[i] = append(r.pending[i], list...)
		r.n += len(list)
	}
	for r.n > r.a.maxExits {
		// Drop the oldest exit of the GPU whose oldest is oldest.
		j := -1
		for i, l := range r.pending {
			if len(l) > 0 && (j < 0 || l[0].LastSeen.Before(r.pending[j][0].LastSeen)) {
				j = i
			}
		}
		r.pending[j] = r.pending[j][1:]
		r.n--
		r.dropped++
	}
}

// Read returns the latest counters, with GPUCounters.Exited holding the
// processes that exited since this Reader's previous Read.
func (r *Reader) Read() Counters {
	r.a.mu.Lock()
	c := *r.a.cur.Load()
	pending := r.pending
	if r.n > 0 {
		r.pending = make([][]ProcessCounters, len(pending))
		r.n = 0
	} else {
		pending = nil
	}
	r.a.mu.Unlock()
	if pending == nil {
		return c
	}
	c.GPUs = slices.Clone(c.GPUs)
	for i := range c.GPUs {
		if i < len(pending) {
			c.GPUs[i].Exited = pending[i]
		}
	}
	return c
}

// Dropped returns how many exits were dropped because the Reader held
// MaxPendingExits unread ones.
func (r *Reader) Dropped() uint64 {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	return r.dropped
}

// Close stops deliveries to the Reader; it is safe to call more than once.
func (r *Reader) Close() {
	r.a.mu.Lock()
	defer r.a.mu.Unlock()
	delete(r.a.readers, r)
	r.pending = make([][]ProcessCounters, len(r.pending))
	r.n = 0
}

// gpuAccum is the sampler's state for one GPU.
type gpuAccum struct {
	d *Device
	c GPUCounters // Processes and Exited unused here

	// The accumulator's own readers of the sample buffers.
	util     sampling.DevicePerTick
	procUtil sampling.ProcessesPerTick

	procs   map[uint32]*ProcessCounters
	order   []uint32 // the PIDs of procs, sorted
	seen    map[uint32]seenProcess
	acctOff Value[ProcessAccounting] // why accounting is N/A this tick
	list    []listedProcess          // the buffer of the last listing
	vgpu    vgpuAccum
	reading DeviceSnapshot // the tick's readings of the table
}

func newGPUAccum(d *Device) *gpuAccum {
	g := &gpuAccum{d: d, procs: map[uint32]*ProcessCounters{}, vgpu: newVgpuAccum()}
	g.util, g.procUtil = sampling.NewDevicePerTick(), sampling.NewProcessesPerTick()
	g.c.Index = d.index
	g.c.UUID, g.c.BusID, g.c.Name = d.UUID(), d.BusID(), d.Name()
	na := NA[Percent](NotReported, errNoSample)
	g.c.GPUUtilization.Last, g.c.MemoryUtilization.Last = na, na
	g.c.MemoryUsed.Last = NA[Bytes](NotReported, errNoSample)
	g.c.MemoryTotal = NA[Bytes](NotReported, errNoSample)
	return g
}

// publish returns an immutable copy of the GPU's counters.
func (g *gpuAccum) publish() GPUCounters {
	c := g.c
	c.Processes = make([]ProcessCounters, len(g.order))
	for i, pid := range g.order {
		c.Processes[i] = *g.procs[pid]
	}
	c.Vgpus, c.VgpusErr = g.vgpu.publish(), g.vgpu.err
	return c
}

// sample takes one tick of the GPU and returns the processes that left it.
// Its readings are the metric table's, through a pass of its own.
func (g *gpuAccum) sample(now time.Time) (exited []ProcessCounters) {
	h, err := g.d.handle()
	if err != nil {
		g.fail(err)
		return nil
	}
	r := newPassReader(g.d, h, now)
	defer r.release()
	s := &g.reading
	r.readMetrics(s, FieldMemory)
	if r.lost != nil {
		g.fail(r.lost)
		return nil
	}
	g.c.Err = nil
	g.c.Samples++
	g.c.MemoryUsed.add(s.MemoryUsed)
	g.c.MemoryTotal = s.MemoryTotal
	gpu, memBusy := g.utilization(r, now)
	g.c.GPUUtilization.add(gpu)
	g.c.MemoryUtilization.add(memBusy)
	exited = g.processes(r, now)
	g.vgpu.sample(g.d, h, now)
	return exited
}

// fail records a tick at which the GPU could not be read at all.
func (g *gpuAccum) fail(err error) {
	g.c.Err, g.c.ProcessesErr = err, err
	r := ReasonOf(err)
	g.c.GPUUtilization.Last = NA[Percent](r, err)
	g.c.MemoryUtilization.Last = NA[Percent](r, err)
	g.c.MemoryUsed.Last = NA[Bytes](r, err)
}

// utilization returns the tick's GPU and memory busy percentages: the
// time-weighted means of the driver's samples new to the accumulator's
// reader (sampling.DevicePerTick), else the table's instantaneous reading.
func (g *gpuAccum) utilization(r *passReader, now time.Time) (gpu, mem Value[Percent]) {
	if g.d.mig != nil {
		na := NA[Percent](NotSupported, errNotOnMIG)
		return na, na
	}
	m := g.util.Read(r.h, now)
	if m.HasGPU {
		gpu = Some(Percent(m.GPU))
	}
	if m.HasMemory {
		mem = Some(Percent(m.Memory))
	}
	if m.HasGPU && m.HasMemory {
		return gpu, mem
	}
	s := &g.reading
	r.readMetrics(s, FieldUtilization)
	if !m.HasGPU {
		gpu = s.GPUUtilization
	}
	if !m.HasMemory {
		mem = s.MemoryUtilization
	}
	return gpu, mem
}

// seenProcess is one process in the lists of one tick.
type seenProcess struct {
	typ ProcessType
	mem uint64
	has bool
}

// processes merges the GPU's process lists into the counters and returns
// those that left.
func (g *gpuAccum) processes(r *passReader, now time.Time) []ProcessCounters {
	list, err := listProcesses(r, g.d.lib.hosts, g.list)
	g.c.ProcessesErr = err
	if err != nil {
		// The lists cannot be read: nobody is known to have left.
		return nil
	}
	g.c.ProcessSamples++
	g.list = list
	if g.seen == nil {
		g.seen = map[uint32]seenProcess{}
	}
	clear(g.seen)
	for _, e := range list {
		g.seen[e.pid] = seenProcess{typ: e.typ, mem: e.mem, has: true}
	}

	acct := g.accounting()
	var exited []ProcessCounters
	changed := false
	var left []int32
	for pid, p := range g.procs {
		if _, ok := g.seen[pid]; !ok {
			p.Exited = true
			if acct {
				p.Accounting = g.processAccounting(p) // the final record
			}
			exited = append(exited, *p)
			delete(g.procs, pid)
			left = append(left, int32(pid))
			changed = true
		}
	}
	g.d.lib.hosts.release(g, left)
	slices.SortFunc(exited, func(a, b ProcessCounters) int { return a.PID - b.PID })

	var util map[uint32]sampling.ProcessMeans
	var utilErr error
	if len(g.seen) > 0 {
		util, utilErr = g.processUtilization(r.h, now)
	}
	for pid, s := range g.seen {
		p := g.procs[pid]
		if p == nil {
			p = g.newProcess(pid, now)
			g.procs[pid] = p
			changed = true
		}
		p.LastSeen = now
		p.Type = s.typ
		p.Samples++
		p.GPUMemory.add(processMemory(s.mem))
		if acct {
			p.Accounting = g.processAccounting(p)
		} else {
			p.Accounting = g.acctOff
		}
		if utilErr != nil {
			na := NA[Percent](ReasonOf(utilErr), utilErr)
			p.GPUSMUtilization.add(na)
			p.GPUMemoryUtilization.add(na)
			continue
		}
		u := util[pid] // none: idle
		p.GPUSMUtilization.add(Some(Percent(u.SM)))
		p.GPUMemoryUtilization.add(Some(Percent(u.Memory)))
	}
	if changed {
		g.order = g.order[:0]
		for pid := range g.procs {
			g.order = append(g.order, pid)
		}
		slices.Sort(g.order)
	}
	return exited
}

// accounting reads whether the GPU's accounting mode is on; when it is
// not, g.acctOff says why.
func (g *gpuAccum) accounting() bool {
	mode := g.d.AccountingMode()
	if on, ok := mode.Get(); ok && bool(on) {
		return true
	}
	if on, ok := mode.Get(); ok && !bool(on) {
		if !errors.Is(g.acctOff.Err(), ErrAccountingOff) { // made once while it stays off
			err := fmt.Errorf("%s: %w: %w", g.d.label(), ErrAccountingOff, ErrNotSupported)
			g.acctOff = NA[ProcessAccounting](NotSupported, err)
		}
	} else {
		g.acctOff = NA[ProcessAccounting](mode.Reason(), mode.Err())
	}
	return false
}

// processAccounting reads p's accounting record, refusing one that belongs
// to an earlier process with the same PID.
func (g *gpuAccum) processAccounting(p *ProcessCounters) Value[ProcessAccounting] {
	v := g.d.ProcessAccounting(p.PID)
	a, ok := v.Get()
	if created, known := p.CreateTime.Get(); ok && known && a.StartTime.Before(created.Add(-accountingStartSlack)) {
		err := fmt.Errorf("%s: pid %d: the accounting record is an earlier process's with the same PID: %w", g.d.label(), p.PID, ErrProcessGone)
		return NA[ProcessAccounting](ProcessGone, err)
	}
	return v
}

// newProcess starts the counters of a process first seen now, with its
// host identity from the library's host table (which the accumulator
// releases when the process leaves, so nothing grows with the processes
// that come and go).
func (g *gpuAccum) newProcess(pid uint32, now time.Time) *ProcessCounters {
	p := &ProcessCounters{ProcessKey: ProcessKey{PID: int(pid), Since: now}}
	host, _, _ := g.d.lib.hosts.lookup(int(pid), g)
	p.Name, p.Username, p.CreateTime = host.Name(), host.Username(), host.CreateTime()
	return p
}

// processUtilization returns each process's mean SM and memory utilization
// over its samples new to the accumulator's reader (sampling.ProcessesPerTick).
func (g *gpuAccum) processUtilization(h nvmlx.Device, now time.Time) (map[uint32]sampling.ProcessMeans, error) {
	if g.d.mig != nil {
		return nil, errNotOnMIG
	}
	return g.procUtil.Read(h, now)
}
