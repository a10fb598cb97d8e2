package nvgo

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// The metric table: every device metric is defined once, here, with the
// group (Fields bit) that asks for it, whether a MIG device has it, the
// DeviceSnapshot values it fills (which are what N/A fills), the field IDs
// it is read from in the one batched nvmlDeviceGetFieldValues call of a
// pass, and how it is read otherwise (one NVML call) or derived. A pass
// over a device (Device.read) asks the batch for the field IDs of the
// groups it reads, then lets each metric of those groups fill its values;
// DeviceSnapshot.fillNA walks the same table. Adding a metric takes an
// entry here, its DeviceSnapshot field and its Device accessor.

// metric is one entry of the table.
type metric struct {
	name  string
	group Fields
	onMIG bool // a MIG device reports it itself; else it is N/A there
	slots []slot
	// fields are read in the pass's batch; a field the driver does not
	// answer (NOT_SUPPORTED, or an ID an older driver does not know) is
	// not asked again, and read falls back to its single call.
	fields []nvmlx.FieldRequest
	// read fills the slots, from the batch or with NVML calls of its own.
	read func(r *reader, s *DeviceSnapshot, b *fieldBatch)
}

// slot is one Value field of a DeviceSnapshot.
type slot interface {
	setNA(s *DeviceSnapshot, r Reason, err error)
}

// at names a Value field of a DeviceSnapshot.
type at[T any] func(*DeviceSnapshot) *Value[T]

func (f at[T]) setNA(s *DeviceSnapshot, r Reason, err error) { *f(s) = NA[T](r, err) }

func slots(s ...slot) []slot { return s }

var (
	atMemoryTotal     = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryTotal })
	atMemoryUsed      = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryUsed })
	atMemoryFree      = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryFree })
	atMemoryReserved  = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryReserved })
	atMemoryPercent   = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.MemoryPercent })
	atBAR1Total       = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Total })
	atBAR1Used        = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Used })
	atBAR1Free        = at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Free })
	atGPUUtil         = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.GPUUtilization })
	atMemUtil         = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.MemoryUtilization })
	atEncoder         = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.EncoderUtilization })
	atDecoder         = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.DecoderUtilization })
	atGraphicsClock   = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.GraphicsClock })
	atSMClock         = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.SMClock })
	atMemoryClock     = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.MemoryClock })
	atVideoClock      = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.VideoClock })
	atMaxGraphics     = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxGraphicsClock })
	atMaxSM           = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxSMClock })
	atMaxMemory       = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxMemoryClock })
	atMaxVideo        = at[MHz](func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxVideoClock })
	atFan             = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.FanSpeed })
	atTemperature     = at[Celsius](func(s *DeviceSnapshot) *Value[Celsius] { return &s.Temperature })
	atPowerUsage      = at[MilliWatts](func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.PowerUsage })
	atPowerLimit      = at[MilliWatts](func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.PowerLimit })
	atEnergy          = at[MilliJoules](func(s *DeviceSnapshot) *Value[MilliJoules] { return &s.TotalEnergy })
	atPCIeTX          = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.PCIeTX })
	atPCIeRX          = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.PCIeRX })
	atNVLinkTX        = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.NVLinkTX })
	atNVLinkRX        = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.NVLinkRX })
	atECC             = at[uint64](func(s *DeviceSnapshot) *Value[uint64] { return &s.VolatileUncorrectedECC })
	atPState          = at[PState](func(s *DeviceSnapshot) *Value[PState] { return &s.PerformanceState })
	atDisplayActive   = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.DisplayActive })
	atDisplayMode     = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.DisplayMode })
	atPersistence     = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.PersistenceMode })
	atComputeMode     = at[ComputeMode](func(s *DeviceSnapshot) *Value[ComputeMode] { return &s.ComputeMode })
	atMIGMode         = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.MIGMode })
	atMIGModePending  = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.MIGModePending })
	fieldPowerAverage = nvmlx.FieldRequest{ID: nvmlx.FieldPowerAverage}
	fieldPowerInstant = nvmlx.FieldRequest{ID: nvmlx.FieldPowerInstant}
	fieldPowerLimit   = nvmlx.FieldRequest{ID: nvmlx.FieldPowerCurrentLimit}
	fieldEnergy       = nvmlx.FieldRequest{ID: nvmlx.FieldTotalEnergy}
	fieldECC          = nvmlx.FieldRequest{ID: nvmlx.FieldECCDBEVolatileTotal}
	fieldPCIeTX       = nvmlx.FieldRequest{ID: nvmlx.FieldPCIeCountTXBytes}
	fieldPCIeRX       = nvmlx.FieldRequest{ID: nvmlx.FieldPCIeCountRXBytes}
	fieldNVLinkTX     = nvmlx.FieldRequest{ID: nvmlx.FieldNVLinkThroughputTX, Scope: nvmlx.ScopeAll}
	fieldNVLinkRX     = nvmlx.FieldRequest{ID: nvmlx.FieldNVLinkThroughputRX, Scope: nvmlx.ScopeAll}
)

// single is a metric read with one NVML call of its own.
func single[T, U any](o op, call func(h nvmlx.Device) (T, error), conv func(T) U, to at[U]) func(*reader, *DeviceSnapshot, *fieldBatch) {
	return func(r *reader, s *DeviceSnapshot, _ *fieldBatch) {
		*to(s) = readMetric(r, o, func() (T, error) { return call(r.h) }, conv)
	}
}

func mhz(v uint32) MHz { return MHz(v) }

// clock is the metric of a current clock, which also carries its static
// maximum.
func clock(o op, c nvmlx.Clock, cur, maxAt at[MHz]) func(*reader, *DeviceSnapshot, *fieldBatch) {
	return func(r *reader, s *DeviceSnapshot, _ *fieldBatch) {
		*cur(s) = readMetric(r, o, func() (uint32, error) { return r.h.Clock(c) }, mhz)
		*maxAt(s) = r.d.maxClock(c)
	}
}

var metricTable = []metric{
	{name: "memory", group: FieldMemory, onMIG: true,
		slots: slots(atMemoryTotal, atMemoryUsed, atMemoryFree, atMemoryReserved, atMemoryPercent),
		read:  func(r *reader, s *DeviceSnapshot, _ *fieldBatch) { r.memory(s) }},
	{name: "bar1", group: FieldBAR1, onMIG: true, slots: slots(atBAR1Total, atBAR1Used, atBAR1Free),
		read: func(r *reader, s *DeviceSnapshot, _ *fieldBatch) {
			b := readMetric(r, opBAR1, r.h.BAR1, func(b nvmlx.BAR1) nvmlx.BAR1 { return b })
			s.BAR1Total = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Total) })
			s.BAR1Used = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Used) })
			s.BAR1Free = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Free) })
		}},
	{name: "utilization", group: FieldUtilization, slots: slots(atGPUUtil, atMemUtil),
		read: func(r *reader, s *DeviceSnapshot, _ *fieldBatch) {
			u := readMetric(r, opUtilization, func() (gpuMem, error) {
				g, m, err := r.h.Utilization()
				return gpuMem{g, m}, err
			}, func(u gpuMem) gpuMem { return u })
			s.GPUUtilization = Map(u, func(u gpuMem) Percent { return Percent(u.gpu) })
			s.MemoryUtilization = Map(u, func(u gpuMem) Percent { return Percent(u.mem) })
		}},
	{name: "encoder", group: FieldCodec, slots: slots(atEncoder), read: single(opEncoder, nvmlx.Device.Encoder, pct, atEncoder)},
	{name: "decoder", group: FieldCodec, slots: slots(atDecoder), read: single(opDecoder, nvmlx.Device.Decoder, pct, atDecoder)},
	{name: "graphics clock", group: FieldClocks, slots: slots(atGraphicsClock, atMaxGraphics),
		read: clock(opClockGraphics, nvmlx.ClockGraphics, atGraphicsClock, atMaxGraphics)},
	{name: "SM clock", group: FieldClocks, slots: slots(atSMClock, atMaxSM),
		read: clock(opClockSM, nvmlx.ClockSM, atSMClock, atMaxSM)},
	{name: "memory clock", group: FieldClocks, slots: slots(atMemoryClock, atMaxMemory),
		read: clock(opClockMemory, nvmlx.ClockMemory, atMemoryClock, atMaxMemory)},
	{name: "video clock", group: FieldClocks, slots: slots(atVideoClock, atMaxVideo),
		read: clock(opClockVideo, nvmlx.ClockVideo, atVideoClock, atMaxVideo)},
	{name: "fan speed", group: FieldFan, slots: slots(atFan), read: single(opFan, nvmlx.Device.FanSpeed, pct, atFan)},
	{name: "temperature", group: FieldTemperature, slots: slots(atTemperature),
		read: single(opTemperature, nvmlx.Device.Temperature, func(v uint32) Celsius { return Celsius(v) }, atTemperature)},
	// nvidia-smi's power.draw: the one-second average where the GPU keeps
	// one (Ampere and newer but GA100), else the instantaneous reading.
	{name: "power usage", group: FieldPower, slots: slots(atPowerUsage), fields: []nvmlx.FieldRequest{fieldPowerAverage, fieldPowerInstant},
		read: func(r *reader, s *DeviceSnapshot, b *fieldBatch) {
			if v, ok := b.get(fieldPowerAverage); ok {
				s.PowerUsage = Some(MilliWatts(v.AsFloat()))
			} else if v, ok := b.get(fieldPowerInstant); ok {
				s.PowerUsage = Some(MilliWatts(v.AsFloat()))
			} else {
				s.PowerUsage = readMetric(r, opPowerUsage, r.h.PowerUsage, func(v uint32) MilliWatts { return MilliWatts(v) })
			}
		}},
	{name: "power limit", group: FieldPower, slots: slots(atPowerLimit), fields: []nvmlx.FieldRequest{fieldPowerLimit},
		read: func(r *reader, s *DeviceSnapshot, b *fieldBatch) {
			if v, ok := b.get(fieldPowerLimit); ok {
				s.PowerLimit = Some(MilliWatts(v.AsFloat()))
			} else {
				s.PowerLimit = readMetric(r, opPowerLimit, r.h.PowerLimit, func(v uint32) MilliWatts { return MilliWatts(v) })
			}
		}},
	// Energy: a counter since the driver loaded, in the power batch (NVML
	// has no energy reading outside a field ID worth a call of its own).
	{name: "energy", group: FieldPower, slots: slots(atEnergy), fields: []nvmlx.FieldRequest{fieldEnergy},
		read: func(r *reader, s *DeviceSnapshot, b *fieldBatch) {
			v, err := b.result(r.d, fieldEnergy)
			if err != nil && r.lost != nil {
				err = r.lost
			}
			s.TotalEnergy = FromErr(MilliJoules(v.Uint), err)
		}},
	// PCIe throughput: the mean since the previous reading of the device,
	// from the byte counters (R555 and later); at the first reading, and on
	// older drivers, the driver's 20 ms window.
	{name: "PCIe throughput", group: FieldPCIe, slots: slots(atPCIeTX, atPCIeRX), fields: []nvmlx.FieldRequest{fieldPCIeTX, fieldPCIeRX},
		read: func(r *reader, s *DeviceSnapshot, b *fieldBatch) {
			tx, txOK := r.d.pcieTX.rate(b, fieldPCIeTX, 1.0/1024)
			rx, rxOK := r.d.pcieRX.rate(b, fieldPCIeRX, 1.0/1024)
			if txOK && rxOK {
				s.PCIeTX, s.PCIeRX = tx, rx
				return
			}
			kib := func(v uint32) KiBPerSecond { return KiBPerSecond(v) }
			s.PCIeTX = readMetric(r, opPCIeTX, func() (uint32, error) { return r.h.PCIeThroughput(true) }, kib)
			s.PCIeRX = readMetric(r, opPCIeRX, func() (uint32, error) { return r.h.PCIeThroughput(false) }, kib)
		}},
	// NVLink throughput: the mean since the previous reading of the device,
	// from the data counters summed over links (KiB); N/A at the first.
	{name: "NVLink throughput", group: FieldNVLink, slots: slots(atNVLinkTX, atNVLinkRX), fields: []nvmlx.FieldRequest{fieldNVLinkTX, fieldNVLinkRX},
		read: func(r *reader, s *DeviceSnapshot, b *fieldBatch) { s.NVLinkTX, s.NVLinkRX = r.nvlink(b) }},
	{name: "ECC errors", group: FieldECC, slots: slots(atECC), fields: []nvmlx.FieldRequest{fieldECC},
		read: func(r *reader, s *DeviceSnapshot, b *fieldBatch) {
			if v, ok := b.get(fieldECC); ok {
				s.VolatileUncorrectedECC = Some(v.Uint)
			} else {
				s.VolatileUncorrectedECC = readMetric(r, opECC, r.h.VolatileUncorrectedECC, func(v uint64) uint64 { return v })
			}
		}},
	{name: "performance state", group: FieldPerformanceState, slots: slots(atPState),
		read: func(r *reader, s *DeviceSnapshot, _ *fieldBatch) {
			s.PerformanceState = readMetric(r, opPState, r.h.PerformanceState, func(p int) PState { return PState(p) })
			if p, ok := s.PerformanceState.Get(); ok && (p < 0 || p > 15) {
				s.PerformanceState = NA[PState](NotReported, nil)
			}
		}},
	{name: "display active", group: FieldDisplay, slots: slots(atDisplayActive), read: single(opDisplayActive, nvmlx.Device.DisplayActive, onoff, atDisplayActive)},
	{name: "display mode", group: FieldDisplay, slots: slots(atDisplayMode), read: single(opDisplayMode, nvmlx.Device.DisplayMode, onoff, atDisplayMode)},
	{name: "persistence mode", group: FieldPersistenceMode, slots: slots(atPersistence), read: single(opPersistence, nvmlx.Device.PersistenceMode, onoff, atPersistence)},
	{name: "compute mode", group: FieldComputeMode, slots: slots(atComputeMode),
		read: single(opComputeMode, nvmlx.Device.ComputeMode, func(m int) ComputeMode { return ComputeMode(m) }, atComputeMode)},
	{name: "MIG mode", group: FieldMIGMode, slots: slots(atMIGMode, atMIGModePending),
		read: func(r *reader, s *DeviceSnapshot, _ *fieldBatch) {
			m := readMetric(r, opMIGMode, func() ([2]int, error) {
				c, p, err := r.h.MIGMode()
				return [2]int{c, p}, err
			}, func(m [2]int) [2]int { return m })
			s.MIGMode = Map(m, func(m [2]int) OnOff { return m[0] == 1 })
			s.MIGModePending = Map(m, func(m [2]int) OnOff { return m[1] == 1 })
		}},
}

// migFields are the groups a MIG device reports itself (with its processes,
// which are not in the table). Everything else is N/A there: NVML keeps it
// only per physical GPU.
var migFields = func() Fields {
	f := FieldProcesses
	for _, m := range metricTable {
		if m.onMIG {
			f |= m.group
		}
	}
	return f
}()

// readMetrics reads the table's metrics of the groups f.
func (r *reader) readMetrics(s *DeviceSnapshot, f Fields) {
	b := &r.batch
	b.ask(r, f)
	for i := range metricTable {
		m := &metricTable[i]
		if m.group&f != 0 {
			m.read(r, s, b)
		}
	}
}

// fillNA marks every metric of the groups f N/A because of err.
func (s *DeviceSnapshot) fillNA(f Fields, err error) {
	r := ReasonOf(err)
	for i := range metricTable {
		m := &metricTable[i]
		if m.group&f == 0 {
			continue
		}
		for _, sl := range m.slots {
			sl.setNA(s, r, err)
		}
	}
	if f&FieldProcesses != 0 {
		s.ProcessesErr, s.ProcessesError = err, err.Error()
	}
	if f&FieldVgpuInstances != 0 {
		s.VirtualizationMode = NA[VirtualizationMode](r, err)
		if s.MIGIndex == nil { // a MIG device simply has none
			s.VgpuInstancesErr, s.VgpuInstancesError = err, err.Error()
		}
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

// ask makes the call for the field IDs of the groups f that the driver
// answers (as far as the device has seen).
func (b *fieldBatch) ask(r *reader, f Fields) {
	d := r.d
	if r.lost != nil || d.caps.known(opFieldValues) != nil {
		return
	}
	for i := range metricTable {
		m := &metricTable[i]
		if m.group&f == 0 {
			continue
		}
		for _, q := range m.fields {
			if q.ID == nvmlx.FieldNVLinkThroughputTX || q.ID == nvmlx.FieldNVLinkThroughputRX {
				if d.NVLinkLinkCount().Or(0) == 0 {
					continue
				}
			}
			if b.n < maxBatch && d.caps.fieldKnown(q.ID) == nil {
				b.reqs[b.n] = q
				b.n++
			}
		}
	}
	if b.n == 0 {
		return
	}
	err := r.h.FieldValues(b.reqs[:b.n], b.got[:b.n])
	d.caps.note(opFieldValues, err)
	r.check(err)
	if err != nil {
		return
	}
	b.ok = true
	for i := 0; i < b.n; i++ {
		d.caps.noteField(b.reqs[i].ID, b.got[i].Err)
	}
}

// get returns the value of a field the batch read, if it was read and valid.
func (b *fieldBatch) get(q nvmlx.FieldRequest) (nvmlx.FieldResult, bool) {
	if !b.ok {
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
	for i := 0; b.ok && i < b.n; i++ {
		if b.reqs[i] == q {
			return b.got[i], b.got[i].Err
		}
	}
	if err := d.caps.fieldKnown(q.ID); err != nil {
		return nvmlx.FieldResult{}, err
	}
	if err := d.caps.known(opFieldValues); err != nil {
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

// nvlink returns the NVLink rates from the batch.
func (r *reader) nvlink(b *fieldBatch) (tx, rx Value[KiBPerSecond]) {
	if r.lost != nil {
		return NA[KiBPerSecond](GPULost, r.lost), NA[KiBPerSecond](GPULost, r.lost)
	}
	d := r.d
	if d.NVLinkLinkCount().Or(0) == 0 {
		err := d.NVLinkLinkCount().Err()
		if err == nil {
			err = fmt.Errorf("no NVLink: %w", ErrNotSupported)
		}
		return NA[KiBPerSecond](ReasonOf(err), err), NA[KiBPerSecond](ReasonOf(err), err)
	}
	_, terr := b.result(d, fieldNVLinkTX)
	_, xerr := b.result(d, fieldNVLinkRX)
	if err := errors.Join(terr, xerr); err != nil {
		return NA[KiBPerSecond](ReasonOf(err), err), NA[KiBPerSecond](ReasonOf(err), err)
	}
	tx, tok := d.nvlinkTX.rate(b, fieldNVLinkTX, 1)
	rx, rok := d.nvlinkRX.rate(b, fieldNVLinkRX, 1)
	if !tok || !rok {
		return NA[KiBPerSecond](NotReported, errNeedsTwoReadings), NA[KiBPerSecond](NotReported, errNeedsTwoReadings)
	}
	return tx, rx
}

var errNeedsTwoReadings = fmt.Errorf("a rate needs two readings: %w", ErrNotReported)
