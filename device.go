package nvgo

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jellydator/ttlcache/v3"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// ErrUnifiedMemory explains N/A memory figures on a GPU that shares system
// memory (e.g. GB10 / DGX Spark): NVML reports no frame-buffer memory there,
// and nvgo says so rather than reporting host memory as GPU memory.
var ErrUnifiedMemory = errors.New("GPU uses unified (system) memory: no frame-buffer figures")

// Device is a physical GPU. It holds its NVML handle, its static values (read
// once) and a cache of dynamic ones: a metric method serves a reading for
// DefaultCacheTTL (WithCacheTTL sets another; a Snapshot always reads
// afresh and refreshes the cache). Every metric method returns a
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

	name, uuid, busID, serial lazyValue[string]
	minor                     lazyValue[int]
	cc                        lazyValue[ComputeCapability]

	reads deviceReads                              // what passes remember (readpass.go)
	cache *ttlcache.Cache[Fields, *DeviceSnapshot] // per-metric readings, by group
	// latest is the latest snapshot's reading (without processes, MIG
	// devices and vGPU instances), which the per-metric methods use while
	// it is younger than the cache TTL.
	latest atomic.Pointer[DeviceSnapshot]
	// metricsRead is set once a per-metric method was called: only then
	// do snapshots keep their reading for them.
	metricsRead atomic.Bool

	procs processState

	migMu sync.Mutex
	migs  map[int]*MigDevice // by MIG index, from the last enumeration

	virtMode lazyValue[VirtualizationMode]
	vgpus    vgpuState
}

// lazyValue is a static value read once.
type lazyValue[T any] struct {
	once sync.Once
	v    Value[T]
}

func (l *lazyValue[T]) get(read func() Value[T]) Value[T] {
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
	d.reads.prepare()
	d.procs.prepare()
	d.vgpus.prepare()
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

// readStatic reads a value once through the handle.
func readStatic[T any](d *Device, l *lazyValue[T], read func(h nvmlx.Device) (T, error)) Value[T] {
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
	return readStatic(d, &d.name, nvmlx.Device.Name)
}

// UUID returns the GPU UUID, e.g. "GPU-5f7d6c1e-…". Static.
func (d *Device) UUID() Value[string] {
	return readStatic(d, &d.uuid, nvmlx.Device.UUID)
}

// BusID returns the PCI bus ID as NVML gives it, e.g. "00000000:17:00.0". Static.
//
// A MIG device reports its parent's bus ID.
func (d *Device) BusID() Value[string] {
	if d.mig != nil {
		return d.mig.parent.BusID()
	}
	return readStatic(d, &d.busID, nvmlx.Device.BusID)
}

// Serial returns the board serial number. Static; N/A on boards without one.
func (d *Device) Serial() Value[string] {
	if d.mig != nil {
		return d.mig.parent.Serial()
	}
	return readStatic(d, &d.serial, nvmlx.Device.Serial)
}

// MinorNumber returns the minor number of /dev/nvidiaN. Static.
func (d *Device) MinorNumber() Value[int] {
	if d.mig != nil {
		return d.mig.parent.MinorNumber()
	}
	return readStatic(d, &d.minor, nvmlx.Device.Minor)
}

// CUDAComputeCapability returns the compute capability, e.g. 9.0. Static.
func (d *Device) CUDAComputeCapability() Value[ComputeCapability] {
	if d.mig != nil {
		return d.mig.parent.CUDAComputeCapability()
	}
	return readStatic(d, &d.cc, func(h nvmlx.Device) (ComputeCapability, error) {
		maj, min, err := h.CUDAComputeCapability()
		return ComputeCapability{maj, min}, err
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
