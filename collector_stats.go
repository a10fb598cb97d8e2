package nvgo

import "time"

// Stat is what a Collector reports for one metric over the span of a tag.
// A metric that never had a value in the span has no Stat at all: N/A is
// never counted as zero.
type Stat struct {
	// Mean is the time-weighted mean: the area under the straight lines
	// joining the samples, divided by the time they cover (see Collector).
	Mean float64 `json:"mean"`
	// Min and Max are the smallest and largest sampled values.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// Last is the latest sampled value.
	Last float64 `json:"last"`
	// Count is the number of samples in which the metric had a value.
	Count int `json:"count"`
}

// timeWeighted keeps the statistics of one metric in O(1) space. The
// metric's curve is piecewise linear through its samples; before its first
// sample it is flat back to origin. mean() is the curve's integral over
// [origin, lastAt] divided by that span.
type timeWeighted struct {
	origin   time.Time // where the curve starts
	count    int
	min, max float64
	last     float64
	lastAt   time.Time
	area     float64 // value × seconds over [origin, lastAt]
}

// add records the value v sampled at at. Samples come in time order; a
// sample that seems older than the previous one (it cannot, on a monotonic
// clock) adds no area.
func (s *timeWeighted) add(at time.Time, v float64) {
	if s.count == 0 {
		s.area = v * seconds(at.Sub(s.origin))
		s.min, s.max = v, v
	} else {
		s.area += (s.last + v) / 2 * seconds(at.Sub(s.lastAt))
		s.min, s.max = min(s.min, v), max(s.max, v)
	}
	s.last, s.lastAt = v, at
	s.count++
}

// stat returns the statistics so far. With no time covered (a single value
// sampled at the origin) the mean is that value. The mean is kept within
// [min, max], and is exact for a constant, whatever the rounding of area.
func (s *timeWeighted) stat() Stat {
	mean := s.last
	if span := seconds(s.lastAt.Sub(s.origin)); span > 0 && s.min != s.max {
		mean = min(max(s.area/span, s.min), s.max)
	}
	return Stat{Mean: mean, Min: s.min, Max: s.max, Last: s.last, Count: s.count}
}

// seconds returns d in seconds, and 0 for a negative d.
func seconds(d time.Duration) float64 { return max(d, 0).Seconds() }

// tagBuffer holds the statistics of every metric since a tag was activated
// (or cleared).
type tagBuffer struct {
	name       string // the tag itself
	prefix     string // the tag and those it is nested in: "train/epoch1"
	start      time.Time
	samples    int
	lastSample time.Time
	stats      map[string]*timeWeighted // by metric key without the prefix
}

func newTagBuffer(name, prefix string, start time.Time) *tagBuffer {
	return &tagBuffer{name: name, prefix: prefix, start: start, stats: map[string]*timeWeighted{}}
}

// reset forgets every statistic and restarts the span at now.
func (b *tagBuffer) reset(now time.Time) {
	b.start, b.samples, b.lastSample = now, 0, time.Time{}
	clear(b.stats)
}

// add feeds one sample. A sample taken before the tag's start (it began
// before the tag was activated) is not the tag's. A metric with a value in
// the tag's first sample counts from the tag's start; one first seen later
// (a process that started since, a GPU that came back) counts from its first
// value.
func (b *tagBuffer) add(at time.Time, values map[string]float64) {
	if at.Before(b.start) {
		return
	}
	for k, v := range values {
		s := b.stats[k]
		if s == nil {
			origin := at
			if b.samples == 0 {
				origin = b.start
			}
			s = &timeWeighted{origin: origin}
			b.stats[k] = s
		}
		s.add(at, v)
	}
	b.samples++
	b.lastSample = at
}

// span describes the buffer for Metrics.
func (b *tagBuffer) span() TagSpan {
	return TagSpan{Tag: b.prefix, Start: b.start, LastSample: b.lastSample, Samples: b.samples}
}

// TagSpan is the span of one active tag.
type TagSpan struct {
	// Tag is the tag's key prefix: its name after those it is nested in,
	// e.g. "train/epoch1".
	Tag string `json:"tag"`
	// Start is when the tag was activated or last cleared.
	Start time.Time `json:"start"`
	// LastSample is when its latest sample was taken (zero before the first).
	LastSample time.Time `json:"last_sample"`
	// Samples is the number of samples it was fed.
	Samples int `json:"samples"`
}
