package nvgo

import (
	"context"
	"time"
)

// Snapshot is one pass over the GPUs: plain data with a capture time that
// never reaches back to the driver. Marshalled to JSON it is
// {"timestamp": …, "driver_version": …, "devices": [{…, "processes": […]}]}.
type Snapshot struct {
	Timestamp         time.Time        `json:"timestamp"`
	DriverVersion     string           `json:"driver_version"`
	CUDADriverVersion string           `json:"cuda_driver_version"`
	NVMLVersion       string           `json:"nvml_version"`
	Fields            Fields           `json:"-"`
	Devices           []DeviceSnapshot `json:"devices"`
}

// DeviceSnapshot is one GPU at one moment. Metrics outside the snapshot's
// Fields are N/A with reason NotReported. JSON keys follow nvitop's snapshot
// keys; N/A is null.
type DeviceSnapshot struct {
	Timestamp time.Time `json:"timestamp"`
	Fields    Fields    `json:"-"`
	Index     int       `json:"index"`
	UUID      string    `json:"uuid"`
	// Err is why the GPU as a whole could not be read (e.g. ErrGPULost);
	// Error is its text in JSON.
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`

	Name                  Value[string]            `json:"name"`
	BusID                 Value[string]            `json:"bus_id"`
	Serial                Value[string]            `json:"serial"`
	MinorNumber           Value[int]               `json:"minor_number"`
	CUDAComputeCapability Value[ComputeCapability] `json:"cuda_compute_capability"`

	UnifiedMemory  bool           `json:"unified_memory"`
	MemoryTotal    Value[Bytes]   `json:"memory_total"`
	MemoryUsed     Value[Bytes]   `json:"memory_used"`
	MemoryFree     Value[Bytes]   `json:"memory_free"`
	MemoryReserved Value[Bytes]   `json:"memory_reserved"`
	MemoryPercent  Value[Percent] `json:"memory_percent"`
	BAR1Total      Value[Bytes]   `json:"bar1_memory_total"`
	BAR1Used       Value[Bytes]   `json:"bar1_memory_used"`
	BAR1Free       Value[Bytes]   `json:"bar1_memory_free"`

	GPUUtilization     Value[Percent] `json:"gpu_utilization"`
	MemoryUtilization  Value[Percent] `json:"memory_utilization"`
	EncoderUtilization Value[Percent] `json:"encoder_utilization"`
	DecoderUtilization Value[Percent] `json:"decoder_utilization"`

	GraphicsClock    Value[MHz] `json:"graphics_clock"`
	SMClock          Value[MHz] `json:"sm_clock"`
	MemoryClock      Value[MHz] `json:"memory_clock"`
	VideoClock       Value[MHz] `json:"video_clock"`
	MaxGraphicsClock Value[MHz] `json:"max_graphics_clock"`
	MaxSMClock       Value[MHz] `json:"max_sm_clock"`
	MaxMemoryClock   Value[MHz] `json:"max_memory_clock"`
	MaxVideoClock    Value[MHz] `json:"max_video_clock"`

	FanSpeed    Value[Percent]    `json:"fan_speed"`
	Temperature Value[Celsius]    `json:"temperature"`
	PowerUsage  Value[MilliWatts] `json:"power_usage"`
	PowerLimit  Value[MilliWatts] `json:"power_limit"`
	// TotalEnergy is the energy the GPU used since the driver loaded
	// (Volta and later), a counter: difference two readings.
	TotalEnergy Value[MilliJoules] `json:"total_energy_consumption"`

	PCIeTX   Value[KiBPerSecond] `json:"pcie_tx_throughput"`
	PCIeRX   Value[KiBPerSecond] `json:"pcie_rx_throughput"`
	NVLinkTX Value[KiBPerSecond] `json:"nvlink_tx_throughput"`
	NVLinkRX Value[KiBPerSecond] `json:"nvlink_rx_throughput"`

	VolatileUncorrectedECC Value[uint64]      `json:"total_volatile_uncorrected_ecc_errors"`
	PerformanceState       Value[PState]      `json:"performance_state"`
	DisplayActive          Value[OnOff]       `json:"display_active"`
	DisplayMode            Value[OnOff]       `json:"display_mode"`
	PersistenceMode        Value[OnOff]       `json:"persistence_mode"`
	ComputeMode            Value[ComputeMode] `json:"compute_mode"`
	MIGMode                Value[OnOff]       `json:"mig_mode"`
	MIGModePending         Value[OnOff]       `json:"mig_mode_pending"`

	// MIG identity, set only on a MIG device's snapshot (Index is then the
	// parent GPU's NVML index).
	MIGIndex          *int   `json:"mig_index,omitempty"`
	GPUInstanceID     *int   `json:"gpu_instance_id,omitempty"`
	ComputeInstanceID *int   `json:"compute_instance_id,omitempty"`
	MIGProfile        string `json:"mig_profile,omitempty"`
	ParentUUID        string `json:"parent_uuid,omitempty"`

	// MIGDevices are the MIG devices of a GPU with MIG on, read with the
	// same groups, when FieldMIGDevices was asked for. Their processes are
	// listed under them, and the GPU's own Processes is then nil.
	MIGDevices      []DeviceSnapshot `json:"mig_devices,omitempty"`
	MIGDevicesError string           `json:"mig_devices_error,omitempty"`

	// VirtualizationMode and VgpuInstances are read with
	// FieldVgpuInstances. VgpuInstances is nil (JSON null) unless the GPU is
	// a vGPU host, and empty ([]) on a host that runs none.
	VirtualizationMode Value[VirtualizationMode] `json:"virtualization_mode"`
	VgpuInstances      []VgpuInstanceSnapshot    `json:"vgpu_instances"`
	// VgpuInstancesErr is why the instances could not be listed.
	VgpuInstancesErr   error  `json:"-"`
	VgpuInstancesError string `json:"vgpu_instances_error,omitempty"`

	// Processes is nil unless FieldProcesses was asked for.
	Processes []GpuProcessSnapshot `json:"processes,omitempty"`
	// ProcessesErr is why the process lists could not be read.
	ProcessesErr   error  `json:"-"`
	ProcessesError string `json:"processes_error,omitempty"`
}

func (s *DeviceSnapshot) setErr(err error) {
	if s.Err == nil {
		s.Err = err
		s.Error = err.Error()
	}
}

// GpuProcessSnapshot is one process on one GPU at one moment: its GPU
// figures and its host figures. JSON keys follow nvitop's.
type GpuProcessSnapshot struct {
	Timestamp             time.Time      `json:"timestamp"`
	PID                   int            `json:"pid"`
	DeviceIndex           int            `json:"device_index"`
	DeviceUUID            string         `json:"device_uuid"`
	Type                  ProcessType    `json:"type"`
	GPUMemory             Value[Bytes]   `json:"gpu_memory"`
	GPUMemoryPercent      Value[Percent] `json:"gpu_memory_percent"`
	GPUSMUtilization      Value[Percent] `json:"gpu_sm_utilization"`
	GPUMemoryUtilization  Value[Percent] `json:"gpu_memory_utilization"`
	GPUEncoderUtilization Value[Percent] `json:"gpu_encoder_utilization"`
	GPUDecoderUtilization Value[Percent] `json:"gpu_decoder_utilization"`
	GPUInstanceID         Value[int]     `json:"gpu_instance_id"`
	ComputeInstanceID     Value[int]     `json:"compute_instance_id"`
	HostProcessSnapshot
}

// HostProcessSnapshot is a host process at one moment. Fields that could not
// be read are N/A; HostError says why (e.g. the process is in another PID
// namespace).
type HostProcessSnapshot struct {
	IsRunning          bool                 `json:"is_running"`
	Name               Value[string]        `json:"name"`
	Username           Value[string]        `json:"username"`
	Command            Value[string]        `json:"command"`
	Cmdline            Value[[]string]      `json:"cmdline"`
	Status             Value[string]        `json:"status"`
	CPUPercent         Value[Percent]       `json:"cpu_percent"`
	HostMemory         Value[Bytes]         `json:"host_memory"`
	HostMemoryPercent  Value[Percent]       `json:"host_memory_percent"`
	CreateTime         Value[time.Time]     `json:"create_time"`
	RunningTime        Value[time.Duration] `json:"-"`
	RunningTimeSeconds Value[float64]       `json:"running_time"`
	HostReason         Reason               `json:"-"`
	HostError          string               `json:"host_error,omitempty"`
}

type snapshotOptions struct {
	fields  Fields
	devices []*Device
}

// SnapshotOption configures Library.Snapshot.
type SnapshotOption func(*snapshotOptions)

// WithFields limits the snapshot to the groups f (default FieldsAll); the
// snapshot makes only the NVML calls those groups need.
func WithFields(f Fields) SnapshotOption { return func(o *snapshotOptions) { o.fields = f } }

// WithDevices limits the snapshot to the given devices (default: all).
func WithDevices(devs ...*Device) SnapshotOption {
	return func(o *snapshotOptions) { o.devices = append(o.devices, devs...) }
}

// Snapshot reads every GPU (or those of WithDevices) and, with
// FieldProcesses, their processes, in one pass with the fewest NVML calls:
// Device objects are reused, static values are never re-read, process lists
// take one call per kind, and power, power limit, ECC and NVLink counters
// come from one batched field-value call. Every dynamic value asked for is
// read fresh (the per-metric cache is bypassed, then refreshed).
//
// Devices are read one after the other, as nvidia-smi and nvitop read them:
// a goroutine per device costs more CPU than its calls take on a fast
// driver. A GPU that cannot be read (lost, say) does
// not fail the snapshot: its DeviceSnapshot has Err set and N/A metrics. The
// error is non-nil only when NVML itself is unusable or ctx is done.
func (l *Library) Snapshot(ctx context.Context, opts ...SnapshotOption) (*Snapshot, error) {
	o := snapshotOptions{fields: FieldsAll}
	for _, opt := range opts {
		opt(&o)
	}
	devs := o.devices
	if devs == nil {
		var err error
		if devs, err = l.Devices(); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	snap := &Snapshot{Timestamp: l.clock.Now(), Fields: o.fields, Devices: make([]DeviceSnapshot, len(devs))}
	snap.DriverVersion, snap.CUDADriverVersion, snap.NVMLVersion = l.versions()

	hosts := newHostMemo(snap.Timestamp)
	hosts.reserve(l.hosts.len())
	for i, d := range devs {
		func() {
			if ctx.Err() != nil {
				snap.Devices[i] = DeviceSnapshot{Index: d.index, Timestamp: l.clock.Now()}
				snap.Devices[i].setErr(ctx.Err())
				return
			}
			d.readInto(&snap.Devices[i], o.fields, hosts)
			d.remember(o.fields, &snap.Devices[i])
		}()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return snap, nil
}

// versions returns the driver, CUDA and NVML versions, read once per Library
// (they cannot change while NVML is loaded).
func (l *Library) versions() (driver, cuda, nvmlv string) {
	l.verOnce.Do(func() {
		l.ver[0], _ = l.DriverVersion()
		l.ver[1], _ = l.CUDADriverVersion()
		l.ver[2], _ = l.NVMLVersion()
	})
	return l.ver[0], l.ver[1], l.ver[2]
}
