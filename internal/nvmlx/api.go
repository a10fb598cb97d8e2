// Package nvmlx is nvgo's one guarded door to NVML.
//
// Every NVML call nvgo makes passes through this package, which knows whether
// Init succeeded, which symbols the installed driver exports and how to turn a
// return code into a typed error (package nverr). Two traps of go-nvml kill the
// whole process with "symbol lookup error" and cannot be recovered from: any
// call after a failed Init (even Shutdown), and a call of a symbol the driver
// lacks. The Backend makes both impossible: a failed Init is remembered and no
// later call reaches NVML, and each symbol is probed once with
// Extensions().LookupSymbol right after Init.
//
// This file is pure Go so that the public package compiles with CGO_ENABLED=0;
// the implementation over go-nvml lives in files built only with cgo.
package nvmlx

// Backend is an opened NVML library. All methods are safe for concurrent use.
type Backend interface {
	// Acquire initialises NVML on first use and takes a reference. A failed
	// Init is remembered and returned by every later Acquire without
	// calling NVML again.
	Acquire() error
	// Release drops a reference; the last one shuts NVML down, and only if
	// Init succeeded.
	Release()
	// HasSymbol reports whether the driver exports name (false before Init).
	HasSymbol(name string) bool

	DriverVersion() (string, error)
	NVMLVersion() (string, error)
	// CUDADriverVersion is the CUDA version the driver supports, e.g. 12040.
	CUDADriverVersion() (int, error)
	DeviceCount() (int, error)
	DeviceByIndex(i int) (Device, error)
	DeviceByUUID(uuid string) (Device, error)
	DeviceByBusID(busID string) (Device, error)
}

// Clock names one of the GPU's clock domains.
type Clock int

// Clock domains, in NVML's order.
const (
	ClockGraphics Clock = iota
	ClockSM
	ClockMemory
	ClockVideo
)

// Memory is the frame-buffer memory of a device, in bytes.
type Memory struct {
	Total, Used, Free, Reserved uint64
	// HasReserved is false when the driver only offers the v1 call, which
	// counts reserved memory as used without reporting it.
	HasReserved bool
}

// BAR1 is the BAR1 aperture of a device, in bytes.
type BAR1 struct{ Total, Used, Free uint64 }

// ProcessInfo is one entry of a running-process list.
type ProcessInfo struct {
	PID uint32
	// UsedMemory in bytes; NotAvailable when the driver has no value.
	UsedMemory        uint64
	GPUInstanceID     uint32
	ComputeInstanceID uint32
}

// NotAvailable is NVML's "value not available" for 64-bit quantities.
const NotAvailable = ^uint64(0)

// NoInstance is NVML's "not a MIG instance" for GPU/compute instance IDs.
const NoInstance = ^uint32(0)

// ProcessSample is one per-process utilization sample (percent).
type ProcessSample struct {
	PID                  uint32
	Timestamp            uint64 // CPU time in microseconds
	SM, Memory, Enc, Dec uint32
}

// FieldRequest names one NVML field value (nvmlFieldValue_t.fieldId/scopeId).
type FieldRequest struct {
	ID, Scope uint32
}

// FieldResult is one answered field value.
type FieldResult struct {
	Err       error // nil when the value is valid
	Timestamp int64 // microseconds
	Float     float64
	Uint      uint64
	Int       int64
	Kind      FieldKind
}

// FieldKind says which member of FieldResult holds the value.
type FieldKind uint8

// Kinds of field value.
const (
	FieldUint FieldKind = iota
	FieldInt
	FieldFloat
)

// AsFloat returns the value as a float64 whatever its kind.
func (r FieldResult) AsFloat() float64 {
	switch r.Kind {
	case FieldFloat:
		return r.Float
	case FieldInt:
		return float64(r.Int)
	}
	return float64(r.Uint)
}

// NVML field IDs nvgo uses (nvml.h NVML_FI_DEV_*).
const (
	FieldECCDBEVolatileTotal uint32 = 4
	FieldMemoryTemperature   uint32 = 82
	FieldTotalEnergy         uint32 = 83
	FieldNVLinkLinkCount     uint32 = 91
	FieldNVLinkThroughputTX  uint32 = 138
	FieldNVLinkThroughputRX  uint32 = 139
	FieldPowerAverage        uint32 = 185
	FieldPowerInstant        uint32 = 186
	FieldPowerCurrentLimit   uint32 = 190
	FieldPCIeCountTXBytes    uint32 = 197
	FieldPCIeCountRXBytes    uint32 = 198
	ScopeAll                 uint32 = ^uint32(0)
)

// Device is a GPU handle. Every method returns an error from package nverr on
// failure and never reaches NVML once the Backend is released.
type Device interface {
	Name() (string, error)
	UUID() (string, error)
	BusID() (string, error)
	Serial() (string, error)
	Minor() (int, error)
	Index() (int, error)
	CUDAComputeCapability() (major, minor int, err error)

	Memory() (Memory, error)
	BAR1() (BAR1, error)
	Utilization() (gpu, memory uint32, err error)
	Encoder() (uint32, error)
	Decoder() (uint32, error)
	Clock(c Clock) (uint32, error)
	MaxClock(c Clock) (uint32, error)
	FanSpeed() (uint32, error)
	Temperature() (uint32, error)
	PowerUsage() (uint32, error)
	PowerLimit() (uint32, error)
	// PCIeThroughput is in KiB/s over the driver's 20 ms window.
	PCIeThroughput(tx bool) (uint32, error)
	DisplayActive() (bool, error)
	DisplayMode() (bool, error)
	PersistenceMode() (bool, error)
	// PerformanceState is 0 (P0, fastest) to 15, or 32 when unknown.
	PerformanceState() (int, error)
	// ComputeMode is NVML's nvmlComputeMode_t.
	ComputeMode() (int, error)
	VolatileUncorrectedECC() (uint64, error)
	// Number reads one unsigned number through the function n names;
	// where the driver lacks it, the error is nverr.ErrFunctionMissing.
	Number(n Number) (uint32, error)
	MIGMode() (current, pending int, err error)
	// FieldValues reads many values in one call into out (as long as reqs);
	// per-value failures are in each FieldResult, and the error is for the
	// call as a whole.
	FieldValues(reqs []FieldRequest, out []FieldResult) error
	ComputeProcesses() ([]ProcessInfo, error)
	GraphicsProcesses() ([]ProcessInfo, error)
	// MPSProcesses lists the clients of an MPS server on the device.
	MPSProcesses() ([]ProcessInfo, error)
	// ProcessUtilization returns the samples newer than lastSeen (µs). No
	// newer sample is not an error: it returns an empty slice.
	ProcessUtilization(lastSeen uint64) ([]ProcessSample, error)

	// Samples returns the driver's buffered samples of kind newer than
	// lastSeen (µs); none newer is an empty slice, not an error.
	Samples(kind SampleKind, lastSeen uint64) ([]Sample, error)

	// MaxMIGDeviceCount is the number of MIG device slots (0 with MIG off).
	MaxMIGDeviceCount() (int, error)
	// MIGDeviceByIndex returns the MIG device in slot i; an empty slot is
	// nverr.ErrNotFound (slots can have gaps).
	MIGDeviceByIndex(i int) (Device, error)
	// IsMIGDevice reports whether this handle is a MIG device.
	IsMIGDevice() (bool, error)
	// MIGParent returns the GPU a MIG device belongs to.
	MIGParent() (Device, error)
	// GPUInstanceID and ComputeInstanceID identify a MIG device on its parent.
	GPUInstanceID() (int, error)
	ComputeInstanceID() (int, error)
	// MIGAttributes describes a MIG device's share of its parent.
	MIGAttributes() (MIGAttributes, error)

	// AccountingMode reports whether per-process accounting is on.
	AccountingMode() (bool, error)
	// SetAccountingMode turns accounting on or off (root only; turning it
	// off clears every record).
	SetAccountingMode(on bool) error
	// AccountingPIDs lists the processes, running or ended, that have a
	// record; nverr.ErrNotSupported while accounting is off.
	AccountingPIDs() ([]uint32, error)
	// AccountingStats returns the latest record of pid: nverr.ErrNotFound
	// when there is none, nverr.ErrNotSupported while accounting is off.
	AccountingStats(pid uint32) (AccountingStats, error)
	// AccountingBufferSize is how many records the driver's circular
	// buffer holds.
	AccountingBufferSize() (int, error)

	VgpuDevice
}

// Number names an NVML function that answers one unsigned 32-bit number of
// a device and takes nothing else, by its symbol, e.g.
// "nvmlDeviceGetEnforcedPowerLimit". The backend knows a fixed set of them
// (numbers.go); another answers nverr.ErrNotSupported.
type Number string

// AccountingStats is one process's accounting record (nvmlAccountingStats_t).
// The utilizations are averages over the process's accounted lifetime.
type AccountingStats struct {
	GPUUtilization, MemoryUtilization uint32 // percent
	// MaxMemoryUsage in bytes; NotAvailable when the driver has no value.
	MaxMemoryUsage uint64
	// Time is how long the process ran, in ms; 0 while it runs.
	Time uint64
	// StartTime is when the process started, in µs since the Unix epoch.
	StartTime uint64
	IsRunning bool
}

// SampleKind names one of the driver's sample buffers (nvmlSamplingType_t).
type SampleKind int

// Sample buffers nvgo reads.
const (
	SampleGPUUtilization    SampleKind = 1
	SampleMemoryUtilization SampleKind = 2
)

// Sample is one buffered sample: a driver timestamp (µs) and a value.
type Sample struct {
	Timestamp uint64
	Value     float64
}

// MIGAttributes is a MIG device's share of its GPU (nvmlDeviceAttributes_t).
type MIGAttributes struct {
	MultiprocessorCount       uint32
	SharedCopyEngineCount     uint32
	SharedDecoderCount        uint32
	SharedEncoderCount        uint32
	SharedJPEGCount           uint32
	SharedOFACount            uint32
	GPUInstanceSliceCount     uint32
	ComputeInstanceSliceCount uint32
	MemorySizeMiB             uint64
}

// Virtualization modes of a GPU (nvmlGpuVirtualizationMode_t).
const (
	VirtualizationNone        = 0 // bare metal
	VirtualizationPassthrough = 1 // passed through to a VM
	VirtualizationVGPU        = 2 // a vGPU, seen from inside a VM
	VirtualizationHostVGPU    = 3 // a vGPU host: the GPU is shared by VMs
	VirtualizationHostVSGA    = 4 // a vSGA host
)

// VgpuDevice is the vGPU-host part of a physical GPU's handle.
type VgpuDevice interface {
	// VirtualizationMode is one of the Virtualization… constants.
	VirtualizationMode() (int, error)
	// ActiveVgpus lists the vGPU instances running on the GPU.
	ActiveVgpus() ([]VgpuInstance, error)
	// VgpuUtilization returns, per vGPU instance, the samples newer than
	// lastSeen (µs); none newer is an empty slice, not an error.
	VgpuUtilization(lastSeen uint64) ([]VgpuSample, error)
	// VgpuProcessUtilization returns the samples of processes inside the
	// VMs newer than lastSeen (µs); none newer is an empty slice.
	VgpuProcessUtilization(lastSeen uint64) ([]VgpuProcessSample, error)
}

// VgpuSample is one utilization sample of a vGPU instance (percent).
type VgpuSample struct {
	Instance                          uint32 // the instance's ID
	Timestamp                         uint64 // CPU time in microseconds
	SM, Framebuffer, Encoder, Decoder uint32
}

// VgpuProcessSample is one utilization sample of a process inside a VM.
type VgpuProcessSample struct {
	Instance                     uint32 // the vGPU instance the process runs on
	PID                          uint32 // in the guest
	Name                         string
	Timestamp                    uint64 // CPU time in microseconds
	SM, Memory, Encoder, Decoder uint32
}

// VgpuInstance is a vGPU instance handle. Every method returns an error from
// package nverr on failure; a destroyed instance answers nverr.ErrNotFound
// (or ErrInvalidArgument, on some drivers).
type VgpuInstance interface {
	// ID is the instance's nvmlVgpuInstance_t value, the "vGPU ID" of
	// nvidia-smi; utilization samples name instances by it. ok is false for
	// a handle whose value nvgo cannot read.
	ID() (id uint32, ok bool)
	UUID() (string, error)
	// VMID is the ID of the VM the instance is attached to, and whether it
	// is a domain ID (false: a UUID).
	VMID() (id string, domain bool, err error)
	VMDriverVersion() (string, error)
	Type() (VgpuType, error)
	// FBUsage is the framebuffer memory in use, in bytes.
	FBUsage() (uint64, error)
	FrameRateLimit() (uint32, error)
	EncoderCapacity() (int, error)
	ECCMode() (bool, error)
	// GPUInstanceID is the MIG GPU instance backing the vGPU, or NoInstance.
	GPUInstanceID() (uint32, error)
	PlacementID() (uint32, error)
	License() (VgpuLicense, error)

	AccountingMode() (bool, error)
	AccountingPIDs() ([]uint32, error)
	AccountingStats(pid uint32) (AccountingStats, error)
	ClearAccountingPIDs() error
}

// VgpuType is a vGPU type (profile), e.g. "NVIDIA H100-20C".
type VgpuType struct {
	ID          uint32
	HasID       bool
	Name        string
	Class       string // "Compute", "Quadro", "NVS", …; empty when unknown
	Framebuffer uint64 // bytes; 0 when unknown
}

// VgpuLicense is nvmlVgpuLicenseInfo_t.
type VgpuLicense struct {
	Licensed bool
	// State is nvmlGridLicenseState_t (0 unknown … 5 licensed).
	State uint32
	// ExpiryStatus is NVML_GRID_LICENSE_EXPIRY_*: 0 not available,
	// 1 invalid, 2 valid, 3 not applicable, 4 permanent.
	ExpiryStatus               uint8
	Year                       uint32
	Month, Day, Hour, Min, Sec uint16
}

// License expiry statuses (NVML_GRID_LICENSE_EXPIRY_*).
const (
	LicenseExpiryNotAvailable  = 0
	LicenseExpiryInvalid       = 1
	LicenseExpiryValid         = 2
	LicenseExpiryNotApplicable = 3
	LicenseExpiryPermanent     = 4
)

// Stamp returns the sample's driver timestamp (µs).
func (s Sample) Stamp() uint64 { return s.Timestamp }

// Stamp returns the sample's driver timestamp (µs).
func (s ProcessSample) Stamp() uint64 { return s.Timestamp }

// Stamp returns the sample's driver timestamp (µs).
func (s VgpuSample) Stamp() uint64 { return s.Timestamp }

// Stamp returns the sample's driver timestamp (µs).
func (s VgpuProcessSample) Stamp() uint64 { return s.Timestamp }
