package nvgo

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// The metric table: every device reading is defined once, here. A source
// is one NVML reading (a call of its own, or field IDs that join the one
// batched nvmlDeviceGetFieldValues call of a pass) and the metrics it
// fills, each with its name, unit, help and DeviceSnapshot field. A pass
// over a device (passReader.readMetrics) asks the batch for the field IDs of
// the groups it reads, then lets each source of those groups fill its
// metrics; N/A filling (DeviceSnapshot.fillNA), DeviceMetrics and their
// numbers (the Collector, the exporter) walk the same table.
//
// Adding a reading takes its source here, its DeviceSnapshot field
// (snapshot.go) and its Device method (devicemetrics.go); a field ID needs
// no other code (both fakes serve field IDs generically), a function that
// answers one number is one line in internal/nvmlx/numbers.go.

// metricSource is one NVML reading of the table and the metrics it fills.
type metricSource struct {
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
	fieldsIf func(r *passReader) bool
	// read fills the metrics, from the batch or with calls of its own.
	read    func(r *passReader, src *metricSource, s *DeviceSnapshot, b *fieldBatch)
	metrics []DeviceMetric

	id       int // the source's position, which the capability memory is kept by
	staticAt int // for a static source, its place among the static ones
}

// metricDesc is the description of a metric: what a constructor of the
// table joins with the DeviceSnapshot field it fills.
type metricDesc struct {
	name string
	unit Unit
	kind MetricKind
	help string
}

// gaugeMetric, counterMetric and stateMetric describe a metric.
func gaugeMetric(name string, unit Unit, help string) metricDesc {
	return metricDesc{name, unit, KindGauge, help}
}
func counterMetric(name string, unit Unit, help string) metricDesc {
	return metricDesc{name, unit, KindCounter, help}
}
func stateMetric(name, help string) metricDesc { return metricDesc{name, UnitNone, KindState, help} }

// filling is the metric t that fills field.
func (t metricDesc) filling(field metricSlot) DeviceMetric {
	return DeviceMetric{Name: t.name, Unit: t.unit, Kind: t.kind, Help: t.help, slot: field}
}

// callSource is a metric read with one NVML call of its own.
func callSource[T, U any](group Fields, onMIG bool, t metricDesc, field snapshotField[U], call func(nvmlx.Device) (T, error), conv func(T) U) metricSource {
	return metricSource{group: group, onMIG: onMIG, metrics: []DeviceMetric{t.filling(field)},
		read: func(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
			*field(s) = readMetric(r, src, func() (T, error) { return call(r.h) }, conv)
		}}
}

// fieldSource is a metric read from the field ID id in the pass's batch,
// or where the driver does not answer it, with the call fallback (none:
// N/A with the field's reason).
func fieldSource[U any](group Fields, t metricDesc, field snapshotField[U], id uint32, conv func(nvmlx.FieldResult) U, fallback func(nvmlx.Device) (U, error)) metricSource {
	q := nvmlx.FieldRequest{ID: id}
	return metricSource{group: group, fields: []nvmlx.FieldRequest{q}, metrics: []DeviceMetric{t.filling(field)},
		read: func(r *passReader, src *metricSource, s *DeviceSnapshot, b *fieldBatch) {
			if v, ok := b.get(q); ok {
				*field(s) = Some(conv(v))
				return
			}
			if fallback != nil {
				*field(s) = readMetric(r, src, func() (U, error) { return fallback(r.h) }, unchanged[U])
				return
			}
			_, err := b.result(r.d, q)
			if err != nil && r.lost != nil {
				err = r.lost
			}
			*field(s) = NA[U](ReasonOf(err), err)
		}}
}

// unchanged is the conversion of a reading already in its type.
func unchanged[T any](v T) T { return v }

// staticSource makes src a static source: read once per Device.
func staticSource(src metricSource) metricSource {
	src.static = true
	return src
}

// numberOf reads a number through the function n of NVML.
func numberOf(n nvmlx.Number) func(nvmlx.Device) (uint32, error) {
	return func(h nvmlx.Device) (uint32, error) { return h.Number(n) }
}

// clockSource is the current clock of one domain.
func clockSource(t metricDesc, field snapshotField[MHz], c nvmlx.Clock) metricSource {
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
	fieldPCIeTX       = nvmlx.FieldRequest{ID: nvmlx.FieldPCIeCountTXBytes}
	fieldPCIeRX       = nvmlx.FieldRequest{ID: nvmlx.FieldPCIeCountRXBytes}
	fieldNVLinkTX     = nvmlx.FieldRequest{ID: nvmlx.FieldNVLinkThroughputTX, Scope: nvmlx.ScopeAll}
	fieldNVLinkRX     = nvmlx.FieldRequest{ID: nvmlx.FieldNVLinkThroughputRX, Scope: nvmlx.ScopeAll}
)

var metricSources = []metricSource{
	{group: FieldMemory, onMIG: true, read: readMemory, metrics: []DeviceMetric{
		gaugeMetric("memory_total", UnitBytes, "Frame-buffer size; N/A on a GPU that uses system memory (unified_memory).").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryTotal })),
		gaugeMetric("memory_used", UnitBytes, "Frame buffer in use; from R510 without the memory the driver reserves (memory_reserved), as nvidia-smi shows it.").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryUsed })),
		gaugeMetric("memory_free", UnitBytes, "Frame buffer free.").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryFree })),
		gaugeMetric("memory_reserved", UnitBytes, "Frame buffer the driver reserves (R510 and later).").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.MemoryReserved })),
		gaugeMetric("memory_percent", UnitPercent, "Frame buffer in use, in percent of its size, to one decimal.").filling(snapshotField[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.MemoryPercent })),
		stateMetric("unified_memory", "1 on a GPU with no frame buffer of its own, which uses system memory (GB10, say): its memory figures are N/A.").filling(snapshotField[bool](func(s *DeviceSnapshot) *Value[bool] { return &s.UnifiedMemory })),
	}},
	{group: FieldBAR1, onMIG: true, read: readBAR1, metrics: []DeviceMetric{
		gaugeMetric("bar1_memory_total", UnitBytes, "BAR1 aperture size.").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Total })),
		gaugeMetric("bar1_memory_used", UnitBytes, "BAR1 memory in use.").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Used })),
		gaugeMetric("bar1_memory_free", UnitBytes, "BAR1 memory free.").filling(snapshotField[Bytes](func(s *DeviceSnapshot) *Value[Bytes] { return &s.BAR1Free })),
	}},
	{group: FieldUtilization, read: readUtilization, metrics: []DeviceMetric{
		gaugeMetric("gpu_utilization", UnitPercent, "Percent of the driver's last sample period in which a kernel ran.").filling(atGPUUtilization),
		gaugeMetric("memory_utilization", UnitPercent, "Percent of the driver's last sample period in which device memory was read or written.").filling(atMemoryUtilization),
	}},
	callSource(FieldCodec, false, gaugeMetric("encoder_utilization", UnitPercent, "Video encoder utilization."),
		func(s *DeviceSnapshot) *Value[Percent] { return &s.EncoderUtilization }, nvmlx.Device.Encoder, toPercent),
	callSource(FieldCodec, false, gaugeMetric("decoder_utilization", UnitPercent, "Video decoder utilization."),
		func(s *DeviceSnapshot) *Value[Percent] { return &s.DecoderUtilization }, nvmlx.Device.Decoder, toPercent),
	clockSource(gaugeMetric("graphics_clock", UnitMHz, "Current graphics clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.GraphicsClock }, nvmlx.ClockGraphics),
	clockSource(gaugeMetric("sm_clock", UnitMHz, "Current SM clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.SMClock }, nvmlx.ClockSM),
	clockSource(gaugeMetric("memory_clock", UnitMHz, "Current memory clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.MemoryClock }, nvmlx.ClockMemory),
	clockSource(gaugeMetric("video_clock", UnitMHz, "Current video clock."), func(s *DeviceSnapshot) *Value[MHz] { return &s.VideoClock }, nvmlx.ClockVideo),
	{group: FieldClocks, static: true, read: readMaxClocks, metrics: []DeviceMetric{
		gaugeMetric("max_graphics_clock", UnitMHz, "Maximum graphics clock.").filling(maxClockFields[nvmlx.ClockGraphics]),
		gaugeMetric("max_sm_clock", UnitMHz, "Maximum SM clock.").filling(maxClockFields[nvmlx.ClockSM]),
		gaugeMetric("max_memory_clock", UnitMHz, "Maximum memory clock.").filling(maxClockFields[nvmlx.ClockMemory]),
		gaugeMetric("max_video_clock", UnitMHz, "Maximum video clock.").filling(maxClockFields[nvmlx.ClockVideo]),
	}},
	callSource(FieldFan, false, gaugeMetric("fan_speed", UnitPercent, "Fan speed, in percent of its maximum (it can exceed 100); N/A on boards without a fan (SXM)."),
		func(s *DeviceSnapshot) *Value[Percent] { return &s.FanSpeed }, nvmlx.Device.FanSpeed, toPercent),
	callSource(FieldTemperature, false, gaugeMetric("temperature", UnitCelsius, "GPU core temperature."),
		func(s *DeviceSnapshot) *Value[Celsius] { return &s.Temperature }, nvmlx.Device.Temperature, toCelsius),
	fieldSource(FieldTemperature, gaugeMetric("memory_temperature", UnitCelsius, "Memory (HBM) temperature; N/A on GPUs without a sensor the driver reads."),
		func(s *DeviceSnapshot) *Value[Celsius] { return &s.MemoryTemperature }, nvmlx.FieldMemoryTemperature, fieldCelsius, nil),
	// nvidia-smi's power.draw: the one-second average where the GPU keeps
	// one (Ampere and newer but GA100), else the instantaneous reading.
	{group: FieldPower, fields: []nvmlx.FieldRequest{fieldPowerAverage, fieldPowerInstant}, read: readPowerUsage, metrics: []DeviceMetric{
		gaugeMetric("power_usage", UnitMilliWatts, "Board power draw: the one-second average on Ampere and newer (but A100), else instantaneous, as nvidia-smi's power.draw.").filling(atPowerUsage),
	}},
	fieldSource(FieldPower, gaugeMetric("power_limit", UnitMilliWatts, "Power management limit in force."),
		func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.PowerLimit }, nvmlx.FieldPowerCurrentLimit, fieldMilliWatts,
		func(h nvmlx.Device) (MilliWatts, error) { v, err := h.PowerLimit(); return MilliWatts(v), err }),
	staticSource(callSource(FieldPower, false, gaugeMetric("default_power_limit", UnitMilliWatts, "Power management limit the board ships with."),
		func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.DefaultPowerLimit }, numberOf("nvmlDeviceGetPowerManagementDefaultLimit"), toMilliWatts)),
	// Energy: a counter since the driver loaded, in the power batch (NVML
	// has no energy reading outside a field ID worth a call of its own).
	fieldSource(FieldPower, counterMetric("total_energy_consumption", UnitMilliJoules, "Energy the GPU used since the driver loaded (Volta and later)."),
		func(s *DeviceSnapshot) *Value[MilliJoules] { return &s.TotalEnergyConsumption }, nvmlx.FieldTotalEnergy,
		func(v nvmlx.FieldResult) MilliJoules { return MilliJoules(v.Uint) }, nil),
	// PCIe throughput: the mean since the previous reading of the device,
	// from the byte counters (R555 and later); at the first reading, and on
	// older drivers, the driver's 20 ms window.
	{group: FieldPCIe, fields: []nvmlx.FieldRequest{fieldPCIeTX, fieldPCIeRX}, read: readPCIe, metrics: []DeviceMetric{
		gaugeMetric("pcie_tx_throughput", UnitKiBPerSecond, "PCIe transmit rate: the mean since the device's previous PCIe reading from the byte counters (R555 and later), else over the driver's 20 ms window.").filling(atPCIeTX),
		gaugeMetric("pcie_rx_throughput", UnitKiBPerSecond, "PCIe receive rate, like pcie_tx_throughput.").filling(atPCIeRX),
	}},
	// NVLink throughput: the mean since the previous reading of the device,
	// from the data counters summed over links (KiB); N/A at the first.
	{group: FieldNVLink, fields: []nvmlx.FieldRequest{fieldNVLinkTX, fieldNVLinkRX}, fieldsIf: hasNVLink, read: readNVLink, metrics: []DeviceMetric{
		gaugeMetric("nvlink_tx_throughput", UnitKiBPerSecond, "NVLink transmit rate summed over links: the mean since the device's previous NVLink reading (N/A at the first).").filling(atNVLinkTX),
		gaugeMetric("nvlink_rx_throughput", UnitKiBPerSecond, "NVLink receive rate, like nvlink_tx_throughput.").filling(atNVLinkRX),
	}},
	{group: FieldNVLink, static: true, read: readNVLinkCount, metrics: []DeviceMetric{
		gaugeMetric("nvlink_count", UnitNone, "Number of NVLink links (0 without NVLink).").filling(atNVLinkCount),
	}},
	fieldSource(FieldECC, counterMetric("total_volatile_uncorrected_ecc_errors", UnitNone, "Uncorrected (double-bit) ECC errors since the driver loaded; N/A with ECC off."),
		func(s *DeviceSnapshot) *Value[uint64] { return &s.TotalVolatileUncorrectedECCErrors }, nvmlx.FieldECCDBEVolatileTotal,
		func(v nvmlx.FieldResult) uint64 { return v.Uint }, nvmlx.Device.VolatileUncorrectedECC),
	callSource(FieldPerformanceState, false, stateMetric("performance_state", "P-state: 0 (P0, fastest) to 15."),
		func(s *DeviceSnapshot) *Value[PState] { return &s.PerformanceState }, performanceState, unchanged[PState]),
	callSource(FieldDisplay, false, stateMetric("display_active", "1 when a display is initialised on the GPU (an X server, say)."),
		func(s *DeviceSnapshot) *Value[OnOff] { return &s.DisplayActive }, nvmlx.Device.DisplayActive, toOnOff),
	callSource(FieldDisplay, false, stateMetric("display_mode", "1 when a physical display is connected."),
		func(s *DeviceSnapshot) *Value[OnOff] { return &s.DisplayMode }, nvmlx.Device.DisplayMode, toOnOff),
	callSource(FieldPersistenceMode, false, stateMetric("persistence_mode", "1 when persistence mode is on."),
		func(s *DeviceSnapshot) *Value[OnOff] { return &s.PersistenceMode }, nvmlx.Device.PersistenceMode, toOnOff),
	callSource(FieldComputeMode, false, stateMetric("compute_mode", "Compute mode, as NVML numbers it: 0 default, 1 exclusive thread, 2 prohibited, 3 exclusive process."),
		func(s *DeviceSnapshot) *Value[ComputeMode] { return &s.ComputeMode }, nvmlx.Device.ComputeMode, func(m int) ComputeMode { return ComputeMode(m) }),
	{group: FieldMIGMode, read: readMIGMode, metrics: []DeviceMetric{
		stateMetric("mig_mode", "1 when MIG is enabled; N/A on GPUs without MIG.").filling(atMIGMode),
		stateMetric("mig_mode_pending", "The MIG mode after the next GPU reset.").filling(atMIGModePending),
	}},
}

// The fields that more than one function of the table fills.
var (
	atGPUUtilization    = snapshotField[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.GPUUtilization })
	atMemoryUtilization = snapshotField[Percent](func(s *DeviceSnapshot) *Value[Percent] { return &s.MemoryUtilization })
	atPowerUsage        = snapshotField[MilliWatts](func(s *DeviceSnapshot) *Value[MilliWatts] { return &s.PowerUsage })
	atPCIeTX            = snapshotField[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.PCIeTXThroughput })
	atPCIeRX            = snapshotField[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.PCIeRXThroughput })
	atNVLinkTX          = snapshotField[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.NVLinkTXThroughput })
	atNVLinkRX          = snapshotField[KiBPerSecond](func(s *DeviceSnapshot) *Value[KiBPerSecond] { return &s.NVLinkRXThroughput })
	atNVLinkCount       = snapshotField[int](func(s *DeviceSnapshot) *Value[int] { return &s.NVLinkCount })
	atMIGMode           = snapshotField[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.MIGMode })
	atMIGModePending    = snapshotField[OnOff](func(s *DeviceSnapshot) *Value[OnOff] { return &s.MIGModePending })
	maxClockFields      = [...]snapshotField[MHz]{
		nvmlx.ClockGraphics: func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxGraphicsClock },
		nvmlx.ClockSM:       func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxSMClock },
		nvmlx.ClockMemory:   func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxMemoryClock },
		nvmlx.ClockVideo:    func(s *DeviceSnapshot) *Value[MHz] { return &s.MaxVideoClock },
	}
)

func init() {
	numSources = len(metricSources)
	for i := range metricSources {
		metricSources[i].id = i
		if metricSources[i].static {
			metricSources[i].staticAt = numStatic
			numStatic++
		}
	}
	srcNVLinkCount = metricSourceOf("nvlink_count")
}

// errPStateUnknown is the reason a performance state is N/A when the
// driver answers NVML's "unknown" (32): not a state that P0..P15 can say.
var errPStateUnknown = fmt.Errorf("the driver reports the performance state as unknown: %w", ErrNotReported)

// performanceState reads the P-state, N/A when the driver does not know it.
func performanceState(d nvmlx.Device) (PState, error) {
	p, err := d.PerformanceState()
	if err == nil && (p < 0 || p > 15) {
		return 0, errPStateUnknown
	}
	return PState(p), err
}

func readMemory(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
	m := memoryOf(readMetric(r, src, r.h.Memory, unchanged[nvmlx.Memory]))
	s.MemoryTotal, s.MemoryUsed, s.MemoryFree, s.MemoryReserved = m.total, m.used, m.free, m.reserved
	s.MemoryPercent, s.UnifiedMemory = m.percent, m.unified
}

func readBAR1(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
	b := readMetric(r, src, r.h.BAR1, unchanged[nvmlx.BAR1])
	s.BAR1Total = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Total) })
	s.BAR1Used = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Used) })
	s.BAR1Free = Map(b, func(b nvmlx.BAR1) Bytes { return Bytes(b.Free) })
}

func readUtilization(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
	u := readMetric(r, src, func() (gpuMem, error) {
		g, m, err := r.h.Utilization()
		return gpuMem{g, m}, err
	}, unchanged[gpuMem])
	s.GPUUtilization = Map(u, func(u gpuMem) Percent { return Percent(u.gpu) })
	s.MemoryUtilization = Map(u, func(u gpuMem) Percent { return Percent(u.mem) })
}

func readMaxClocks(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
	for c, field := range maxClockFields {
		*field(s) = readMetric(r, src, func() (uint32, error) { return r.h.MaxClock(nvmlx.Clock(c)) }, toMHz)
	}
}

func readPowerUsage(r *passReader, src *metricSource, s *DeviceSnapshot, b *fieldBatch) {
	if v, ok := b.get(fieldPowerAverage); ok {
		s.PowerUsage = Some(fieldMilliWatts(v))
	} else if v, ok := b.get(fieldPowerInstant); ok {
		s.PowerUsage = Some(fieldMilliWatts(v))
	} else {
		s.PowerUsage = readMetric(r, src, r.h.PowerUsage, toMilliWatts)
	}
}

func readPCIe(r *passReader, src *metricSource, s *DeviceSnapshot, b *fieldBatch) {
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

func hasNVLink(r *passReader) bool { return nvlinkCount(r).Or(0) > 0 }

// srcNVLinkCount is the source of the NVLink count (set by init: the
// table refers to it).
var srcNVLinkCount *metricSource

// sourceOf returns the source of the metric called name.
func metricSourceOf(name string) *metricSource {
	for i := range metricSources {
		for _, m := range metricSources[i].metrics {
			if m.Name == name {
				return &metricSources[i]
			}
		}
	}
	panic("nvgo: no source of " + name)
}

// readNVLink fills the NVLink rates from the batch.
func readNVLink(r *passReader, _ *metricSource, s *DeviceSnapshot, b *fieldBatch) {
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
func readNVLinkCount(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
	s.NVLinkCount = readMetric(r, src, func() (int, error) {
		var res [1]nvmlx.FieldResult
		if err := r.h.FieldValues([]nvmlx.FieldRequest{{ID: nvmlx.FieldNVLinkLinkCount}}, res[:]); err != nil {
			return 0, err
		}
		return int(res[0].Uint), res[0].Err
	}, unchanged[int])
}

func readMIGMode(r *passReader, src *metricSource, s *DeviceSnapshot, _ *fieldBatch) {
	m := readMetric(r, src, func() ([2]int, error) {
		c, p, err := r.h.MIGMode()
		return [2]int{c, p}, err
	}, unchanged[[2]int])
	s.MIGMode = Map(m, func(m [2]int) OnOff { return m[0] == 1 })
	s.MIGModePending = Map(m, func(m [2]int) OnOff { return m[1] == 1 })
}

// migFields are the groups a MIG device reports itself (with its processes,
// which are not in the table). Everything else is N/A there: NVML keeps it
// only per physical GPU.
var migFields = func() Fields {
	f := FieldProcesses
	for _, src := range metricSources {
		if src.onMIG {
			f |= src.group
		}
	}
	return f
}()

// readMetrics reads the table's metrics of the groups f.
func (r *passReader) readMetrics(s *DeviceSnapshot, f Fields) {
	b := &r.batch
	b.ask(r, f)
	for i := range metricSources {
		src := &metricSources[i]
		switch {
		case src.group&f == 0:
		case src.static:
			cached := r.d.reads.staticOf(r, src)
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
	for i := range metricSources {
		src := &metricSources[i]
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

// DeviceMetrics returns the description of every device reading, in the
// order of DeviceSnapshot's fields. The slice is the caller's.
func DeviceMetrics() []DeviceMetric { return slices.Clone(deviceMetrics) }

// LookupDeviceMetric returns the metric called name ("memory_used"), and
// whether there is one.
func LookupDeviceMetric(name string) (DeviceMetric, bool) {
	for _, m := range deviceMetrics {
		if m.Name == name {
			return m, true
		}
	}
	return DeviceMetric{}, false
}

// deviceMetrics are the metrics of the table (metrics.go), in its order.
var deviceMetrics = func() []DeviceMetric {
	var out []DeviceMetric
	for i := range metricSources {
		src := &metricSources[i]
		for _, m := range src.metrics {
			m.Group, m.MIG, m.Static = src.group, src.onMIG, src.static
			out = append(out, m)
		}
	}
	return out
}()

// readMetric makes one reading of src, unless the pass found the GPU lost
// or the device is known not to support src.
func readMetric[T, U any](r *passReader, src *metricSource, f func() (T, error), conv func(T) U) Value[U] {
	if r.lost != nil {
		return NA[U](GPULost, r.lost)
	}
	v, err := tryReading(r.d, src.opID(), f)
	if r.check(err) != nil {
		return NA[U](ReasonOf(err), err)
	}
	return Some(conv(v))
}

// op is the source's reading.
func (src *metricSource) opID() readOp { return numFixedOps + readOp(src.id) }

// static returns the reading of the static source src, made once, through
// the pass r.
func (c *deviceReads) staticOf(r *passReader, src *metricSource) *DeviceSnapshot {
	st := &c.statics[src.staticAt]
	st.once.Do(func() { src.read(r, src, &st.s, nil) })
	return &st.s
}

// ask makes the call for the field IDs of the groups f that the driver
// answers (as far as the device has seen).
func (b *fieldBatch) ask(r *passReader, f Fields) {
	d := r.d
	if r.lost != nil || d.reads.known(opFieldValues) != nil {
		return
	}
	for i := range metricSources {
		src := &metricSources[i]
		if src.group&f == 0 || len(src.fields) == 0 || (src.fieldsIf != nil && !src.fieldsIf(r)) {
			continue
		}
		for _, q := range src.fields {
			if b.n < maxBatch && d.reads.fieldKnown(q.ID) == nil {
				b.reqs[b.n] = q
				b.n++
			}
		}
	}
	if b.n == 0 {
		return
	}
	err := r.h.FieldValues(b.reqs[:b.n], b.got[:b.n])
	d.reads.note(opFieldValues, err)
	r.check(err)
	if err != nil {
		return
	}
	b.ok = true
	for i := 0; i < b.n; i++ {
		d.reads.noteField(b.reqs[i].ID, b.got[i].Err)
	}
}

// statics returns the static readings of the groups f, read once per
// Device.
func (d *Device) staticReadings(f Fields) DeviceSnapshot {
	var s DeviceSnapshot
	if d.mig != nil && f&^migFields != 0 {
		s.fillNA(f&^migFields, errNotOnMIG)
		f &= migFields
	}
	h, err := d.handle()
	if err != nil {
		s.fillNA(f, err)
		return s
	}
	r := newPassReader(d, h, d.lib.clock.Now())
	defer r.release()
	for i := range metricSources {
		if src := &metricSources[i]; src.static && src.group&f != 0 {
			cached := d.reads.staticOf(r, src)
			for _, m := range src.metrics {
				m.slot.copy(&s, cached)
			}
		}
	}
	return s
}

// nvlinkCount is the device's NVLink count, read once, through the pass r.
func nvlinkCount(r *passReader) Value[int] { return r.d.reads.staticOf(r, srcNVLinkCount).NVLinkCount }
