package nvgo

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jellydator/ttlcache/v3"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// ErrUnifiedMemory explains N/A memory figures on a GPU that shares system
// memory (e.g. GB10 / DGX Spark): NVML reports no frame-buffer memory there,
// and nvgo says so rather than reporting host memory as GPU memory.
var ErrUnifiedMemory = errors.New("GPU uses unified (system) memory: no frame-buffer figures")

// Device is a physical GPU. It holds its NVML handle, its static values (read
// once) and a short cache of dynamic ones. Every metric method returns a
// Value that is real or N/A with a reason; none of them panics or blocks on
// anything but NVML.
//
// A Device is safe for concurrent use. Devices come from a Library and are
// reused: the same *Device is returned for the same GPU.
type Device struct {
	lib *Library
	// index is the NVML index of the GPU, or of the parent GPU for a MIG device.
	index int
	// lookup finds the NVML handle; called once.
	lookup func() (nvmlx.Device, error)
	// mig is set on the Device of a MIG device; nil for a physical GPU.
	mig *MigDevice

	handleOnce sync.Once
	h          nvmlx.Device
	handleErr  error

	name, uuid, busID, serial lazy[string]
	minor                     lazy[int]
	cc                        lazy[ComputeCapability]
	maxClocks                 lazy[[4]Value[MHz]]
	nvlinkCount               lazy[int]

	caps  capabilities
	cache *ttlcache.Cache[Fields, *DeviceSnapshot] // per-metric readings, by group
	// latest is the latest snapshot's reading (without processes, MIG
	// devices and vGPU instances), which the per-metric methods use while
	// it is younger than the cache TTL.
	latest atomic.Pointer[DeviceSnapshot]
	// metricsRead is set once a per-metric method was called: only then
	// do snapshots keep their reading for them.
	metricsRead atomic.Bool

	procs processState

	// The byte and data counters of the previous reading, for rates.
	pcieTX, pcieRX, nvlinkTX, nvlinkRX counterRate

	migMu sync.Mutex
	migs  map[int]*MigDevice // by MIG index, from the last enumeration

	virtMode lazy[VirtualizationMode]
	vgpus    vgpuState
}

// lazy is a static value read once.
type lazy[T any] struct {
	once sync.Once
	v    Value[T]
}

func (l *lazy[T]) get(read func() Value[T]) Value[T] {
	l.once.Do(func() { l.v = read() })
	return l.v
}

func (l *Library) newDevice(i int) *Device {
	return l.newDeviceWith(i, func() (nvmlx.Device, error) { return l.backend.DeviceByIndex(i) })
}

func (l *Library) newDeviceWith(i int, lookup func() (nvmlx.Device, error)) *Device {
	d := &Device{lib: l, index: i, lookup: lookup}
	if l.cacheTTL > 0 {
		loader := ttlcache.LoaderFunc[Fields, *DeviceSnapshot](
			func(c *ttlcache.Cache[Fields, *DeviceSnapshot], f Fields) *ttlcache.Item[Fields, *DeviceSnapshot] {
				s := d.read(f, nil)
				return c.Set(f, &s, ttlcache.DefaultTTL)
			})
		d.cache = ttlcache.New(
			ttlcache.WithTTL[Fields, *DeviceSnapshot](l.cacheTTL),
			// Without this every hit extends the TTL and a value read often never refreshes.
			ttlcache.WithDisableTouchOnHit[Fields, *DeviceSnapshot](),
			ttlcache.WithLoader[Fields, *DeviceSnapshot](ttlcache.NewSuppressedLoader[Fields, *DeviceSnapshot](loader, nil)),
		)
	}
	d.procs.init()
	d.vgpus.init()
	return d
}

// handle returns the NVML handle, looked up once. A GPU that is lost at
// lookup gives a Device whose every metric is N/A with reason GPULost.
func (d *Device) handle() (nvmlx.Device, error) {
	if err := d.lib.ready(); err != nil {
		return nil, err
	}
	d.handleOnce.Do(func() {
		d.h, d.handleErr = d.lookup()
		if d.handleErr != nil {
			d.handleErr = fmt.Errorf("%s: %w", d.label(), d.handleErr)
		}
	})
	return d.h, d.handleErr
}

// static reads a value once through the handle.
func static[T any](d *Device, l *lazy[T], read func(h nvmlx.Device) (T, error)) Value[T] {
	return l.get(func() Value[T] {
		h, err := d.handle()
		if err != nil {
			return NA[T](ReasonOf(err), err)
		}
		return FromErr(read(h))
	})
}

// Index returns the NVML index of the GPU; for a MIG device, the index of
// its parent GPU (MIGIndex on its MigDevice tells MIG devices apart).
func (d *Device) Index() int { return d.index }

// String returns "GPU 0 (NVIDIA H100 80GB HBM3)", or for a MIG device
// "MIG 0/1 (1g.10gb)".
func (d *Device) String() string {
	if d.mig != nil {
		return d.mig.String()
	}
	return fmt.Sprintf("GPU %d (%s)", d.index, d.Name())
}

// label is the short name used in errors: "GPU 0" or "MIG 0/1".
func (d *Device) label() string {
	if d.mig != nil {
		return fmt.Sprintf("MIG %d/%d", d.index, d.mig.slot)
	}
	return fmt.Sprintf("GPU %d", d.index)
}

// Name returns the product name, e.g. "NVIDIA H100 80GB HBM3". Static.
func (d *Device) Name() Value[string] {
	return static(d, &d.name, nvmlx.Device.Name)
}

// UUID returns the GPU UUID, e.g. "GPU-5f7d6c1e-…". Static.
func (d *Device) UUID() Value[string] {
	return static(d, &d.uuid, nvmlx.Device.UUID)
}

// BusID returns the PCI bus ID as NVML gives it, e.g. "00000000:17:00.0". Static.
//
// A MIG device reports its parent's bus ID.
func (d *Device) BusID() Value[string] {
	if d.mig != nil {
		return d.mig.parent.BusID()
	}
	return static(d, &d.busID, nvmlx.Device.BusID)
}

// Serial returns the board serial number. Static; N/A on boards without one.
func (d *Device) Serial() Value[string] {
	if d.mig != nil {
		return d.mig.parent.Serial()
	}
	return static(d, &d.serial, nvmlx.Device.Serial)
}

// MinorNumber returns the minor number of /dev/nvidiaN. Static.
func (d *Device) MinorNumber() Value[int] {
	if d.mig != nil {
		return d.mig.parent.MinorNumber()
	}
	return static(d, &d.minor, nvmlx.Device.Minor)
}

// CUDAComputeCapability returns the compute capability, e.g. 9.0. Static.
func (d *Device) CUDAComputeCapability() Value[ComputeCapability] {
	if d.mig != nil {
		return d.mig.parent.CUDAComputeCapability()
	}
	return static(d, &d.cc, func(h nvmlx.Device) (ComputeCapability, error) {
		maj, min, err := h.CUDAComputeCapability()
		return ComputeCapability{maj, min}, err
	})
}

func (d *Device) maxClock(c nvmlx.Clock) Value[MHz] {
	if d.mig != nil {
		return NA[MHz](NotSupported, errNotOnMIG)
	}
	return d.maxClocks.get(func() Value[[4]Value[MHz]] {
		var out [4]Value[MHz]
		h, err := d.handle()
		for i := range out {
			if err != nil {
				out[i] = NA[MHz](ReasonOf(err), err)
				continue
			}
			v, e := h.MaxClock(nvmlx.Clock(i))
			out[i] = FromErr(MHz(v), e)
		}
		return Value[[4]Value[MHz]]{v: out, ok: true}
	}).v[c]
}

// MaxGraphicsClock returns the maximum graphics clock. Static.
func (d *Device) MaxGraphicsClock() Value[MHz] { return d.maxClock(nvmlx.ClockGraphics) }

// MaxSMClock returns the maximum SM clock. Static.
func (d *Device) MaxSMClock() Value[MHz] { return d.maxClock(nvmlx.ClockSM) }

// MaxMemoryClock returns the maximum memory clock. Static.
func (d *Device) MaxMemoryClock() Value[MHz] { return d.maxClock(nvmlx.ClockMemory) }

// MaxVideoClock returns the maximum video clock. Static.
func (d *Device) MaxVideoClock() Value[MHz] { return d.maxClock(nvmlx.ClockVideo) }

// NVLinkLinkCount returns the number of NVLink links (0 without NVLink). Static.
func (d *Device) NVLinkLinkCount() Value[int] {
	if d.mig != nil {
		return NA[int](NotSupported, errNotOnMIG)
	}
	return static(d, &d.nvlinkCount, func(h nvmlx.Device) (int, error) {
		r := make([]nvmlx.FieldResult, 1)
		if err := h.FieldValues([]nvmlx.FieldRequest{{ID: nvmlx.FieldNVLinkLinkCount}}, r); err != nil {
			return 0, err
		}
		if r[0].Err != nil {
			return 0, r[0].Err
		}
		return int(r[0].Uint), nil
	})
}

// cached returns a reading of the groups f, no older than the Library's
// cache TTL: the latest snapshot's if it read them, else a reading of f
// alone. Snapshots bypass it.
func (d *Device) cached(f Fields) *DeviceSnapshot {
	if d.lib.shut.Load() {
		// Nothing read before Close is served after it.
		s := DeviceSnapshot{Timestamp: d.lib.clock.Now(), Index: d.index, Fields: f}
		s.setErr(ErrClosed)
		s.fillNA(f, ErrClosed)
		return &s
	}
	if d.cache == nil {
		s := d.read(f, nil)
		return &s
	}
	d.metricsRead.Store(true)
	if l := d.latest.Load(); l != nil && l.Fields&f == f && d.lib.clock.Now().Sub(l.Timestamp) < d.lib.cacheTTL {
		return l
	}
	return d.cache.Get(f).Value()
}

// Memory metrics. N/A on a unified-memory GPU (see UnifiedMemory).

// MemoryTotal returns the frame-buffer size in bytes.
func (d *Device) MemoryTotal() Value[Bytes] { return d.cached(FieldMemory).MemoryTotal }

// MemoryUsed returns the allocated frame buffer in bytes. With drivers from
// R510 it excludes the memory the driver reserves (MemoryReserved), as
// nvidia-smi shows it; older drivers count reserved memory as used.
func (d *Device) MemoryUsed() Value[Bytes] { return d.cached(FieldMemory).MemoryUsed }

// MemoryFree returns the free frame buffer in bytes.
func (d *Device) MemoryFree() Value[Bytes] { return d.cached(FieldMemory).MemoryFree }

// MemoryReserved returns the memory the driver reserves, in bytes (N/A on drivers before R510).
func (d *Device) MemoryReserved() Value[Bytes] { return d.cached(FieldMemory).MemoryReserved }

// MemoryPercent returns used/total in percent, rounded to one decimal.
func (d *Device) MemoryPercent() Value[Percent] { return d.cached(FieldMemory).MemoryPercent }

// UnifiedMemory reports whether the GPU has no frame buffer of its own (NVML
// reports memory as not supported or with a total of 0).
func (d *Device) UnifiedMemory() bool { return d.cached(FieldMemory).UnifiedMemory }

// BAR1Total returns the BAR1 aperture size in bytes.
func (d *Device) BAR1Total() Value[Bytes] { return d.cached(FieldBAR1).BAR1Total }

// BAR1Used returns the used BAR1 memory in bytes.
func (d *Device) BAR1Used() Value[Bytes] { return d.cached(FieldBAR1).BAR1Used }

// BAR1Free returns the free BAR1 memory in bytes.
func (d *Device) BAR1Free() Value[Bytes] { return d.cached(FieldBAR1).BAR1Free }

// GPUUtilization returns the percent of time a kernel ran over the driver's last sample period.
func (d *Device) GPUUtilization() Value[Percent] { return d.cached(FieldUtilization).GPUUtilization }

// MemoryUtilization returns the percent of time device memory was read or written.
func (d *Device) MemoryUtilization() Value[Percent] {
	return d.cached(FieldUtilization).MemoryUtilization
}

// EncoderUtilization returns the video encoder utilization in percent.
func (d *Device) EncoderUtilization() Value[Percent] { return d.cached(FieldCodec).EncoderUtilization }

// DecoderUtilization returns the video decoder utilization in percent.
func (d *Device) DecoderUtilization() Value[Percent] { return d.cached(FieldCodec).DecoderUtilization }

// GraphicsClock returns the current graphics clock.
func (d *Device) GraphicsClock() Value[MHz] { return d.cached(FieldClocks).GraphicsClock }

// SMClock returns the current SM clock.
func (d *Device) SMClock() Value[MHz] { return d.cached(FieldClocks).SMClock }

// MemoryClock returns the current memory clock.
func (d *Device) MemoryClock() Value[MHz] { return d.cached(FieldClocks).MemoryClock }

// VideoClock returns the current video clock.
func (d *Device) VideoClock() Value[MHz] { return d.cached(FieldClocks).VideoClock }

// FanSpeed returns the fan speed in percent of its maximum (it can exceed
// 100). N/A on boards without fans (SXM modules).
func (d *Device) FanSpeed() Value[Percent] { return d.cached(FieldFan).FanSpeed }

// Temperature returns the GPU core temperature.
func (d *Device) Temperature() Value[Celsius] { return d.cached(FieldTemperature).Temperature }

// PowerUsage returns the board power draw, as nvidia-smi's power.draw: the
// one-second average on Ampere and newer (except A100), else instantaneous.
func (d *Device) PowerUsage() Value[MilliWatts] { return d.cached(FieldPower).PowerUsage }

// PowerLimit returns the power management limit.
func (d *Device) PowerLimit() Value[MilliWatts] { return d.cached(FieldPower).PowerLimit }

// TotalEnergyConsumption returns the energy the GPU used since the driver
// loaded (Volta and later), a counter.
func (d *Device) TotalEnergyConsumption() Value[MilliJoules] {
	return d.cached(FieldPower).TotalEnergy
}

// PowerStatus returns "66W / 250W".
func (d *Device) PowerStatus() string {
	s := d.cached(FieldPower)
	return PowerStatus(s.PowerUsage, s.PowerLimit)
}

// PCIeTXThroughput returns the PCIe transmit rate over the driver's 20 ms window.
func (d *Device) PCIeTXThroughput() Value[KiBPerSecond] { return d.cached(FieldPCIe).PCIeTX }

// PCIeRXThroughput returns the PCIe receive rate over the driver's 20 ms window.
func (d *Device) PCIeRXThroughput() Value[KiBPerSecond] { return d.cached(FieldPCIe).PCIeRX }

// NVLinkTXThroughput returns the NVLink transmit rate summed over links,
// averaged since the previous NVLink reading of this Device (N/A on the first).
func (d *Device) NVLinkTXThroughput() Value[KiBPerSecond] { return d.cached(FieldNVLink).NVLinkTX }

// NVLinkRXThroughput returns the NVLink receive rate summed over links, like NVLinkTXThroughput.
func (d *Device) NVLinkRXThroughput() Value[KiBPerSecond] { return d.cached(FieldNVLink).NVLinkRX }

// TotalVolatileUncorrectedECCErrors returns the uncorrected ECC errors since the driver loaded. N/A with ECC off.
func (d *Device) TotalVolatileUncorrectedECCErrors() Value[uint64] {
	return d.cached(FieldECC).VolatileUncorrectedECC
}

// PerformanceState returns the P-state (P0 fastest).
func (d *Device) PerformanceState() Value[PState] {
	return d.cached(FieldPerformanceState).PerformanceState
}

// DisplayActive reports whether a display is initialised on the GPU (e.g. an X server).
func (d *Device) DisplayActive() Value[OnOff] { return d.cached(FieldDisplay).DisplayActive }

// DisplayMode reports whether a physical display is connected.
func (d *Device) DisplayMode() Value[OnOff] { return d.cached(FieldDisplay).DisplayMode }

// PersistenceMode reports whether persistence mode is on.
func (d *Device) PersistenceMode() Value[OnOff] {
	return d.cached(FieldPersistenceMode).PersistenceMode
}

// ComputeMode returns the compute mode.
func (d *Device) ComputeMode() Value[ComputeMode] { return d.cached(FieldComputeMode).ComputeMode }

// MIGMode reports whether MIG is enabled now. N/A on GPUs without MIG.
func (d *Device) MIGMode() Value[OnOff] { return d.cached(FieldMIGMode).MIGMode }

// MIGModePending reports the MIG mode that applies after the next GPU reset.
func (d *Device) MIGModePending() Value[OnOff] { return d.cached(FieldMIGMode).MIGModePending }

// Snapshot reads the groups f of this device now, bypassing the cache, and
// returns plain data. With FieldProcesses it includes the processes.
func (d *Device) Snapshot(f Fields) DeviceSnapshot {
	s := d.read(f, nil)
	d.remember(f, &s)
	return s
}

// remember keeps a snapshot's reading for the per-metric methods.
func (d *Device) remember(f Fields, s *DeviceSnapshot) {
	if d.cache == nil || !d.metricsRead.Load() || f&^(FieldProcesses|FieldMIGDevices|FieldVgpuInstances) == 0 {
		return
	}
	c := *s
	c.Processes, c.MIGDevices, c.VgpuInstances = nil, nil, nil
	d.latest.Store(&c)
}

// op identifies one NVML reading whose "not supported" answer is remembered.
type op uint8

const (
	opMemory op = iota
	opBAR1
	opUtilization
	opEncoder
	opDecoder
	opClockGraphics
	opClockSM
	opClockMemory
	opClockVideo
	opFan
	opTemperature
	opPowerUsage
	opPowerLimit
	opPCIeTX
	opPCIeRX
	opDisplayActive
	opDisplayMode
	opPersistence
	opPState
	opComputeMode
	opECC
	opMIGMode
	opFieldValues
	opMPS
	opVgpu
	numOps
)

// capabilities remembers which readings the GPU does not support: NVML's
// NOT_SUPPORTED (and a function missing from the driver) is a permanent
// property of a GPU and driver, so a snapshot does not pay for it again.
type capabilities struct {
	unsupported [numOps]atomic.Pointer[error]
	mu          sync.Mutex                       // serialises noteField's copies
	fields      atomic.Pointer[map[uint32]error] // field IDs the driver does not answer; copied on write
}

func (c *capabilities) known(o op) error {
	if e := c.unsupported[o].Load(); e != nil {
		return *e
	}
	return nil
}

func (c *capabilities) note(o op, err error) {
	if err != nil && errors.Is(err, ErrNotSupported) {
		e := err // a copy, so that err itself does not move to the heap
		c.unsupported[o].Store(&e)
	}
}

// fieldKnown returns why a field ID is known not to be answered, or nil.
func (c *capabilities) fieldKnown(id uint32) error {
	if m := c.fields.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// noteField remembers a field ID the driver does not answer: NOT_SUPPORTED
// on this GPU, or INVALID_ARGUMENT, which is how drivers older than the ID
// answer it.
func (c *capabilities) noteField(id uint32, err error) {
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

// try runs an NVML reading unless it is known to be unsupported.
func try[T any](d *Device, o op, f func() (T, error)) (T, error) {
	if err := d.caps.known(o); err != nil {
		var zero T
		return zero, err
	}
	v, err := f()
	d.caps.note(o, err)
	return v, err
}

// reader carries one pass over one device: after the GPU is found lost, no
// further NVML call is made in this pass.
type reader struct {
	d     *Device
	h     nvmlx.Device
	now   time.Time // the pass's timestamp; zero: read the clock
	lost  error
	batch fieldBatch // the pass's batched field values
}

// readers are the readers of passes: one holds a pass's field values.
var readers = sync.Pool{New: func() any { return new(reader) }}

// release gives a pooled reader back.
func (r *reader) release() {
	r.d, r.h, r.now, r.lost = nil, nil, time.Time{}, nil
	r.batch.n, r.batch.ok = 0, false
	readers.Put(r)
}

func (r *reader) check(err error) error {
	if err != nil && r.lost == nil && errors.Is(err, ErrGPULost) {
		r.lost = err
	}
	return err
}

func readMetric[T, U any](r *reader, o op, f func() (T, error), conv func(T) U) Value[U] {
	if r.lost != nil {
		return NA[U](GPULost, r.lost)
	}
	v, err := try(r.d, o, f)
	if r.check(err) != nil {
		return NA[U](ReasonOf(err), err)
	}
	return Some(conv(v))
}

func pct(v uint32) Percent { return Percent(v) }
func onoff(v bool) OnOff   { return OnOff(v) }

// read makes one pass over the groups f. It never fails as a whole: what
// cannot be read is N/A with its reason, and s.Err says why the device as a
// whole could not be read (e.g. ErrGPULost).
func (d *Device) read(f Fields, hosts *hostMemo) DeviceSnapshot {
	var s DeviceSnapshot
	d.readInto(&s, f, hosts)
	return s
}

// readInto is read into *dst (of a Snapshot, say), which it overwrites.
func (d *Device) readInto(dst *DeviceSnapshot, f Fields, hosts *hostMemo) {
	if hosts == nil {
		hosts = newHostMemo(d.lib.clock.Now())
	}
	*dst = DeviceSnapshot{Timestamp: hosts.stamp, Index: d.index, Fields: f}
	s := dst
	s.UUID = d.UUID().Or("")
	s.Name = d.Name()
	s.BusID = d.BusID()
	s.Serial = d.Serial()
	s.MinorNumber = d.MinorNumber()
	s.CUDAComputeCapability = d.CUDAComputeCapability()

	if d.mig != nil {
		d.mig.describe(s)
		// What NVML keeps only per GPU is N/A here, without asking.
		s.fillNA(f&^migFields, errNotOnMIG)
		f &= migFields
	}

	h, err := d.handle()
	if err != nil {
		s.setErr(err)
		s.fillNA(f, err)
		return
	}
	r := readers.Get().(*reader)
	defer r.release()
	r.d, r.h, r.now = d, h, hosts.stamp
	r.readMetrics(s, f)
	if f&FieldMIGDevices != 0 && d.mig == nil {
		d.readMIG(r, s, hosts)
	}
	if f&FieldProcesses != 0 && s.MIGDevices == nil {
		if r.lost != nil {
			s.ProcessesErr = r.lost
		} else {
			s.Processes, s.ProcessesErr = d.readProcesses(r, s.MemoryTotal, hosts)
		}
		if s.ProcessesErr != nil {
			s.ProcessesError = s.ProcessesErr.Error()
		}
	}
	if f&FieldVgpuInstances != 0 && d.mig == nil {
		d.readVgpus(r, s)
	}
	if r.lost != nil {
		s.setErr(r.lost)
	}
}

func (r *reader) memory(s *DeviceSnapshot) {
	m := memoryOf(readMetric(r, opMemory, r.h.Memory, func(m nvmlx.Memory) nvmlx.Memory { return m }))
	s.MemoryTotal, s.MemoryUsed, s.MemoryFree, s.MemoryReserved = m.total, m.used, m.free, m.reserved
	s.MemoryPercent, s.UnifiedMemory = m.percent, m.unified
}

// memoryFigures are the frame-buffer figures of one memory reading.
type memoryFigures struct {
	total, used, free, reserved Value[Bytes]
	percent                     Value[Percent]
	unified                     bool
}

// memoryOf is the one rule for a memory reading (Device and Accumulator
// alike): a GPU that answers NOT_SUPPORTED, or a total of 0, shares system
// memory, and its figures are N/A (ErrUnifiedMemory), never 0 bytes.
func memoryOf(m Value[nvmlx.Memory]) memoryFigures {
	v, ok := m.Get()
	if !ok && m.Reason() != NotSupported || ok && v.Total != 0 {
		f := memoryFigures{
			total:    Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Total) }),
			used:     Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Used) }),
			free:     Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Free) }),
			reserved: Map(m, func(m nvmlx.Memory) Bytes { return Bytes(m.Reserved) }),
			percent:  Map(m, func(m nvmlx.Memory) Percent { return percentOf(m.Used, m.Total) }),
		}
		if ok && !v.HasReserved {
			f.reserved = NA[Bytes](NotSupported, nil)
		}
		return f
	}
	na := NA[Bytes](NotSupported, ErrUnifiedMemory)
	return memoryFigures{total: na, used: na, free: na, reserved: na, percent: NA[Percent](NotSupported, ErrUnifiedMemory), unified: true}
}

// percentOf returns part/whole in percent rounded to one decimal, as nvitop does.
func percentOf(part, whole uint64) Percent {
	if whole == 0 {
		return 0
	}
	return Percent(math.Round(float64(part)/float64(whole)*1000) / 10)
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}
