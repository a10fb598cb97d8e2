package nvgo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nvgo/nvgo/internal/sampling"
)

// ErrTooFewDevices means fewer devices satisfy a selection than its minimum
// count. SelectDevices still returns those that do.
var ErrTooFewDevices = errors.New("fewer devices satisfy the constraints than asked for")

// SelectOption sets one constraint or preference of SelectDevices.
type SelectOption func(*selectOptions)

type selectOptions struct {
	candidates    []*Device
	candidatesSet bool
	skipReserved  bool
	minCount      int
	maxCount      int // -1: no limit
	minFree       Bytes
	minTotal      Bytes
	maxGPU        Value[Percent] // N/A: no constraint
	maxMem        Value[Percent]
	tolerance     Percent
	freeAccounts  []string
	unsorted      bool
	window        time.Duration
	lockDir       string
	lockDirReady  bool         // lockDir was resolved and prepared
	unread        DeviceErrors // GPUs left out of the default candidates
}

// WithCandidates limits the choice to devs (default: every leaf device, i.e.
// each GPU, or its MIG devices where MIG is on).
func WithCandidates(devs ...*Device) SelectOption {
	return func(o *selectOptions) {
		o.candidates, o.candidatesSet = append(o.candidates, devs...), true
	}
}

// WithoutReserved leaves out devices another launcher holds a reservation on
// (see ReserveDevices and WithLockDir). ReserveDevices skips them anyway.
func WithoutReserved() SelectOption { return func(o *selectOptions) { o.skipReserved = true } }

// WithMinCount asks for at least n devices; with fewer, SelectDevices
// returns ErrTooFewDevices alongside those it found.
func WithMinCount(n int) SelectOption { return func(o *selectOptions) { o.minCount = n } }

// WithMaxCount returns at most n devices (default: no limit).
func WithMaxCount(n int) SelectOption { return func(o *selectOptions) { o.maxCount = n } }

// WithCount asks for exactly n devices: WithMinCount(n) and WithMaxCount(n).
func WithCount(n int) SelectOption {
	return func(o *selectOptions) { o.minCount, o.maxCount = n, n }
}

// WithMinFreeMemory keeps devices with at least b bytes of free memory.
func WithMinFreeMemory(b Bytes) SelectOption { return func(o *selectOptions) { o.minFree = b } }

// WithMinTotalMemory keeps devices with at least b bytes of memory in all.
func WithMinTotalMemory(b Bytes) SelectOption { return func(o *selectOptions) { o.minTotal = b } }

// WithMaxGPUUtilization keeps devices whose GPU utilization is at most p.
func WithMaxGPUUtilization(p Percent) SelectOption {
	return func(o *selectOptions) { o.maxGPU = Some(p) }
}

// WithMaxMemoryUtilization keeps devices whose memory utilization is at most p.
func WithMaxMemoryUtilization(p Percent) SelectOption {
	return func(o *selectOptions) { o.maxMem = Some(p) }
}

// WithTolerance loosens every threshold by p percent (memory minima shrink by
// p%, utilization maxima grow by p points). Devices that pass only the
// loosened thresholds rank after those that pass the strict ones.
func WithTolerance(p Percent) SelectOption { return func(o *selectOptions) { o.tolerance = p } }

// WithFreeAccounts counts the GPU memory of these users' processes as free
// (for a user who may stop their own jobs). A process whose user or memory
// is N/A is not counted.
func WithFreeAccounts(users ...string) SelectOption {
	return func(o *selectOptions) { o.freeAccounts = append(o.freeAccounts, users...) }
}

// WithoutSorting keeps the candidates' order instead of ranking them.
func WithoutSorting() SelectOption { return func(o *selectOptions) { o.unsorted = true } }

// WithUtilizationWindow judges GPU and memory utilization by the average of
// the driver's samples over the last d (the driver keeps a few seconds)
// rather than one reading, so a GPU that happens to be idle at the moment of
// the read is not taken for free. Where the driver keeps no samples (MIG,
// older GPUs) the instantaneous reading is used.
func WithUtilizationWindow(d time.Duration) SelectOption {
	return func(o *selectOptions) { o.window = d }
}

// candidate is one device's figures as the selection judges them.
type candidate struct {
	dev               *Device
	total, used, free Value[Bytes]
	gpuUtil, memUtil  Value[Percent]
	loosened          int // strict constraints it fails
	passes            bool
}

// SelectDevices picks devices for a job, as nvitop's select_devices does:
// filter by the constraints, rank, and cut to the maximum count.
//
// N/A never satisfies a constraint: a device whose free memory, total memory
// or utilization cannot be read is left out when that figure is
// constrained (nvitop lets N/A memory pass). Unconstrained figures do not
// matter. Ranking (unless WithoutSorting): devices passing every strict
// threshold first, then most free memory, most used memory, least GPU
// utilization, least memory utilization, and the highest index first, which
// keeps GPU 0 (where displays and stray jobs land) for last. N/A ranks last.
//
// MIG devices obey CUDA's limits on what one process can use: before
// driver R570, one MIG device and no whole GPU (the best-ranked wins);
// from R570, one compute instance per GPU instance.
//
// With fewer than the minimum count it returns the devices found and an
// error matching ErrTooFewDevices. A GPU that cannot be read (one that fell
// off the bus, say) satisfies no constraint: the devices are chosen among
// the others and returned all the same, with a DeviceErrors (found with
// errors.As) that names it, as LeafDevices does. It writes no log.
func (l *Library) SelectDevices(ctx context.Context, opts ...SelectOption) ([]*Device, error) {
	o, err := l.selectOptions(opts)
	if err != nil {
		return nil, err
	}
	cands, err := l.judge(ctx, o)
	if err != nil {
		return nil, err
	}
	out := l.pick(o, cands)
	if len(out) < o.minCount {
		err = fmt.Errorf("nvgo: %d of %d devices wanted satisfy the constraints: %w", len(out), o.minCount, ErrTooFewDevices)
	}
	return out, o.withUnread(err)
}

// withUnread adds the GPUs left out of the candidates to err, which may be
// nil.
func (o *selectOptions) withUnread(err error) error {
	if len(o.unread) == 0 {
		return err
	}
	if err == nil {
		return o.unread
	}
	return errors.Join(err, o.unread)
}

func (l *Library) selectOptions(opts []SelectOption) (*selectOptions, error) {
	o := &selectOptions{maxCount: -1}
	for _, opt := range opts {
		opt(o)
	}
	switch {
	case o.minCount < 0:
		return nil, fmt.Errorf("nvgo: minimum count %d is negative: %w", o.minCount, ErrInvalidArgument)
	case o.maxCount >= 0 && o.maxCount < o.minCount:
		return nil, fmt.Errorf("nvgo: maximum count %d is below the minimum %d: %w", o.maxCount, o.minCount, ErrInvalidArgument)
	case o.tolerance < 0 || o.tolerance > 100 || math.IsNaN(float64(o.tolerance)):
		return nil, fmt.Errorf("nvgo: tolerance %v%% is not between 0 and 100: %w", float64(o.tolerance), ErrInvalidArgument)
	case o.window < 0:
		return nil, fmt.Errorf("nvgo: utilization window %v is negative: %w", o.window, ErrInvalidArgument)
	}
	for _, p := range []Value[Percent]{o.maxGPU, o.maxMem} {
		if v, ok := p.Get(); ok && (v < 0 || math.IsNaN(float64(v))) {
			return nil, fmt.Errorf("nvgo: utilization limit %v%% is negative: %w", float64(v), ErrInvalidArgument)
		}
	}
	if !o.candidatesSet {
		devs, err := l.LeafDevices()
		var unread DeviceErrors
		if err != nil && !errors.As(err, &unread) {
			return nil, err
		}
		// A GPU that cannot be read satisfies no constraint: choose among
		// the others, and say in the result which were left out.
		o.candidates, o.unread = devs, unread
		if unread != nil {
			l.log.Debug("nvgo: choosing among the GPUs that can be read", "left_out", unread.Error())
		}
	}
	return o, nil
}

// judge reads and scores every candidate.
func (l *Library) judge(ctx context.Context, o *selectOptions) ([]*candidate, error) {
	cands := make([]*candidate, 0, len(o.candidates))
	for _, d := range o.candidates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if o.skipReserved && o.reserved(d) {
			continue
		}
		c := o.read(d)
		o.score(c)
		if c.passes {
			cands = append(cands, c)
		}
	}
	return cands, nil
}

// read takes the figures of one device, fresh (not from the cache).
func (o *selectOptions) read(d *Device) *candidate {
	f := FieldMemory | FieldUtilization
	if len(o.freeAccounts) > 0 {
		f |= FieldProcesses
	}
	s := d.Snapshot(f)
	c := &candidate{dev: d, total: s.MemoryTotal, used: s.MemoryUsed, free: s.MemoryFree,
		gpuUtil: s.GPUUtilization, memUtil: s.MemoryUtilization}
	if o.window > 0 {
		if m, ok := d.windowUtilization(o.window); ok {
			if m.HasGPU {
				c.gpuUtil = windowPercent(m.GPU)
			}
			if m.HasMemory {
				c.memUtil = windowPercent(m.Memory)
			}
		}
	}
	if len(o.freeAccounts) > 0 {
		var mine Bytes
		for _, p := range s.Processes {
			u, ok := p.Username.Get()
			if !ok || !slices.Contains(o.freeAccounts, u) {
				continue
			}
			m, ok := p.GPUMemory.Get()
			if !ok {
				continue
			}
			mine += m
		}
		c.free = Map(c.free, func(f Bytes) Bytes { return f + mine })
		c.used = Map(c.used, func(u Bytes) Bytes { return u - min(u, mine) })
	}
	return c
}

// windowUtilization averages the driver's GPU and memory samples of the
// last window (sampling.WindowMeans: cursors of its own that start
// afresh). ok is false on a MIG device and a GPU that cannot be read; a
// buffer the driver does not keep has no mean (the caller keeps the
// instant reading).
func (d *Device) windowUtilization(window time.Duration) (m sampling.DeviceMeans, ok bool) {
	if d.mig != nil {
		return m, false
	}
	h, err := d.handle()
	if err != nil {
		return m, false
	}
	return sampling.WindowMeans(h, window), true
}

// windowPercent is a window's mean as selection compares it, to a tenth of
// a percent.
func windowPercent(mean float64) Value[Percent] { return Some(Percent(math.Round(mean*10) / 10)) }

// score decides whether c passes the loosened thresholds and how many strict
// ones it fails. N/A fails every threshold it is compared with.
func (o *selectOptions) score(c *candidate) {
	tol := float64(o.tolerance) / 100
	c.passes = true
	atLeast := func(v Value[Bytes], want Bytes) {
		if want == 0 {
			return
		}
		x, ok := v.Get()
		switch {
		case !ok || float64(x) < float64(want)*(1-tol):
			c.passes = false
		case x < want:
			c.loosened++
		}
	}
	atMost := func(v Value[Percent], limit Value[Percent]) {
		lim, set := limit.Get()
		if !set {
			return
		}
		x, ok := v.Get()
		switch {
		case !ok || float64(x) > float64(lim)+100*tol:
			c.passes = false
		case x > lim:
			c.loosened++
		}
	}
	atLeast(c.free, o.minFree)
	atLeast(c.total, o.minTotal)
	atMost(c.gpuUtil, o.maxGPU)
	atMost(c.memUtil, o.maxMem)
}

// rank orders candidates best first.
func rank(cands []*candidate) {
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		return cmp.Or(
			cmp.Compare(a.loosened, b.loosened),
			descending(a.free, b.free),
			descending(a.used, b.used),
			Compare(a.gpuUtil, b.gpuUtil),
			Compare(a.memUtil, b.memUtil),
			-cmp.Compare(a.dev.index, b.dev.index),
			-cmp.Compare(a.dev.migIndex(), b.dev.migIndex()),
		)
	})
}

// descending orders real values largest first and N/A last.
func descending[T cmp.Ordered](a, b Value[T]) int {
	x, aok := a.Get()
	y, bok := b.Get()
	if aok && bok {
		return cmp.Compare(y, x)
	}
	return Compare(a, b)
}

func (d *Device) migIndex() int {
	if d.mig != nil {
		return d.mig.slot
	}
	return -1
}

// pick ranks, applies CUDA's MIG limits and the maximum count.
func (l *Library) pick(o *selectOptions, cands []*candidate) []*Device {
	if !o.unsorted {
		rank(cands)
	}
	devs := make([]*Device, len(cands))
	for i, c := range cands {
		devs[i] = c.dev
	}
	devs = migLimits(devs, l.driverBranch())
	if o.maxCount >= 0 && len(devs) > o.maxCount {
		devs = devs[:o.maxCount]
	}
	return devs
}

// migLimits keeps what one CUDA process can use together: before R570 (or
// when the branch is unknown) either whole GPUs only or the first MIG device
// alone, whichever comes first; from R570 one compute instance per GPU
// instance.
func migLimits(devs []*Device, branch int) []*Device {
	if !slices.ContainsFunc(devs, (*Device).IsMIGDevice) {
		return devs
	}
	if branch < 570 {
		if devs[0].IsMIGDevice() {
			return devs[:1]
		}
		return slices.DeleteFunc(devs, (*Device).IsMIGDevice)
	}
	seen := map[[2]int]bool{}
	return slices.DeleteFunc(devs, func(d *Device) bool {
		if d.mig == nil {
			return false
		}
		k := [2]int{d.index, d.mig.GPUInstanceID().Or(-1)}
		dup := seen[k]
		seen[k] = true
		return dup
	})
}

// DeviceUUIDs returns the UUIDs of devs ("GPU-…" or "MIG-…"), the form of
// CUDA_VISIBLE_DEVICES that means the same devices in any CUDA_DEVICE_ORDER.
func DeviceUUIDs(devs []*Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.UUID().Or("")
	}
	return out
}

// DeviceIndices returns the NVML indices of devs. A MIG device has no index
// of its own: it gives ErrInvalidArgument (use DeviceUUIDs).
func DeviceIndices(devs []*Device) ([]int, error) {
	out := make([]int, len(devs))
	for i, d := range devs {
		if d.mig != nil {
			return nil, fmt.Errorf("nvgo: %s has no NVML index of its own: %w", d.label(), ErrInvalidArgument)
		}
		out[i] = d.index
	}
	return out, nil
}

// SelectDevices picks devices from the default Library (Library.SelectDevices).
func SelectDevices(ctx context.Context, opts ...SelectOption) ([]*Device, error) {
	l, err := Default()
	if err != nil {
		return nil, err
	}
	return l.SelectDevices(ctx, opts...)
}
