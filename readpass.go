package nvgo

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// The read pass: how one pass over a device reads NVML (a snapshot, a
// per-metric read, an accumulator's tick), and what a Device remembers
// between passes: which readings it does not support, its static
// readings, and the counters it turns into rates.

// passReader carries one pass over one device: after the GPU is found lost, no
// further NVML call is made in this pass.
type passReader struct {
	d     *Device
	h     nvmlx.Device
	now   time.Time // the pass's timestamp; zero: read the clock
	lost  error
	batch fieldBatch // the pass's batched field values
}

// passReaders are the readers of passes: one holds a pass's field values.
var passReaders = sync.Pool{New: func() any { return new(passReader) }}

// newPassReader returns a pooled reader of a pass over d through h; release
// gives it back.
func newPassReader(d *Device, h nvmlx.Device, now time.Time) *passReader {
	r := passReaders.Get().(*passReader)
	r.d, r.h, r.now = d, h, now
	return r
}

// release gives a pooled reader back.
func (r *passReader) release() {
	r.d, r.h, r.now, r.lost = nil, nil, time.Time{}, nil
	r.batch.n, r.batch.ok = 0, false
	passReaders.Put(r)
}

func (r *passReader) check(err error) error {
	if err != nil && r.lost == nil && errors.Is(err, ErrGPULost) {
		r.lost = err
	}
	return err
}

// readOp identifies one NVML reading whose "not supported" answer is
// remembered: one of the readings outside the table, or a source of the
// table (after them, by its position).
type readOp int

// The readings outside the table.
const (
	opFieldValues readOp = iota
	opMPS
	opVgpu
	numFixedOps
)

type gpuMem struct{ gpu, mem uint32 }

// tryReading runs an NVML reading unless it is known to be unsupported.
func tryReading[T any](d *Device, o readOp, f func() (T, error)) (T, error) {
	if err := d.reads.known(o); err != nil {
		var zero T
		return zero, err
	}
	v, err := f()
	d.reads.note(o, err)
	return v, err
}

// deviceReads is what a Device remembers between passes. It is safe for
// concurrent use.
type deviceReads struct {
	// unsupported remembers, by op, the readings the GPU does not support:
	// NVML's NOT_SUPPORTED (and a function missing from the driver) is a
	// permanent property of a GPU and driver, so a pass does not pay for
	// it again.
	unsupported []atomic.Pointer[error]
	mu          sync.Mutex                       // serialises noteField's copies
	fields      atomic.Pointer[map[uint32]error] // field IDs the driver does not answer; copied on write

	statics []staticReading // by source.staticAt
	rates   [numRates]counterRate
}

// numSources and numStatic are how many sources the metric table has, and
// how many of them are static: what a Device keeps per source. The table
// sets them (metrics.go).
var numSources, numStatic int

// staticReading is a static source's reading, made once.
type staticReading struct {
	once sync.Once
	s    DeviceSnapshot
}

func (c *deviceReads) prepare() {
	c.unsupported = make([]atomic.Pointer[error], int(numFixedOps)+numSources)
	c.statics = make([]staticReading, numStatic)
}

func (c *deviceReads) known(o readOp) error {
	if e := c.unsupported[o].Load(); e != nil {
		return *e
	}
	return nil
}

func (c *deviceReads) note(o readOp, err error) {
	if err != nil && errors.Is(err, ErrNotSupported) {
		e := err // a copy, so that err itself does not move to the heap
		c.unsupported[o].Store(&e)
	}
}

// fieldKnown returns why a field ID is known not to be answered, or nil.
func (c *deviceReads) fieldKnown(id uint32) error {
	if m := c.fields.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// noteField remembers a field ID the driver does not answer: NOT_SUPPORTED
// on this GPU, or INVALID_ARGUMENT, which is how drivers older than the ID
// answer it.
func (c *deviceReads) noteField(id uint32, err error) {
	if err != nil && (errors.Is(err, ErrNotSupported) || errors.Is(err, ErrInvalidArgument)) {
		c.mu.Lock()
		defer c.mu.Unlock()
		m := map[uint32]error{id: err}
		if old := c.fields.Load(); old != nil {
			if (*old)[id] != nil {
				return
			}
			for k, v := range *old {
				m[k] = v
			}
		}
		c.fields.Store(&m)
	}
}

// maxBatch bounds the field values of one pass.
const maxBatch = 16

// fieldBatch is the one nvmlDeviceGetFieldValues call of a pass.
type fieldBatch struct {
	n    int
	reqs [maxBatch]nvmlx.FieldRequest
	got  [maxBatch]nvmlx.FieldResult
	ok   bool // the call was made and succeeded
}

// get returns the value of a field the batch read, if it was read and valid.
func (b *fieldBatch) get(q nvmlx.FieldRequest) (nvmlx.FieldResult, bool) {
	if b == nil || !b.ok {
		return nvmlx.FieldResult{}, false
	}
	for i := 0; i < b.n; i++ {
		if b.reqs[i] == q {
			return b.got[i], b.got[i].Err == nil
		}
	}
	return nvmlx.FieldResult{}, false
}

// result returns what the batch got for a field: its error when it failed,
// or why it was not asked.
func (b *fieldBatch) result(d *Device, q nvmlx.FieldRequest) (nvmlx.FieldResult, error) {
	for i := 0; b != nil && b.ok && i < b.n; i++ {
		if b.reqs[i] == q {
			return b.got[i], b.got[i].Err
		}
	}
	if err := d.reads.fieldKnown(q.ID); err != nil {
		return nvmlx.FieldResult{}, err
	}
	if err := d.reads.known(opFieldValues); err != nil {
		return nvmlx.FieldResult{}, err
	}
	return nvmlx.FieldResult{}, errNotRead
}

var errNotRead = fmt.Errorf("not read: %w", ErrNotReported)

// counterRate turns a cumulative counter read from the field batch into a
// rate since the previous reading. It is safe for concurrent use.
type counterRate struct {
	mu   sync.Mutex
	prev rateReading
	last Value[KiBPerSecond] // the latest rate, kept while the counter does not move on
}

type rateReading struct {
	ok    bool
	value uint64
	ts    int64 // µs, the driver's
}

// rate returns the counter's rate in KiB/s since the previous reading
// (scale turns the counter's unit into KiB), and false when there is none:
// the field was not read, or this is the first reading.
func (c *counterRate) rate(b *fieldBatch, q nvmlx.FieldRequest, scale float64) (Value[KiBPerSecond], bool) {
	v, ok := b.get(q)
	if !ok {
		return Value[KiBPerSecond]{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.prev
	switch {
	case !prev.ok || v.Uint < prev.value:
		// The first reading, or the counter wrapped or was reset.
		c.prev = rateReading{ok: true, value: v.Uint, ts: v.Timestamp}
		c.last = Value[KiBPerSecond]{}
		return Value[KiBPerSecond]{}, false
	case v.Timestamp <= prev.ts:
		// The driver answered its cached reading: the rate is the last one.
		return c.last, c.last.ok
	}
	dt := float64(v.Timestamp-prev.ts) / 1e6
	c.prev = rateReading{ok: true, value: v.Uint, ts: v.Timestamp}
	c.last = Some(KiBPerSecond(math.Round(float64(v.Uint-prev.value) * scale / dt)))
	return c.last, true
}

// memoryFigures are the frame-buffer figures of one memory reading.
type memoryFigures struct {
	total, used, free, reserved Value[Bytes]
	percent                     Value[Percent]
	unified                     Value[bool]
}

// memoryOf is the one rule for a memory reading: a GPU that answers
// NOT_SUPPORTED, or a total of 0, shares system memory, and its figures
// are N/A (ErrUnifiedMemory), never 0 bytes.
func memoryOf(m Value[nvmlx.Memory]) memoryFigures {
	v, ok := m.Get()
	if !ok && m.Reason() != NotSupported || ok && v.Total != 0 {
		f := memoryFigures{
			total:    Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Total) }),
			used:     Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Used) }),
			free:     Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Free) }),
			reserved: Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Reserved) }),
			percent:  Map(m, func(m nvmlx.Memory) Percent { return percentOf(m.Used, m.Total) }),
			unified:  Map(m, func(nvmlx.Memory) bool { return false }),
		}
		if ok && !v.HasReserved {
			f.reserved = NA[Bytes](NotSupported, nil)
		}
		return f
	}
	na := NA[Bytes](NotSupported, ErrUnifiedMemory)
	return memoryFigures{total: na, used: na, free: na, reserved: na, percent: NA[Percent](NotSupported, ErrUnifiedMemory), unified: Some(true)}
}

// percentOf returns part/whole in percent rounded to one decimal, as nvitop does.
func percentOf(part, whole uint64) Percent {
	if whole == 0 {
		return 0
	}
	return Percent(math.Round(float64(part)/float64(whole)*1000) / 10)
}

func processMemory(v uint64) Value[Bytes] {
	if v == nvmlx.NotAvailable {
		return NA[Bytes](NotReported, ErrNotReported)
	}
	return Some(Bytes(v))
}

// The counters a Device turns into rates, by their place in deviceReads.rates.
const (
	ratePCIeTX = iota
	ratePCIeRX
	rateNVLinkTX
	rateNVLinkRX
	numRates
)
