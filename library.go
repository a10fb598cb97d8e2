package nvgo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nvgo/nvgo/host"
	"github.com/nvgo/nvgo/internal/nverr"
	"github.com/nvgo/nvgo/internal/nvmlx"
)

// DefaultCacheTTL is how long a per-metric Device method reuses a reading
// before it asks NVML again. Snapshots never use the cache: they re-read
// every dynamic value.
const DefaultCacheTTL = time.Second

// Library is an opened NVML library: the root of every Device, GpuProcess
// and snapshot. NVML is initialised lazily on the first call that needs it,
// once; a failed initialisation is remembered and returned by every later
// call, which never reaches NVML again (after a failed nvmlInit any NVML
// call, even nvmlShutdown, kills the process).
//
// A Library is safe for concurrent use. Close it when done; the package-level
// functions use a default Library that lives as long as the process.
type Library struct {
	backend  nvmlx.Backend
	openErr  error
	cacheTTL time.Duration
	log      *slog.Logger
	clock    Clock
	hosts    *hostProcessTable

	mu       sync.Mutex
	acquired bool
	initErr  error
	closed   bool
	shut     atomic.Bool // closed, for readers that take no lock
	devices  []*Device   // by NVML index; nil until enumerated

	verOnce sync.Once
	ver     [3]Value[string]

	probes probeMemo // answers of the CUDA driver, by question
}

type options struct {
	backend  nvmlx.Backend
	cacheTTL time.Duration
	log      *slog.Logger
	clock    Clock
	hosts    host.Source
}

// Option configures Open.
type Option func(*options)

// WithCacheTTL sets how long per-metric Device methods reuse a reading
// (default DefaultCacheTTL). Zero or negative disables the cache.
func WithCacheTTL(d time.Duration) Option { return func(o *options) { o.cacheTTL = d } }

// WithLogger sets the logger for the Library's debug messages. Without it
// the Library logs nothing: whatever a caller must know (a GPU left out of a
// selection, say) is in the result, not in a log.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// discardHandler is a slog.Handler that drops every record (slog has one of
// its own only from Go 1.24).
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }

// WithClock sets the clock of the Library's time-keeping (default
// SystemClock()): the timestamps of snapshots, how long a snapshot serves
// the per-metric methods, how recent a process's utilization sample must
// be, and the ticks of its samplers (Accumulator, Collector). Tests pass a
// fake; over a fake fleet, a clock of package fakegpu/fleetclock.
func WithClock(c Clock) Option { return func(o *options) { o.clock = c } }

// WithHostSource sets where the Library reads the host processes behind
// GPU PIDs (default host.ProcFS{}, the host's procfs): a simulation passes
// its own, such as a fake fleet's (package fakegpu/fakehost).
func WithHostSource(src host.Source) Option { return func(o *options) { o.hosts = src } }

// Open returns a Library over the system's NVML (libnvidia-ml.so.1), or over
// the nvml.Interface given with WithNVML. It does not touch NVML: the first
// call that needs the driver initialises it. Open fails only when NVML cannot
// be used at all, e.g. ErrBuiltWithoutCGO.
func Open(opts ...Option) (*Library, error) {
	o := options{cacheTTL: DefaultCacheTTL}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.New(discardHandler{})
	}
	if o.clock == nil {
		o.clock = SystemClock()
	}
	fs := hostProcFS
	if o.hosts != nil {
		fs = newHostReader(o.hosts)
	}
	l := &Library{backend: o.backend, cacheTTL: o.cacheTTL, log: o.log, clock: o.clock, hosts: newHostProcessTable(fs)}
	if l.backend == nil {
		b, err := nvmlx.Default()
		if err != nil {
			return nil, err
		}
		l.backend = b
	}
	return l, nil
}

var (
	defaultOnce sync.Once
	defaultLib  *Library
	defaultErr  error
)

// Default returns the process-wide Library over the system's NVML, opening it
// on first use. It is never closed.
func Default() (*Library, error) {
	defaultOnce.Do(func() { defaultLib, defaultErr = Open() })
	return defaultLib, defaultErr
}

// ready initialises NVML on first use and reports whether it can be used.
func (l *Library) ready() error {
	if l == nil {
		return ErrClosed
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.readyLocked()
}

func (l *Library) readyLocked() error {
	switch {
	case l.closed:
		return ErrClosed
	case l.openErr != nil:
		return l.openErr
	case l.initErr != nil:
		return l.initErr
	case l.acquired:
		return nil
	}
	if err := l.backend.Acquire(); err != nil {
		l.initErr = fmt.Errorf("nvgo: cannot initialise NVML: %w", err)
		return l.initErr
	}
	l.acquired = true
	return nil
}

// Close releases NVML (shutting it down when no other Library holds it).
// Devices and processes from this Library become unusable: their readings
// are N/A with an error matching ErrClosed at once, cached ones included,
// and calls that return an error return one matching ErrClosed; static
// values read before Close (name, UUID, bus ID) stay. Close is idempotent.
func (l *Library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	l.shut.Store(true)
	l.hosts.close()
	if l.acquired {
		l.acquired = false
		l.backend.Release()
	}
	return nil
}

// Clock returns the Library's clock (WithClock): what its snapshots are
// stamped with and its samplers tick on.
func (l *Library) Clock() Clock { return l.clock }

// Available reports whether NVML can be initialised; when it cannot, the
// error says why (errors.Is ErrLibraryNotFound, ErrDriverNotLoaded, …).
func (l *Library) Available() error { return l.ready() }

// DriverVersion returns the NVIDIA driver version, e.g. "580.95.05".
func (l *Library) DriverVersion() (string, error) {
	if err := l.ready(); err != nil {
		return "", err
	}
	return l.backend.DriverVersion()
}

// NVMLVersion returns the NVML library version, e.g. "13.580.95.05".
func (l *Library) NVMLVersion() (string, error) {
	if err := l.ready(); err != nil {
		return "", err
	}
	return l.backend.NVMLVersion()
}

// CUDADriverVersion returns the newest CUDA version the driver supports, as
// nvidia-smi prints it: "12.4", or "12.4.1" when there is a patch level.
func (l *Library) CUDADriverVersion() (string, error) {
	if err := l.ready(); err != nil {
		return "", err
	}
	v, err := l.backend.CUDADriverVersion()
	if err != nil {
		return "", err
	}
	return FormatCUDAVersion(v), nil
}

// FormatCUDAVersion turns NVML's integer CUDA version (1000×major + 10×minor
// + patch, e.g. 12040) into "12.4" ("12.4.1" when the patch is not zero).
func FormatCUDAVersion(v int) string {
	major, minor, patch := v/1000, (v%1000)/10, v%10
	if patch != 0 {
		return fmt.Sprintf("%d.%d.%d", major, minor, patch)
	}
	return fmt.Sprintf("%d.%d", major, minor)
}

// DeviceCount returns the number of GPUs NVML sees.
func (l *Library) DeviceCount() (int, error) {
	devs, err := l.Devices()
	return len(devs), err
}

// Devices returns every physical GPU in NVML index order. The Device values
// are created once and reused by every later call, so their static values
// are read only once.
func (l *Library) Devices() ([]*Device, error) {
	if err := l.ready(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.devices != nil {
		return slices.Clone(l.devices), nil
	}
	n, err := l.backend.DeviceCount()
	if err != nil {
		return nil, err
	}
	devs := make([]*Device, n)
	for i := range devs {
		devs[i] = l.newDevice(i)
	}
	l.devices = devs
	return slices.Clone(devs), nil
}

// DeviceByIndex returns the GPU with NVML index i.
func (l *Library) DeviceByIndex(i int) (*Device, error) {
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	if i < 0 || i >= len(devs) {
		return nil, fmt.Errorf("nvgo: no GPU with index %d (%d GPUs): %w", i, len(devs), ErrNotFound)
	}
	return devs[i], nil
}

// DeviceByUUID returns the GPU whose UUID is uuid or starts with it, as CUDA
// accepts in CUDA_VISIBLE_DEVICES: "GPU-5f7d…" in full, or a prefix such as
// "GPU-5f7d" that matches exactly one GPU. The "GPU-" prefix is required and
// matching is case-sensitive, as in CUDA. A prefix that matches several GPUs
// gives ErrAmbiguous; none gives ErrNotFound.
//
// A "MIG-…" UUID (or prefix, or the pre-R470 "MIG-GPU-<uuid>/<gi>/<ci>")
// gives the MIG device's Device (see MIGDeviceByUUID).
func (l *Library) DeviceByUUID(uuid string) (*Device, error) {
	if strings.HasPrefix(uuid, "MIG-") {
		m, err := l.MIGDeviceByUUID(uuid)
		if err != nil {
			return nil, err
		}
		return m.Device, nil
	}
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	uuids := make([]string, len(devs))
	for i, d := range devs {
		uuids[i] = d.UUID().Or("")
	}
	i, err := matchUUIDPrefix(uuid, uuids)
	if err != nil {
		return nil, err
	}
	return devs[i], nil
}

// DeviceByBusID returns the GPU at a PCI bus ID, in any case and with a 4- or
// 8-digit domain ("0000:17:00.0", "00000000:17:00.0", "17:00.0").
func (l *Library) DeviceByBusID(busID string) (*Device, error) {
	want, err := NormalizeBusID(busID)
	if err != nil {
		return nil, err
	}
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		if b, ok := d.BusID().Get(); ok {
			if got, err := NormalizeBusID(b); err == nil && got == want {
				return d, nil
			}
		}
	}
	return nil, fmt.Errorf("nvgo: no GPU at PCI bus ID %q: %w", busID, ErrNotFound)
}

// Snapshot reads every device (and by default its processes) in one pass.
// See Library.Snapshot in snapshot.go.

// Package-level shortcuts over Default().

// Devices returns every physical GPU of the default Library.
func Devices() ([]*Device, error) {
	l, err := Default()
	if err != nil {
		return nil, err
	}
	return l.Devices()
}

// DeviceCount returns the number of GPUs of the default Library.
func DeviceCount() (int, error) {
	l, err := Default()
	if err != nil {
		return 0, err
	}
	return l.DeviceCount()
}

// DeviceByIndex returns a GPU of the default Library by NVML index.
func DeviceByIndex(i int) (*Device, error) {
	l, err := Default()
	if err != nil {
		return nil, err
	}
	return l.DeviceByIndex(i)
}

// DriverVersion returns the driver version via the default Library.
func DriverVersion() (string, error) {
	l, err := Default()
	if err != nil {
		return "", err
	}
	return l.DriverVersion()
}

// TakeSnapshot snapshots every GPU of the default Library.
func TakeSnapshot(ctx context.Context, opts ...SnapshotOption) (*Snapshot, error) {
	l, err := Default()
	if err != nil {
		return nil, err
	}
	return l.Snapshot(ctx, opts...)
}

// IsNVMLUnavailable reports whether err means there is no usable NVIDIA
// driver here (no library, driver not loaded, version mismatch, no cgo).
func IsNVMLUnavailable(err error) bool {
	return errorsIsAny(err, ErrLibraryNotFound, ErrDriverNotLoaded, ErrDriverMismatch, ErrBuiltWithoutCGO, nverr.ErrUninitialized)
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// HostProcess returns the process that holds pid now, read from the
// Library's host source (WithHostSource), as NewHostProcess reads the
// host's procfs. It returns an error wrapping ErrProcessGone when there is
// no such process. To act on a process seen earlier (a signal, say),
// compare its CreateTime with the one seen: the PID may hold another
// process now.
func (l *Library) HostProcess(pid int) (*HostProcess, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
	}
	return l.hosts.fs.process(pid)
}
