package sampling

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// stamped is a driver sample: it carries the driver's timestamp (µs).
type stamped interface{ Stamp() uint64 }

// rules are what a reader of a sample buffer decides.
type rules struct {
	// first bounds the first read (the cursor at 0, when the driver hands
	// over all it keeps): only the samples within first of the newest are
	// new to the reader. 0 keeps only the newest; allSamples keeps all.
	first time.Duration
	// window is how much older than the newest sample the reader has seen
	// a kept sample may be and still count; 0 means it counts until
	// replaced. The driver reports per-process samples only for busy
	// processes, so one without a recent sample was idle since.
	window time.Duration
	// stale is how long on the clock without a new sample before no kept
	// sample counts any more; 0 means never.
	stale time.Duration
}

// allSamples as rules.first keeps every sample of the first read.
const allSamples = time.Duration(math.MaxInt64)

// Rules of nvgo's readers.
var (
	// A process's newest sample is its utilization while it is recent, on
	// a device that still reports samples (Device, vGPU processes).
	currentProcessRules = rules{first: allSamples, window: sampleWindow, stale: staleAfter}
	// A vGPU instance's newest sample is its utilization, however old (the
	// sample carries its time).
	newestSampleRules = rules{first: allSamples}
	// A sampler counts what happened since its previous tick; on its first
	// tick, only the newest device sample and the processes' samples of
	// the newest period.
	tickDeviceRules  = rules{first: 0}
	tickProcessRules = rules{first: sampleWindow}
	tickVgpuRules    = rules{first: allSamples}
)

// sampleWindow is how old (in driver time) a process's newest sample may be,
// relative to the device's newest, and still count as its current
// utilization; older means the process was idle since.
const sampleWindow = time.Second

// staleAfter is how long without any new sample on the device before every
// process counts as idle.
const staleAfter = 2 * time.Second

// micros is d in the driver's timestamp unit, saturating.
func micros(d time.Duration) uint64 { return uint64(max(d, 0) / time.Microsecond) }

// cursor is one reader's position in one sample buffer.
type cursor[S stamped] struct {
	rules   rules
	seen    uint64    // newest timestamp seen: the next read asks for newer ones
	moved   time.Time // when seen last moved, on the reader's clock
	started bool      // a read succeeded
}

// read fetches the samples newer than the cursor and returns those new to
// this reader, oldest first, with the cursor's position before the read
// (the lower bound of the first one's period, 0 before any sample). The
// cursor moves to the newest sample. A failed read moves nothing.
func (c *cursor[S]) read(now time.Time, fetch func(since uint64) ([]S, error)) (fresh []S, from uint64, err error) {
	samples, err := fetch(c.seen)
	if err != nil {
		return nil, c.seen, err
	}
	from = c.seen
	first := !c.started
	c.started = true
	// The driver answers only newer samples; a stale one is dropped
	// anyway, so nothing is ever counted twice.
	samples = slices.DeleteFunc(samples, func(s S) bool { return s.Stamp() <= from })
	if len(samples) == 0 {
		return nil, from, nil
	}
	slices.SortStableFunc(samples, func(a, b S) int { return cmp.Compare(a.Stamp(), b.Stamp()) })
	newest := samples[len(samples)-1].Stamp()
	if first && c.rules.first != allSamples {
		cut := newest - min(newest, micros(c.rules.first))
		samples = slices.DeleteFunc(samples, func(s S) bool { return s.Stamp() < cut })
	}
	c.seen, c.moved = newest, now
	return samples, from, nil
}

// counts reports whether a kept sample stamped t still counts at now.
func (c *cursor[S]) counts(t uint64, now time.Time) bool {
	if c.rules.stale > 0 && now.Sub(c.moved) > c.rules.stale {
		return false
	}
	return c.rules.window <= 0 || t+micros(c.rules.window) >= c.seen
}

// newestByKey is a cursor that keeps, per key, the newest sample it read
// (per process, per vGPU instance), for readers that show the current
// utilization rather than sum it up.
type newestByKey[K comparable, S stamped] struct {
	cursor[S]
	key    func(S) K
	newest map[K]S
}

func newNewestByKey[K comparable, S stamped](r rules, key func(S) K) newestByKey[K, S] {
	return newestByKey[K, S]{cursor: cursor[S]{rules: r}, key: key, newest: map[K]S{}}
}

// poll reads the new samples and keeps each key's newest; samples that no
// longer count are dropped.
func (n *newestByKey[K, S]) poll(now time.Time, fetch func(since uint64) ([]S, error)) error {
	fresh, _, err := n.read(now, fetch)
	if err != nil {
		return err
	}
	for _, s := range fresh { // oldest first: the newest wins
		n.newest[n.key(s)] = s
	}
	for k, s := range n.newest {
		if !n.counts(s.Stamp(), now) {
			delete(n.newest, k)
		}
	}
	return nil
}

// get returns k's newest sample if it counts at now.
func (n *newestByKey[K, S]) get(k K, now time.Time) (S, bool) {
	s, ok := n.newest[k]
	if !ok || !n.counts(s.Stamp(), now) {
		var zero S
		return zero, false
	}
	return s, true
}

// forget drops the samples of the keys keep refuses.
func (n *newestByKey[K, S]) forget(keep func(K) bool) {
	for k := range n.newest {
		if !keep(k) {
			delete(n.newest, k)
		}
	}
}

// timeWeightedMean is the mean of value over samples (oldest first), each
// standing for the time since the one before it and the first for the
// time since from (0: unknown). A first sample at or before from, or with
// from unknown, stands for nothing; samples that all stand for nothing
// count alike.
func timeWeightedMean[S stamped](samples []S, from uint64, value func(S) float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	lower := from
	if lower == 0 || lower > samples[0].Stamp() {
		lower = samples[0].Stamp()
	}
	var sum, span, plain float64
	for _, s := range samples {
		w := float64(s.Stamp() - lower)
		sum += value(s) * w
		span += w
		plain += value(s)
		lower = s.Stamp()
	}
	if span == 0 {
		return plain / float64(len(samples))
	}
	return sum / span
}
