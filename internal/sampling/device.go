package sampling

import (
	"errors"
	"time"

	"github.com/nvgo/nvgo/internal/nverr"
	"github.com/nvgo/nvgo/internal/nvmlx"
)

// DeviceMeans are the time-weighted means of a GPU's device utilization
// buffers (nvmlDeviceGetSamples), in percent. HasGPU and HasMemory say
// whether the buffer had new samples; without any, the mean is 0 and
// means nothing.
type DeviceMeans struct {
	GPU, Memory       float64
	HasGPU, HasMemory bool
}

// DevicePerTick reads a GPU's device utilization buffers (GPU and memory
// busy) once per tick of a sampler, with cursors of its own, and remembers
// a GPU that keeps no buffer so that it is not asked again. Make one with
// NewDevicePerTick.
//
// A DevicePerTick is not safe for concurrent use.
type DevicePerTick struct {
	gpu, mem  cursor[nvmlx.Sample]
	lastTick  time.Time // of the previous Read
	noBuffers error     // set once the GPU is known to keep no sample buffer
}

// NewDevicePerTick returns a reader at the start of both buffers.
func NewDevicePerTick() DevicePerTick {
	return DevicePerTick{gpu: cursor[nvmlx.Sample]{rules: tickDeviceRules}, mem: cursor[nvmlx.Sample]{rules: tickDeviceRules}}
}

// Read is one tick: it returns the time-weighted means of the samples
// newer than the cursors, only the newest on the first tick. Each sample
// stands for the time since the one before it, the first for the time
// since the cursor's position or, before any sample was seen, since the
// previous Read (so call it on every tick that reads the GPU). The memory
// buffer is not read when the GPU buffer fails; after a failure that
// says the GPU keeps no buffer (not supported, no permission) neither is
// read again. A failed or empty buffer has no mean: the caller falls back
// on the instantaneous reading.
func (t *DevicePerTick) Read(h nvmlx.Device, now time.Time) DeviceMeans {
	since := uint64(max(t.lastTick.UnixMicro(), 0))
	t.lastTick = now
	var m DeviceMeans
	if t.noBuffers != nil {
		return m
	}
	var err error
	m.GPU, m.HasGPU, err = bufferMean(h, nvmlx.SampleGPUUtilization, &t.gpu, now, since)
	if err == nil {
		m.Memory, m.HasMemory, err = bufferMean(h, nvmlx.SampleMemoryUtilization, &t.mem, now, since)
	}
	if err != nil && (errors.Is(err, nverr.ErrNotSupported) || errors.Is(err, nverr.ErrNoPermission)) {
		t.noBuffers = err
	}
	return m
}

// bufferMean reads the samples of kind new to the cursor and returns their
// time-weighted mean (timeWeightedMean): the first stands for the time
// since the cursor's position or, before any sample was seen, since the
// previous tick (since, µs). ok is false when there is no new sample.
func bufferMean(h nvmlx.Device, kind nvmlx.SampleKind, c *cursor[nvmlx.Sample], now time.Time, since uint64) (mean float64, ok bool, err error) {
	samples, from, err := c.read(now, func(lastSeen uint64) ([]nvmlx.Sample, error) { return h.Samples(kind, lastSeen) })
	if err != nil || len(samples) == 0 {
		return 0, false, err
	}
	if from == 0 {
		from = since
	}
	return timeWeightedMean(samples, from, sampleValue), true, nil
}

func sampleValue(s nvmlx.Sample) float64 { return s.Value }

// WindowMeans returns the time-weighted means of a GPU's device
// utilization buffers over the driver's last window, read with cursors
// that start afresh, so that no other reader's position matters: the
// first sample of the window stands for the time since the window's
// start. A buffer that fails or holds no sample has no mean (the caller
// keeps the instantaneous reading); a failure of one does not stop the
// other's read.
func WindowMeans(h nvmlx.Device, window time.Duration) DeviceMeans {
	var m DeviceMeans
	m.GPU, m.HasGPU = windowMean(h, nvmlx.SampleGPUUtilization, window)
	m.Memory, m.HasMemory = windowMean(h, nvmlx.SampleMemoryUtilization, window)
	return m
}

func windowMean(h nvmlx.Device, kind nvmlx.SampleKind, window time.Duration) (float64, bool) {
	// The cursor is dropped after this read, so where it moved and when
	// (the time of the read) matters to nobody.
	c := cursor[nvmlx.Sample]{rules: rules{first: window}}
	samples, _, err := c.read(time.Time{}, func(uint64) ([]nvmlx.Sample, error) { return h.Samples(kind, 0) })
	if err != nil || len(samples) == 0 {
		return 0, false
	}
	newest := samples[len(samples)-1].Timestamp
	from := newest - min(newest, micros(window))
	return timeWeightedMean(samples, from, sampleValue), true
}
