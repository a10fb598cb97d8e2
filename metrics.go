package nvgo

import (
	"errors"
	"fmt"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// The metric table: every device reading is defined once, here. A source
// is one NVML reading (a call of its own, or field IDs that join the one
// batched nvmlDeviceGetFieldValues call of a pass) and the metrics it
// fills, each with its name, unit, help and DeviceSnapshot field. A pass
// over a device (reader.readMetrics) asks the batch for the field IDs of
// the groups it reads, then lets each source of those groups fill its
// metrics; N/A filling (DeviceSnapshot.fillNA), DeviceMetrics and their
// numbers (the Collector, the exporter) walk the same table.
//
// Adding a reading takes its source here, its DeviceSnapshot field and its
// Device method (devicemetrics.go); a field ID needs no other code (the
// fake fleet serves field IDs generically), a call of its own needs its
// door in internal/nvmlx.

// source is one NVML reading of the table and the metrics it fills.
type source struct {
	group Fields
	// onMIG: a MIG device answers it itself; else it is N/A there.
	onMIG bool
	// static: read once per Device (it cannot change while the driver
	// is loaded); each pass copies what was read.
	static bool
	// fields are read in the pass's batch; a field the driver does not
	// answer (NOT_SUPPORTED, or an ID an older driver does not know) is
	// not asked again, and read falls back to its call, if it has one.
	fields []nvmlx.FieldRequest
	// fieldsIf, when set, says whether the device has the fields at all.
	fieldsIf func(r *reader) bool
	// read fills the metrics, from the batch or with calls of its own.
	read    func(r *reader, src *source, s *DeviceSnapshot, b *fieldBatch)
	metrics []DeviceMetric

	id       int // the source's position, which the capability memory is kept by
	staticAt int // for a static source, its place among the static ones
}

// the is the description of a metric: what a constructor of the table
// joins with the DeviceSnapshot field it fills.
type the struct {
	name string
	unit Unit
	kind MetricKind
	help string
}

// gauge, counter and state describe a metric.
func gauge(name string, unit Unit, help string) the   { return the{name, unit, KindGauge, help} }
func counter(name string, unit Unit, help string) the { return the{name, unit, KindCounter, help} }
func state(name, help string) the                     { return the{name, UnitNone, KindState, help} }

func (t the) of(field slot) DeviceMetric {
	return DeviceMetric{Name: t.name, Unit: t.unit, Kind: t.kind, Help: t.help, slot: field}
}

// callSource is a metric read with one NVML call of its own.
func callSource[T, U any](group Fields, onMIG bool, t the, field at[U], call func(nvmlx.Device) (T, error), conv func(T) U) source {
	return source{group: group, onMIG: onMIG, metrics: []DeviceMetric{t.of(field)},
		read: func(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
			*field(s) = readMetric(r, src, func() (T, error) { return call(r.h) }, conv)
		}}
}

// fieldSource is a metric read from the field ID id in the pass's batch,
// or where the driver does not answer it, with the call fallback (none:
// N/A with the field's reason).
func fieldSource[U any](group Fields, t the, field at[U], id uint32, conv func(nvmlx.FieldResult) U, fallback func(nvmlx.Device) (U, error)) source {
	q := nvmlx.FieldRequest{ID: id}
	return source{group: group, fields: []nvmlx.FieldRequest{q}, metrics: []DeviceMetric{t.of(field)},
		read: func(r *reader, src *source, s *DeviceSnapshot, b *fieldBatch) {
			if v, ok := b.get(q); ok {
				*field(s) = Some(conv(v))
				return
			}
			if fallback != nil {
				*field(s) = readMetric(r, src, func() (U, error) { return fallback(r.h) }, same[U])
				return
			}
			_, err := b.result(r.d, q)
			if err != nil && r.lost != nil {
				err = r.lost
			}
			*field(s) = NA[U](ReasonOf(err), err)
		}}
}

func same[T any](v T) T { return v }

// staticSource makes src a static source: read once per Device.
func staticSource(src source) source {
	src.static = true
	return src
}

// numberOf reads a number through the function n of NVML.
func numberOf(n nvmlx.Number) func(nvmlx.Device) (uint32, error) {
	return func(h nvmlx.Device) (uint32, error) { return h.Number(n) }
}

// clockSource is the current clock of one domain.
func clockSource(t the, field at[MHz], c nvmlx.Clock) source {
	return callSource(FieldClocks, false, t, field, func(h nvmlx.Device) (uint32, error) { return h.Clock(c) }, toMHz)
}

func toMHz(v uint32) MHz               { return MHz(v) }
func toPercent(v uint32) Percent       { return Percent(v) }
func toOnOff(v bool) OnOff             { return OnOff(v) }
func toCelsius(v uint32) Celsius       { return Celsius(v) }
func toMilliWatts(v uint32) MilliWatts { return MilliWatts(v) }

func fieldMilliWatts(v nvmlx.FieldResult) MilliWatts { return MilliWatts(v.AsFloat()) }
func fieldCelsius(v nvmlx.FieldResult) Celsius       { return Celsius(v.AsFloat()) }

// The field requests of the sources that read several or compute rates.
var (
	fieldPowerAverage = nvmlx.FieldRequest{ID: nvmlx.FieldPowerAverage}
	fieldPowerInstant = nvmlx.FieldRequest{ID: nvmlx.FieldPowerInstant}
	fieldEnergy       = nvmlx.FieldRequest{ID: nvmlx.FieldTotalEnergy}
	fieldPCIeTX       = nvmlx.FieldRequest{ID: nvmlx.FieldPCIeCountTXBytes}
	fieldPCIeRX       = nvmlx.FieldRequest{ID: nvmlx.FieldPCIeCountRXBytes}
	fieldNVLinkTX     = nvmlx.FieldRequest{ID: nvmlx.FieldNVLinkThroughputTX, Scope: nvmlx.ScopeAll}
	fieldNVLinkRX     = nvmlx.FieldRequest{ID: nvmlx.FieldNVLinkThroughputRX, Scope: nvmlx.ScopeAll}
)

// The counters a Device turns into rates, by their place in deviceReads.rates.
const (
	ratePCIeTX = iota
	ratePCIeRX
	rateNVLinkTX
	rateNVLinkRX
	numRates
)

var sources = []source{
	{group: FieldMemory, onMIG: true, read: readMemory, metrics: []DeviceMetric{
		gauge("memory_total", UnitBytes, "Frame-buffer size; N/A on a GPU that uses system memory (unified_memory).").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryTotal })),
		gauge("memory_used", UnitBytes, "Frame buffer in use; from R510 without the memory the driver reserves (memory_reserved), as nvidia-smi shows it.").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryUsed })),
		gauge("memory_free", UnitBytes, "Frame buffer free.").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryFree })),
		gauge("memory_reserved", UnitBytes, "Frame buffer the driver reserves (R510 and later).").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryReserved })),
		gauge("memory_percent", UnitPercent, "Frame buffer in use, in percent of its size, to one decimal.").of(at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.MemoryPercent })),
		state("unified_memory", "1 on a GPU with no frame buffer of its own, which uses system memory (GB10, say): its memory figures are N/A.").of(at[bool](func(s *DeviceSnapshot) *Value[bool] { return &s.UnifiedMemory })),
	}},
	{group: FieldBAR1, onMIG: true, read: readBAR1, metrics: []DeviceMetric{
		gauge("bar1_memory_total", UnitBytes, "BAR1 aperture size.").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Total })),
		gauge("bar1_memory_used", UnitBytes, "BAR1 memory in use.").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Used })),
		gauge("bar1_memory_free", UnitBytes, "BAR1 memory free.").of(at[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Free })),
	}},
	{group: FieldUtilization, read: readUtilization, metrics: []DeviceMetric{
		gauge("gpu_utilization", UnitPercent, "Percent of the driver's last sample period in which a kernel ran.").of(atGPUUtilization),
		gauge("memory_utilization", UnitPercent, "Percent of the driver's last sample period in which device memory was read or written.").of(atMemoryUtilization),
	}},
	callSource(FieldCodec, false, gauge("encoder_utilization", UnitPercent, "Video encoder utilization."),
		func(s *DeviceSnapshot) *Value[Percent] { return &s.EncoderUtilization }, nvmlx.Device.Encoder, toPercent),
	callSource(FieldCodec, false, gauge("decoder_utilization", UnitPercent, "Video decoder utilization."),
		func(s *DeviceSnapshot) *Value[Percent] { return &s.DecoderUtilization }, nvmlx.Device.Decoder, toPercent),
	clockSource(gauge("graphics_clock", UnitMHz, "Current graphics clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.GraphicsClock }, nvmlx.ClockGraphics),
	clockSource(gauge("sm_clock", UnitMHz, "Current SM clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.SMClock }, nvmlx.ClockSM),
	clockSource(gauge("memory_clock", UnitMHz, "Current memory clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.MemoryClock }, nvmlx.ClockMemory),
	clockSource(gauge("video_clock", UnitMHz, "Current video clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.VideoClock }, nvmlx.ClockVideo),
	{group: FieldClocks, static: true, read: readMaxClocks, metrics: []DeviceMetric{
		gauge("max_graphics_clock", UnitMHz, "Maximum graphics clock.").of(maxClockFields[nvmlx.ClockGraphics]),
		gauge("max_sm_clock", UnitMHz, "Maximum SM clock.").of(maxClockFields[nvmlx.ClockSM]),
		gauge("max_memory_clock", UnitMHz, "Maximum memory clock.").of(maxClockFields[nvmlx.ClockMemory]),
		gauge("max_video_clock", UnitMHz, "Maximum video clock.").of(maxClockFields[nvmlx.ClockVideo]),
	}},
	callSource(FieldFan, false, gauge("fan_speed", UnitPercent, "Fan speed, in percent of its maximum (it can exceed 100); N/A on boards without a fan (SXM)."),
		func(s *DeviceSnapshot) *Value[Percent] { return &s.FanSpeed }, nvmlx.Device.FanSpeed, toPercent),
	callSource(FieldTemperature, false, gauge("temperature", UnitCelsius, "GPU core temperature."),
		func(s *DeviceSnapshot) *Value[Celsius] { return &s.Temperature }, nvmlx.Device.Temperature, toCelsius),
	fieldSource(FieldTemperature, gauge("memory_temperature", UnitCelsius, "Memory (HBM) temperature; N/A on GPUs without a sensor the driver reads."),
		func(s *DeviceSnapshot) *Value[Celsius] { return &s.MemoryTemperature }, nvmlx.FieldMemoryTemperature, fieldCelsius, nil),
	// nvidia-smi's power.draw: the one-second average where the GPU keeps
	// one (Ampere and newer but GA100), else the instantaneous reading.
	{group: FieldPower, fields: []nvmlx.FieldRequest{fieldPowerAverage, fieldPowerInstant}, read: readPowerUsage, metrics: []DeviceMetric{
		gauge("power_usage", UnitMilliWatts, "Board power draw: the one-second average on Ampere and newer (but A100), else instantaneous, as nvidia-smi's power.draw.").of(atPowerUsage),
	}},
	fieldSource(FieldPower, gauge("power_limit", UnitMilliWatts, "Power management limit in force."),
		func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.PowerLimit }, nvmlx.FieldPowerCurrentLimit, fieldMilliWatts,
		func(h nvmlx.Device) (MilliWatts, error) { v, err := h.PowerLimit(); return MilliWatts(v), err }),
	staticSource(callSource(FieldPower, false, gauge("default_power_limit", UnitMilliWatts, "Power management limit the board ships with."),
		func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.DefaultPowerLimit }, numberOf("nvmlDeviceGetPowerManagementDefaultLimit"), toMilliWatts)),
	// Energy: a counter since the driver loaded, in the power batch (NVML
	// has no energy reading outside a field ID worth a call of its own).
	fieldSource(FieldPower, counter("total_energy_consumption", UnitMilliJoules, "Energy the GPU used since the driver loaded (Volta and later)."),
		func(s *DeviceSnapshot) *Value[MilliJoules] { return &s.TotalEnergyConsumption }, nvmlx.FieldTotalEnergy,
		func(v nvmlx.FieldResult) MilliJoules { return MilliJoules(v.Uint) }, nil),
	// PCIe throughput: the mean since the previous reading of the device,
	// from the byte counters (R555 and later); at the first reading, and on
	// older drivers, the driver's 20 ms window.
	{group: FieldPCIe, fields: []nvmlx.FieldRequest{fieldPCIeTX, fieldPCIeRX}, read: readPCIe, metrics: []DeviceMetric{
		gauge("pcie_tx_throughput", UnitKiBPerSecond, "PCIe transmit rate: the mean since the device's previous PCIe reading from the byte counters (R555 and later), else over the driver's 20 ms window.").of(atPCIeTX),
		gauge("pcie_rx_throughput", UnitKiBPerSecond, "PCIe receive rate, like pcie_tx_throughput.").of(atPCIeRX),
	}},
	// NVLink throughput: the mean since the previous reading of the device,
	// from the data counters summed over links (KiB); N/A at the first.
	{group: FieldNVLink, fields: []nvmlx.FieldRequest{fieldNVLinkTX, fieldNVLinkRX}, fieldsIf: hasNVLink, read: readNVLink, metrics: []DeviceMetric{
		gauge("nvlink_tx_throughput", UnitKiBPerSecond, "NVLink transmit rate summed over links: the mean since the device's previous NVLink reading (N/A at the first).").of(atNVLinkTX),
		gauge("nvlink_rx_throughput", UnitKiBPerSecond, "NVLink receive rate, like nvlink_tx_throughput.").of(atNVLinkRX),
	}},
	{group: FieldNVLink, static: true, read: readNVLinkCount, metrics: []DeviceMetric{
		gauge("nvlink_count", UnitNone, "Number of NVLink links (0 without NVLink).").of(atNVLinkCount),
	}},
	fieldSource(FieldECC, counter("total_volatile_uncorrected_ecc_errors", UnitNone, "Uncorrected (double-bit) ECC errors since the driver loaded; N/A with ECC off."),
		func(s *DeviceSnapshot) *Value[uint64] { return &s.TotalVolatileUncorrectedECCErrors }, nvmlx.FieldECCDBEVolatileTotal,
		func(v nvmlx.FieldResult) uint64 { return v.Uint }, nvmlx.Device.VolatileUncorrectedECC),
	callSource(FieldPerformanceState, false, state("performance_state", "P-state: 0 (P0, fastest) to 15."),
		func(s *DeviceSnapshot) *Value[PState] { return &s.PerformanceState }, nvmlx.Device.PerformanceState, toPState),
	callSource(FieldDisplay, false, state("display_active", "1 when a display is initialised on the GPU (an X server, say)."),
		func(s *DeviceSnapshot) *Value[OnOff] { return &s.DisplayActive }, nvmlx.Device.DisplayActive, toOnOff),
	callSource(FieldDisplay, false, state("display_mode", "1 when a physical display is connected."),
		func(s *DeviceSnapshot) *Value[OnOff] { return &s.DisplayMode }, nvmlx.Device.DisplayMode, toOnOff),
	callSource(FieldPersistenceMode, false, state("persistence_mode", "1 when persistence mode is on."),
		func(s *DeviceSnapshot) *Value[OnOff] { return &s.PersistenceMode }, nvmlx.Device.PersistenceMode, toOnOff),
	callSource(FieldComputeMode, false, state("compute_mode", "Compute mode, as NVML numbers it: 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process."),
		func(s *DeviceSnapshot) *Value[ComputeMode] { return &s.ComputeMode }, nvmlx.Device.ComputeMode, func(m int) ComputeMode { return ComputeMode(m) }),
	{group: FieldMIGMode, read: readMIGMode, metrics: []DeviceMetric{
		state("mig_mode", "1 when MIG is enabled; N/A on GPUs without MIG.").of(atMIGMode),
		state("mig_mode_pending", "The MIG mode after the next GPU reset.").of(atMIGModePending),
	}},
}

// The fields that more than one function of the table fills.
var (
	atGPUUtilization    = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.GPUUtilization })
	atMemoryUtilization = at[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.MemoryUtilization })
	atPowerUsage        = at[MilliWatts](func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.PowerUsage })
	atPCIeTX            = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.PCIeTXThroughput })
	atPCIeRX            = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.PCIeRXThroughput })
	atNVLinkTX          = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.NVLinkTXThroughput })
	atNVLinkRX          = at[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.NVLinkRXThroughput })
	atNVLinkCount       = at[int](func(s *DeviceSnapshot) *Value[int] { return &s.NVLinkCount })
	atMIGMode           = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.MIGMode })
	atMIGModePending    = at[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.MIGModePending })
	maxClockFields      = [...]at[MHz]{
		nvmlx.ClockGraphics: func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxGraphicsClock },
		nvmlx.ClockSM:       func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxSMClock },
		nvmlx.ClockMemory:   func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxMemoryClock },
		nvmlx.ClockVideo:    func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxVideoClock },
	}
)

// numStatic is how many sources are static.
var numStatic int

func init() {
	for i := range sources {
		sources[i].id = i
		if sources[i].static {
			sources[i].staticAt = numStatic
			numStatic++
		}
	}
	srcNVLinkCount = sourceOf("nvlink_count")
}

func toPState(p int) PState { return PState(p) }

func readMemory(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
	m := memoryOf(readMetric(r, src, r.h.Memory, same[nvmlx.Memory]))
	s.MemoryTotal, s.MemoryUsed, s.MemoryFree, s.MemoryReserved = m.total, m.used, m.free, m.reserved
	s.MemoryPercent, s.UnifiedMemory = m.percent, m.unified
}

func readBAR1(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
	b := readMetric(r, src, r.h.BAR1, same[nvmlx.BAR1])
	s.BAR1Total = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Total) })
	s.BAR1Used = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Used) })
	s.BAR1Free = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Free) })
}

func readUtilization(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
	u := readMetric(r, src, func() (gpuMem, error) {
		g, m, err := r.h.Utilization()
		return gpuMem{g, m}, err
	}, same[gpuMem])
	s.GPUUtilization = Map(u, func(u gpuMem) Percent { return Percent(u.gpu) })
	s.MemoryUtilization = Map(u, func(u gpuMem) Percent { return Percent(u.mem) })
}

func readMaxClocks(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
	for c, field := range maxClockFields {
		*field(s) = readMetric(r, src, func() (uint32, error) { return r.h.MaxClock(nvmlx.Clock(c)) }, toMHz)
	}
}

func readPowerUsage(r *reader, src *source, s *DeviceSnapshot, b *fieldBatch) {
	if v, ok := b.get(fieldPowerAverage); ok {
		s.PowerUsage = Some(fieldMilliWatts(v))
	} else if v, ok := b.get(fieldPowerInstant); ok {
		s.PowerUsage = Some(fieldMilliWatts(v))
	} else {
		s.PowerUsage = readMetric(r, src, r.h.PowerUsage, toMilliWatts)
	}
}

func readPCIe(r *reader, src *source, s *DeviceSnapshot, b *fieldBatch) {
	rates := &r.d.reads.rates
	tx, txOK := rates[ratePCIeTX].rate(b, fieldPCIeTX, 1.0/1024)
	rx, rxOK := rates[ratePCIeRX].rate(b, fieldPCIeRX, 1.0/1024)
	if txOK && rxOK {
		s.PCIeTXThroughput, s.PCIeRXThroughput = tx, rx
		return
	}
	kib := func(v uint32) KiBPerSecond { return KiBPerSecond(v) }
	s.PCIeTXThroughput = readMetric(r, src, func() (uint32, error) { return r.h.PCIeThroughput(true) }, kib)
	s.PCIeRXThroughput = readMetric(r, src, func() (uint32, error) { return r.h.PCIeThroughput(false) }, kib)
}

// nvlinkCount is the device's NVLink count, read once, through the pass r.
func nvlinkCount(r *reader) Value[int] { return r.d.reads.static(r, srcNVLinkCount).NVLinkCount }

func hasNVLink(r *reader) bool { return nvlinkCount(r).Or(0) > 0 }

// srcNVLinkCount is the source of the NVLink count (set by init: the
// table refers to it).
var srcNVLinkCount *source

// sourceOf returns the source of the metric called name.
func sourceOf(name string) *source {
	for i := range sources {
		for _, m := range sources[i].metrics {
			if m.Name == name {
				return &sources[i]
			}
		}
	}
	panic("nvgo: no source of " + name)
}

// readNVLink fills the NVLink rates from the batch.
func readNVLink(r *reader, _ *source, s *DeviceSnapshot, b *fieldBatch) {
	set := func(tx, rx Value[KiBPerSecond]) { s.NVLinkTXThroughput, s.NVLinkRXThroughput = tx, rx }
	na := func(err error) { set(NA[KiBPerSecond](ReasonOf(err), err), NA[KiBPerSecond](ReasonOf(err), err)) }
	if r.lost != nil {
		na(r.lost)
		return
	}
	d := r.d
	if n := nvlinkCount(r); n.Or(0) == 0 {
		err := n.Err()
		if err == nil {
			err = fmt.Errorf("no NVLink: %w", ErrNotSupported)
		}
		na(err)
		return
	}
	_, terr := b.result(d, fieldNVLinkTX)
	_, xerr := b.result(d, fieldNVLinkRX)
	if err := errors.Join(terr, xerr); err != nil {
		na(err)
		return
	}
	rates := &d.reads.rates
	tx, tok := rates[rateNVLinkTX].rate(b, fieldNVLinkTX, 1)
	rx, rok := rates[rateNVLinkRX].rate(b, fieldNVLinkRX, 1)
	if !tok || !rok {
		na(errNeedsTwoReadings)
		return
	}
	set(tx, rx)
}

var errNeedsTwoReadings = fmt.Errorf("a rate needs two readings: %w", ErrNotReported)

// readNVLinkCount reads the link count with a field-value call of its own
// (it is static, so not in any pass's batch).
func readNVLinkCount(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
	s.NVLinkCount = readMetric(r, src, func() (int, error) {
		var res [1]nvmlx.FieldResult
		if err := r.h.FieldValues([]nvmlx.FieldRequest{{ID: nvmlx.FieldNVLinkLinkCount}}, res[:]); err != nil {
			return 0, err
		}
		return int(res[0].Uint), res[0].Err
	}, same[int])
}

func readMIGMode(r *reader, src *source, s *DeviceSnapshot, _ *fieldBatch) {
	m := readMetric(r, src, func() ([2]int, error) {
		c, p, err := r.h.MIGMode()
		return [2]int{c, p}, err
	}, same[[2]int])
	s.MIGMode = Map(m, func(m [2]int) OnOff { return m[0] == 1 })
	s.MIGModePending = Map(m, func(m [2]int) OnOff { return m[1] == 1 })
}

// migFields are the groups a MIG device reports itself (with its processes,
// which are not in the table). Everything else is N/A there: NVML keeps it
// only per physical GPU.
var migFields = func() Fields {
	f := FieldProcesses
	for _, src := range sources {
		if src.onMIG {
			f |= src.group
		}
	}
	return f
}()

// readMetrics reads the table's metrics of the groups f.
func (r *reader) readMetrics(s *DeviceSnapshot, f Fields) {
	b := &r.batch
	b.ask(r, f)
	for i := range sources {
		src := &sources[i]
		switch {
		case src.group&f == 0:
		case src.static:
			cached := r.d.reads.static(r, src)
			for _, m := range src.metrics {
				m.slot.copy(s, cached)
			}
		default:
			src.read(r, src, s, b)
		}
	}
}

// fillNA marks every metric of the groups f N/A because of err.
func (s *DeviceSnapshot) fillNA(f Fields, err error) {
	r := ReasonOf(err)
	for i := range sources {
		src := &sources[i]
		if src.group&f == 0 {
			continue
		}
		for _, m := range src.metrics {
			m.slot.setNA(s, r, err)
		}
	}
	if f&FieldProcesses != 0 {
		s.ProcessesErr, s.ProcessesError = err, err.Error()
	}
	if f&FieldVgpuInstances != 0 {
		s.VirtualizationMode = NA[VirtualizationMode](r, err)
		if s.MIGIndex.IsNA() { // a MIG device simply has none
			s.VgpuInstancesErr, s.VgpuInstancesError = err, err.Error()
		}
	}
}
