package nvgo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultCollectorInterval is a Collector's sampling interval unless
// WithCollectorInterval sets another.
const DefaultCollectorInterval = time.Second

// Collector gathers interval statistics of the host, the GPUs and the GPU
// processes of a program (nvitop's ResourceMetricCollector): for each metric
// the time-weighted mean, the minimum, the maximum and the last value, over
// the span of a tag.
//
// Tags nest. Activate("train") and then Activate("epoch1") open two spans;
// every sample feeds both, and their keys are prefixed "train/" and
// "train/epoch1/". Deactivate ends a span (and those nested in it), Clear
// restarts one. Samples are taken on demand, by Collect, or in the
// background, by Start or CollectInBackground; nothing is sampled while no
// tag is active.
//
// Each sample reads, with one Library.Snapshot for the GPUs:
//
//	host/cpu_percent (%), host/memory_percent (%), host/swap_percent (%),
//	host/memory_used (GiB), host/load_average (1 min), (5 min), (15 min)
//	gpu:<i>/memory_used (MiB), memory_free (MiB), memory_total (MiB),
//	  memory_percent (%), gpu_utilization (%), memory_utilization (%),
//	  fan_speed (%), temperature (C), power_usage (W)
//	pid:<p>/host/cpu_percent (%), host_memory (MiB), host_memory_percent (%),
//	  running_time (min)
//	pid:<p>/gpu:<i>/gpu_memory (MiB), gpu_memory_percent (%),
//	  gpu_memory_utilization (%), gpu_sm_utilization (%)
//
// A MIG device is "gpu:<GPU index>:<MIG index>" (as nvgo-status labels it
// "0:1"); what NVML keeps only per GPU is N/A there. The load averages are
// the raw averages, not percentages. Processes count only when they are one
// of the root processes (WithRootPIDs; by default this process) or descend
// from one, and only when this process shares the host's PID namespace
// (NVML reports host PIDs).
//
// N/A is never a number: a metric that is N/A in a sample is left out of
// that sample. The mean is time-weighted: the samples of a metric are joined
// by straight lines (across samples where it was N/A, too), the first value
// is taken to have held since the tag's start (since that value's own sample
// for a metric first seen after the tag's first sample, such as a process
// that started later), and the area under that curve is divided by the time
// from that start to the metric's last value. A metric with a single value
// has that value as its mean.
//
// A Collector is safe for concurrent use. Its background goroutines stop
// when the context they were started with ends.
type Collector struct {
	lib      *Library
	devices  []*Device // nil: every GPU; empty: none
	roots    map[procID]struct{}
	interval time.Duration
	clock    Clock

	// sampleMu serialises samples, so that concurrent callers take one
	// sample, not one each. It guards lineage.
	sampleMu sync.Mutex
	// lineage remembers, per process seen on a GPU in the latest sample,
	// whether it descends from a root.
	lineage map[procID]bool

	mu         sync.Mutex // guards the fields below
	tags       []*tagBuffer
	lastSample time.Time
	lastErr    error
}

// procID is a process's identity: its PID and start time after boot, so
// that a reused PID is another process.
type procID struct {
	pid   int
	start time.Duration
}

type collectorOptions struct {
	devices    []*Device
	devicesSet bool
	roots      []int
	interval   time.Duration
}

// CollectorOption configures Library.NewCollector.
type CollectorOption func(*collectorOptions)

// WithCollectorDevices limits the collector to devs (default: every GPU). A
// GPU with MIG on brings its MIG devices along, re-enumerated at each
// sample. With no device at all, only the host is sampled and NVML is not
// used.
func WithCollectorDevices(devs ...*Device) CollectorOption {
	return func(o *collectorOptions) {
		o.devices = append(o.devices, devs...)
		o.devicesSet = true
	}
}

// WithRootPIDs sets the root processes (default: this process): a GPU
// process is collected when it is a root or descends from one.
func WithRootPIDs(pids ...int) CollectorOption {
	return func(o *collectorOptions) { o.roots = append(o.roots, pids...) }
}

// WithCollectorInterval sets the sampling interval of the background
// sampler (default DefaultCollectorInterval). It must be positive. Collect
// takes a fresh sample when the latest is older than half of it.
func WithCollectorInterval(d time.Duration) CollectorOption {
	return func(o *collectorOptions) { o.interval = d }
}

// NewCollector returns a Collector with no active tag. It makes no NVML
// call. It fails, wrapping ErrInvalidArgument, for an interval that is not
// positive, and, wrapping ErrProcessGone, for a root PID that no process
// holds.
func (l *Library) NewCollector(opts ...CollectorOption) (*Collector, error) {
	o := collectorOptions{interval: DefaultCollectorInterval}
	for _, opt := range opts {
		opt(&o)
	}
	if o.interval <= 0 {
		return nil, fmt.Errorf("nvgo: collector interval %v is not positive: %w", o.interval, ErrInvalidArgument)
	}
	if o.roots == nil {
		o.roots = []int{os.Getpid()}
	}
	c := &Collector{
		lib:      l,
		roots:    make(map[procID]struct{}, len(o.roots)),
		interval: o.interval,
		clock:    l.clock,
		lineage:  map[procID]bool{},
	}
	for _, pid := range o.roots {
		p, err := l.HostProcess(pid)
		if err != nil {
			return nil, fmt.Errorf("nvgo: collector root: %w", err)
		}
		c.roots[procID{pid: pid, start: p.start}] = struct{}{}
	}
	if o.devicesSet {
		c.devices = collectorDevices(o.devices)
	}
	return c, nil
}

// collectorDevices returns devs without nil entries and without the MIG
// devices whose GPU is in devs too (a snapshot of the GPU has them), never
// nil.
func collectorDevices(devs []*Device) []*Device {
	gpus := map[*Device]bool{}
	for _, d := range devs {
		if d != nil && d.mig == nil {
			gpus[d] = true
		}
	}
	out := []*Device{}
	seen := map[*Device]bool{}
	for _, d := range devs {
		if d == nil || seen[d] || (d.mig != nil && gpus[d.mig.parent]) {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	return out
}

// Interval returns the sampling interval.
func (c *Collector) Interval() time.Duration { return c.interval }

// Activate starts a span named tag, nested in the tags already active: its
// keys are prefixed by their names and its own, joined by "/". It fails,
// wrapping ErrInvalidArgument, for an empty tag, one holding "/", or one
// already active.
func (c *Collector) Activate(tag string) error {
	if tag == "" || strings.Contains(tag, "/") {
		return fmt.Errorf("nvgo: collector tag %q: want a non-empty name without %q: %w", tag, "/", ErrInvalidArgument)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.findLocked(tag) >= 0 {
		return fmt.Errorf("nvgo: collector tag %q is already active: %w", tag, ErrInvalidArgument)
	}
	prefix := tag
	if n := len(c.tags); n > 0 {
		prefix = c.tags[n-1].prefix + "/" + tag
	}
	c.tags = append(c.tags, newTagBuffer(tag, prefix, c.clock.Now()))
	return nil
}

// Deactivate ends the span of tag and of every tag nested in it. It fails,
// wrapping ErrNotFound, when tag is not active.
func (c *Collector) Deactivate(tag string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.findLocked(tag)
	if i < 0 {
		return fmt.Errorf("nvgo: collector tag %q is not active: %w", tag, ErrNotFound)
	}
	clear(c.tags[i:])
	c.tags = c.tags[:i]
	return nil
}

// Clear restarts the span of tag now, forgetting its statistics; tags
// nested in it keep theirs. It fails, wrapping ErrNotFound, when tag is not
// active.
func (c *Collector) Clear(tag string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := c.findLocked(tag)
	if i < 0 {
		return fmt.Errorf("nvgo: collector tag %q is not active: %w", tag, ErrNotFound)
	}
	c.tags[i].reset(c.clock.Now())
	return nil
}

// findLocked returns the position of tag in the stack, or -1.
func (c *Collector) findLocked(tag string) int {
	for i, b := range c.tags {
		if b.name == tag {
			return i
		}
	}
	return -1
}

// Metrics are the statistics of the active tags at one moment: plain data.
type Metrics struct {
	// Timestamp is when Collect gathered them.
	Timestamp time.Time `json:"timestamp"`
	// Tags are the active tags, outermost first.
	Tags []TagSpan `json:"tags"`
	// Stats are keyed by tag prefix and metric, e.g.
	// "train/epoch1/gpu:0/memory_used (MiB)".
	Stats map[string]Stat `json:"stats"`
}

// runningTimeKey ends the keys of which Flatten keeps only the maximum.
const runningTimeKey = "/running_time (min)"

// Flatten returns the metrics with nvitop's keys: "<key>/mean", "/min",
// "/max" and "/last" for each Stat, the maximum alone under the key itself
// for a running time, and for each tag "<tag>/duration (s)" (Timestamp −
// Start), "<tag>/timestamp" (Timestamp) and "<tag>/last_timestamp"
// (LastSample, when there is one), times in seconds since the Unix epoch.
func (m Metrics) Flatten() map[string]float64 {
	out := make(map[string]float64, 4*len(m.Stats)+3*len(m.Tags))
	for k, s := range m.Stats {
		if strings.HasSuffix(k, runningTimeKey) {
			out[k] = s.Max
			continue
		}
		out[k+"/mean"], out[k+"/min"], out[k+"/max"], out[k+"/last"] = s.Mean, s.Min, s.Max, s.Last
	}
	for _, t := range m.Tags {
		out[t.Tag+"/duration (s)"] = seconds(m.Timestamp.Sub(t.Start))
		out[t.Tag+"/timestamp"] = unixSeconds(m.Timestamp)
		if !t.LastSample.IsZero() {
			out[t.Tag+"/last_timestamp"] = unixSeconds(t.LastSample)
		}
	}
	return out
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// Collect returns the statistics of every active tag. It first takes a
// sample when the latest is older than half the interval or older than an
// active tag. It fails, wrapping ErrNotFound, when no tag is active, and
// with ctx's error when ctx ends first.
//
// When the GPUs could not be read in the latest sample (no driver, say),
// Collect returns the statistics it has, the host's among them, together
// with that error.
func (c *Collector) Collect(ctx context.Context) (Metrics, error) {
	if err := c.sample(ctx, c.interval/2); err != nil {
		return Metrics{}, fmt.Errorf("nvgo: collect: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tags) == 0 {
		return Metrics{}, fmt.Errorf("nvgo: collect: no tag is active: %w", ErrNotFound)
	}
	m := Metrics{Timestamp: c.clock.Now(), Tags: make([]TagSpan, len(c.tags)), Stats: map[string]Stat{}}
	for i, b := range c.tags {
		m.Tags[i] = b.span()
		for k, s := range b.stats {
			m.Stats[b.prefix+"/"+k] = s.stat()
		}
	}
	return m, c.lastErr
}

// Start samples every interval in a goroutine until ctx ends, and returns a
// channel that is closed once that goroutine has returned. Samples are due
// at the start plus whole intervals, so they do not drift; one missed while
// a sample ran late is skipped, not made up. A sample is skipped, too, when
// no tag is active or the latest sample (by Collect, say) is younger than
// half the interval, so running two samplers costs no more NVML calls than
// one.
func (c *Collector) Start(ctx context.Context) <-chan struct{} {
	return c.goRun(ctx, 0, nil)
}

// CollectInBackground samples as Start does and, in the same goroutine,
// calls onCollect with what Collect returns every interval (0 or less
// means the collector's interval), until onCollect returns false or ctx
// ends. It activates no tag: activate one first, or onCollect gets an error
// wrapping ErrNotFound. onCollect may call the Collector's methods (Clear,
// to report each interval on its own). The returned channel is closed once
// the goroutine has returned.
func (c *Collector) CollectInBackground(ctx context.Context, interval time.Duration, onCollect func(Metrics, error) bool) <-chan struct{} {
	if interval <= 0 {
		interval = c.interval
	}
	return c.goRun(ctx, interval, onCollect)
}

func (c *Collector) goRun(ctx context.Context, every time.Duration, onCollect func(Metrics, error) bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(ctx, every, onCollect)
	}()
	return done
}

// run samples at start + n·interval and, with onCollect, collects at
// start + m·every.
func (c *Collector) run(ctx context.Context, every time.Duration, onCollect func(Metrics, error) bool) {
	start := c.clock.Now()
	if c.sample(ctx, c.interval/2) != nil {
		return
	}
	samples := newSchedule(start, c.interval)
	var collects schedule
	if onCollect != nil {
		collects = newSchedule(start, every)
	}
	for {
		wake := samples.due()
		if onCollect != nil && collects.due().Before(wake) {
			wake = collects.due()
		}
		if sleepUntil(ctx, c.clock, wake) != nil {
			return
		}
		if now := c.clock.Now(); !now.Before(samples.due()) {
			samples.take(now)
			if c.sample(ctx, c.interval/2) != nil {
				return
			}
			samples.skipPast(c.clock.Now())
		}
		if now := c.clock.Now(); onCollect != nil && !now.Before(collects.due()) {
			collects.take(now)
			m, err := c.Collect(ctx)
			if ctx.Err() != nil || !onCollect(m, err) {
				return
			}
			collects.skipPast(c.clock.Now())
		}
	}
}

// sample takes a sample and feeds it to the active tags, unless no tag is
// active or the latest sample is younger than maxAge and than every active
// tag. It returns only ctx's error; what went wrong in the sample itself is
// kept for Collect.
func (c *Collector) sample(ctx context.Context, maxAge time.Duration) error {
	c.sampleMu.Lock()
	defer c.sampleMu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	now := c.clock.Now()
	c.mu.Lock()
	stale := c.staleLocked(now, maxAge)
	c.mu.Unlock()
	if !stale {
		return nil
	}
	values, err := c.read(ctx)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.tags {
		b.add(now, values)
	}
	c.lastSample, c.lastErr = now, err
	return nil
}

func (c *Collector) staleLocked(now time.Time, maxAge time.Duration) bool {
	if len(c.tags) == 0 {
		return false
	}
	if c.lastSample.IsZero() || now.Sub(c.lastSample) > maxAge {
		return true
	}
	for _, b := range c.tags {
		if c.lastSample.Before(b.start) {
			return true
		}
	}
	return false
}

// collectorFields are the snapshot groups a sample reads.
const collectorFields = FieldMemory | FieldUtilization | FieldFan | FieldTemperature | FieldPower |
	FieldProcesses | FieldMIGDevices

// read takes one sample: the metrics with a value, by key. The error is why
// the GPUs could not be read; the host's metrics are there regardless.
func (c *Collector) read(ctx context.Context) (map[string]float64, error) {
	values := map[string]float64{}
	h := ReadHost(ctx)
	putMetric(values, "host/cpu_percent (%)", h.CPUPercent, percentValue)
	putMetric(values, "host/memory_percent (%)", h.MemoryPercent, percentValue)
	putMetric(values, "host/swap_percent (%)", h.SwapPercent, percentValue)
	putMetric(values, "host/memory_used (GiB)", h.MemoryUsed, gibValue)
	putMetric(values, "host/load_average (1 min)", h.Load1, floatValue)
	putMetric(values, "host/load_average (5 min)", h.Load5, floatValue)
	putMetric(values, "host/load_average (15 min)", h.Load15, floatValue)

	if c.devices != nil && len(c.devices) == 0 {
		return values, nil
	}
	opts := []SnapshotOption{WithFields(collectorFields)}
	if c.devices != nil {
		opts = append(opts, WithDevices(c.devices...))
	}
	snap, err := c.lib.Snapshot(ctx, opts...)
	if err != nil {
		return values, fmt.Errorf("nvgo: collector: read GPUs: %w", err)
	}
	lineage := map[procID]bool{}
	hostDone := map[int]bool{}
	var walk func(s *DeviceSnapshot)
	walk = func(s *DeviceSnapshot) {
		dev := "gpu:" + strconv.Itoa(s.Index)
		if mig, ok := s.MIGIndex.Get(); ok {
			dev += ":" + strconv.Itoa(mig)
		}
		putDeviceMetrics(values, dev, s)
		for i := range s.Processes {
			p := &s.Processes[i]
			if !c.collects(p.PID, lineage) {
				continue
			}
			putProcessMetrics(values, "pid:"+strconv.Itoa(p.PID)+"/"+dev+"/", p, !hostDone[p.PID])
			hostDone[p.PID] = true
		}
		for i := range s.MIGDevices {
			walk(&s.MIGDevices[i])
		}
	}
	for i := range snap.Devices {
		walk(&snap.Devices[i])
	}
	c.lineage = lineage
	return values, nil
}

// putDeviceMetrics adds a device's gauges of the collector's groups, under
// "<dev>/<name> (<unit>)": sizes in MiB and power in W, as nvitop keys them.
func putDeviceMetrics(values map[string]float64, dev string, s *DeviceSnapshot) {
	for i := range collectorMetrics {
		m := &collectorMetrics[i]
		putMetric(values, dev+m.key, m.Value(s), func(x float64) float64 { return x * m.scale })
	}
}

// collectorMetric is a gauge the collector keeps, with its key after the
// device and the scale from the metric's unit to the key's.
type collectorMetric struct {
	DeviceMetric
	key   string
	scale float64
}

// collectorMetrics are the gauges of the collector's groups.
var collectorMetrics = func() []collectorMetric {
	var out []collectorMetric
	for _, m := range deviceMetrics {
		if m.Kind != KindGauge || m.Group&collectorFields == 0 || m.Unit == UnitNone {
			continue
		}
		unit, scale := string(m.Unit), 1.0
		switch m.Unit {
		case UnitBytes:
			unit, scale = "MiB", 1.0/(1<<20)
		case UnitMilliWatts:
			unit, scale = "W", 1.0/1000
		}
		out = append(out, collectorMetric{DeviceMetric: m, key: "/" + m.Name + " (" + unit + ")", scale: scale})
	}
	return out
}()

// putProcessMetrics adds a process's GPU metrics under prefix
// ("pid:<p>/gpu:<i>/") and, with host, its host metrics.
func putProcessMetrics(values map[string]float64, prefix string, p *GpuProcessSnapshot, host bool) {
	putMetric(values, prefix+"gpu_memory (MiB)", p.GPUMemory, mibValue)
	putMetric(values, prefix+"gpu_memory_percent (%)", p.GPUMemoryPercent, percentValue)
	putMetric(values, prefix+"gpu_memory_utilization (%)", p.GPUMemoryUtilization, percentValue)
	putMetric(values, prefix+"gpu_sm_utilization (%)", p.GPUSMUtilization, percentValue)
	if !host {
		return
	}
	h := "pid:" + strconv.Itoa(p.PID) + "/host/"
	putMetric(values, h+"cpu_percent (%)", p.CPUPercent, percentValue)
	putMetric(values, h+"host_memory (MiB)", p.HostMemory, mibValue)
	putMetric(values, h+"host_memory_percent (%)", p.HostMemoryPercent, percentValue)
	putMetric(values, h+"running_time (min)", p.RunningTime, func(d time.Duration) float64 { return d.Minutes() })
}

// putMetric stores v under key, converted by f, unless v is N/A (or not a
// finite number).
func putMetric[T any](values map[string]float64, key string, v Value[T], f func(T) float64) {
	x, ok := v.Get()
	if !ok {
		return
	}
	if y := f(x); !math.IsNaN(y) && !math.IsInf(y, 0) {
		values[key] = y
	}
}

func percentValue(p Percent) float64 { return float64(p) }
func floatValue(x float64) float64   { return x }
func mibValue(b Bytes) float64       { return float64(b) / (1 << 20) }
func gibValue(b Bytes) float64       { return float64(b) / (1 << 30) }

// maxLineageDepth bounds the walk up the process tree.
const maxLineageDepth = 4096

// collects reports whether the GPU process pid is a root or descends from
// one, and records the answer in next. Answers are remembered by process
// identity (PID and start time) from one sample to the next, so a process
// is looked up once, and a reused PID is looked up again. A process that
// vanishes during the walk is not collected, and not remembered.
func (c *Collector) collects(pid int, next map[procID]bool) bool {
	if !c.lib.hosts.fs.src.HostPIDs() {
		return false // NVML's PIDs are not ours to look up
	}
	p, err := c.lib.HostProcess(pid)
	if err != nil {
		return false
	}
	id := procID{pid: pid, start: p.start}
	if ans, ok := next[id]; ok {
		return ans
	}
	ans, ok := c.lineage[id]
	if !ok {
		if ans, ok = c.walkLineage(p); !ok {
			return false
		}
	}
	next[id] = ans
	return ans
}

// walkLineage walks from p up the process tree to a root, a process whose
// answer is known, or the top. It records the answer for every process on
// the way in c.lineage (for this sample's other processes) and reports
// false for ok when the walk was cut short.
func (c *Collector) walkLineage(p *HostProcess) (ans, ok bool) {
	var chain []procID
	for range maxLineageDepth {
		id := procID{pid: p.PID(), start: p.start}
		if known, seen := c.lineage[id]; seen {
			ans, ok = known, true
			break
		}
		chain = append(chain, id)
		if _, root := c.roots[id]; root {
			ans, ok = true, true
			break
		}
		parent, err := p.Parent()
		if errors.Is(err, ErrNoParent) {
			ans, ok = false, true
			break
		}
		if err != nil {
			return false, false
		}
		p = parent
	}
	if !ok {
		return false, false
	}
	for _, id := range chain {
		c.lineage[id] = ans
	}
	return ans, true
}
