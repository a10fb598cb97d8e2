package sampling

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// buffer is a driver sample buffer: it answers the samples newer than
// lastSeen, in the order it holds them, and records what it was asked.
type buffer struct {
	samples []nvmlx.Sample
	asked   []uint64
	err     error
}

func (b *buffer) fetch(lastSeen uint64) ([]nvmlx.Sample, error) {
	b.asked = append(b.asked, lastSeen)
	if b.err != nil {
		return nil, b.err
	}
	var out []nvmlx.Sample
	for _, s := range b.samples {
		if s.Timestamp > lastSeen {
			out = append(out, s)
		}
	}
	return out, nil
}

func stamps(ss []nvmlx.Sample) []uint64 {
	out := make([]uint64, len(ss))
	for i, s := range ss {
		out[i] = s.Timestamp
	}
	return out
}

func stampedAt(us ...uint64) []nvmlx.Sample {
	out := make([]nvmlx.Sample, len(us))
	for i, t := range us {
		out[i] = nvmlx.Sample{Timestamp: t, Value: float64(t)}
	}
	return out
}

func TestSampleCursorFirstRead(t *testing.T) {
	sec := uint64(1e6)
	for _, tt := range []struct {
		name  string
		first time.Duration
		held  []nvmlx.Sample
		want  []uint64
	}{
		{"newest only", 0, stampedAt(3*sec, sec, 2*sec), []uint64{3 * sec}},
		{"within a second", time.Second, stampedAt(sec, 5*sec, 4*sec, 3*sec), []uint64{4 * sec, 5 * sec}},
		{"all, sorted", allSamples, stampedAt(3*sec, sec, 2*sec), []uint64{sec, 2 * sec, 3 * sec}},
		{"window older than the clock", time.Hour, stampedAt(sec, 2*sec), []uint64{sec, 2 * sec}},
		{"empty buffer", 0, nil, []uint64{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &buffer{samples: tt.held}
			c := cursor[nvmlx.Sample]{rules: rules{first: tt.first}}
			got, from, err := c.read(time.Unix(100, 0), b.fetch)
			if err != nil || from != 0 || !slices.Equal(stamps(got), tt.want) {
				t.Errorf("read = %v from %d, %v; want %v from 0", stamps(got), from, err, tt.want)
			}
		})
		// A first read that fails is no first read: the one that
		// succeeds after it still follows the first-read rule.
		t.Run(tt.name+", after a failed read", func(t *testing.T) {
			b := &buffer{samples: tt.held, err: errors.New("driver busy")}
			c := cursor[nvmlx.Sample]{rules: rules{first: tt.first}}
			if _, _, err := c.read(time.Unix(99, 0), b.fetch); err == nil {
				t.Fatal("the failing read succeeded")
			}
			b.err = nil
			got, from, err := c.read(time.Unix(100, 0), b.fetch)
			if err != nil || from != 0 || !slices.Equal(stamps(got), tt.want) {
				t.Errorf("read after a failure = %v from %d, %v; want %v from 0", stamps(got), from, err, tt.want)
			}
		})
	}
}

// Later reads ask from the newest sample seen, return only new ones (a
// driver that answers old ones again counts nothing twice), and a failed
// read moves nothing.
func TestSampleCursorFollows(t *testing.T) {
	b := &buffer{samples: stampedAt(10, 20)}
	c := cursor[nvmlx.Sample]{rules: rules{first: allSamples}}
	now := time.Unix(100, 0)
	if got, _, _ := c.read(now, b.fetch); !slices.Equal(stamps(got), []uint64{10, 20}) {
		t.Fatalf("first read %v", stamps(got))
	}
	b.samples = append(b.samples, stampedAt(30, 40)...)
	got, from, err := c.read(now, b.fetch)
	if err != nil || from != 20 || !slices.Equal(stamps(got), []uint64{30, 40}) {
		t.Errorf("second read %v from %d, %v; want [30 40] from 20", stamps(got), from, err)
	}
	b.err = errors.New("gone")
	if _, _, err := c.read(now.Add(time.Second), b.fetch); err == nil {
		t.Error("failed read returned no error")
	}
	b.err = nil
	replay := func(uint64) ([]nvmlx.Sample, error) { return stampedAt(30, 40, 50), nil }
	got, from, _ = c.read(now, replay)
	if from != 40 || !slices.Equal(stamps(got), []uint64{50}) {
		t.Errorf("after a failure and a replay: %v from %d, want [50] from 40", stamps(got), from)
	}
	if !slices.Equal(b.asked, []uint64{0, 20, 40}) {
		t.Errorf("asked from %v, want [0 20 40]", b.asked)
	}
}

func TestSampleCursorCounts(t *testing.T) {
	t0 := time.Unix(100, 0)
	c := cursor[nvmlx.Sample]{rules: rules{first: allSamples, window: time.Second, stale: 2 * time.Second}}
	if c.counts(0, t0) {
		t.Error("a sample counts before any was read")
	}
	c.read(t0, (&buffer{samples: stampedAt(1_000_000, 5_000_000)}).fetch)
	for _, tt := range []struct {
		stamp uint64
		now   time.Time
		want  bool
	}{
		{5_000_000, t0, true},
		{4_000_000, t0, true},                      // exactly a window older
		{3_999_999, t0, false},                     // older than the window
		{5_000_000, t0.Add(2 * time.Second), true}, // not stale yet
		{5_000_000, t0.Add(2*time.Second + 1), false},
	} {
		if got := c.counts(tt.stamp, tt.now); got != tt.want {
			t.Errorf("counts(%d, t0+%v) = %v, want %v", tt.stamp, tt.now.Sub(t0), got, tt.want)
		}
	}
	forever := cursor[nvmlx.Sample]{rules: newestSampleRules}
	forever.read(t0, (&buffer{samples: stampedAt(1, 1e12)}).fetch)
	if !forever.counts(1, t0.Add(time.Hour)) {
		t.Error("with no window nor staleness, an old sample stopped counting")
	}
}

func TestNewestByKey(t *testing.T) {
	t0 := time.Unix(100, 0)
	n := newNewestByKey(currentProcessRules, func(s nvmlx.ProcessSample) uint32 { return s.PID })
	samples := []nvmlx.ProcessSample{
		{PID: 1, Timestamp: 3_000_000, SM: 30}, {PID: 1, Timestamp: 1_000_000, SM: 10},
		{PID: 2, Timestamp: 1_500_000, SM: 15}, {PID: 3, Timestamp: 2_500_000, SM: 25},
	}
	fetch := func(uint64) ([]nvmlx.ProcessSample, error) { return samples, nil }
	if err := n.poll(t0, fetch); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		pid  uint32
		sm   uint32
		want bool
	}{
		{1, 30, true}, // the newest of two
		{2, 0, false}, // more than a second older than the newest
		{3, 25, true}, // within the window
		{4, 0, false}, // never sampled
	} {
		s, ok := n.get(tt.pid, t0)
		if ok != tt.want || s.SM != tt.sm {
			t.Errorf("pid %d: %+v, %v; want SM %d, %v", tt.pid, s, ok, tt.sm, tt.want)
		}
	}
	if _, ok := n.get(1, t0.Add(3*time.Second)); ok {
		t.Error("a sample counts although none came for 3s")
	}
	n.forget(func(pid uint32) bool { return pid != 3 })
	if _, ok := n.get(3, t0); ok || len(n.newest) != 1 {
		t.Errorf("after forget: %d kept, pid 3 present %v; want 1, false", len(n.newest), ok)
	}
}

func TestTimeWeightedMean(t *testing.T) {
	value := func(s nvmlx.Sample) float64 { return s.Value }
	samples := func(pairs ...float64) []nvmlx.Sample {
		var out []nvmlx.Sample
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, nvmlx.Sample{Timestamp: uint64(pairs[i]), Value: pairs[i+1]})
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		samples []nvmlx.Sample
		from    uint64
		want    float64
	}{
		{"none", nil, 0, 0},
		{"one, no bound", samples(100, 40), 0, 40},
		{"weighted by the time each stands for", samples(200, 100, 300, 0, 600, 50), 100, (100*100 + 0*100 + 50*300) / 500.0},
		{"unknown bound: the first stands for nothing", samples(200, 100, 300, 0), 0, 0},
		{"bound after the first", samples(200, 100, 300, 0), 250, 0},
		{"all at one time", samples(200, 10, 200, 30), 200, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := timeWeightedMean(tt.samples, tt.from, value); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("mean = %v, want %v", got, tt.want)
			}
		})
	}
}
