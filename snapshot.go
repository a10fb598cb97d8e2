package nvgo

import (
	"context"
	"time"
)

// Snapshot is one pass over the GPUs: plain data with a capture time that
// never reaches back to the driver. Marshalled to JSON it is
// {"timestamp": …, "driver_version": …, "devices": [{…, "processes": […]}]}.
type Snapshot struct {
	Timestamp time.Time `json:"timestamp"`
	// DriverVersion, CUDADriverVersion and NVMLVersion are as the Library
	// methods of those names return them, N/A with the reason they could
	// not be read.
	DriverVersion     Value[string]    `json:"driver_version"`
	CUDADriverVersion Value[string]    `json:"cuda_driver_version"`
	NVMLVersion       Value[string]    `json:"nvml_version"`
	Fields            Fields           `json:"-"`
	Devices           []DeviceSnapshot `json:"devices"`
}

// DeviceSnapshot is one GPU (or MIG device) at one moment. Metrics outside
// the snapshot's Fields are N/A with reason NotReported. JSON keys follow
// nvitop's snapshot keys; N/A is null. Each metric is described by the
// DeviceMetric whose Name is its JSON key (DeviceMetrics lists them), and
// read live by the Device method of the same name.
type DeviceSnapshot struct {
	Timestamp time.Time     `json:"timestamp"`
	Fields    Fields        `json:"-"`
	Index     int           `json:"index"`
	UUID      Value[string] `json:"uuid"`
	// Err is why the GPU as a whole could not be read (e.g. ErrGPULost);
	// Error is its text in JSON.
	Err   error  `json:"-"`
	Error string `json:"error,omitempty"`

	Name                  Value[string]            `json:"name"`
	BusID                 Value[string]            `json:"bus_id"`
	Serial                Value[string]            `json:"serial"`
	MinorNumber           Value[int]               `json:"minor_number"`
	CUDAComputeCapability Value[ComputeCapability] `json:"cuda_compute_capability"`

	UnifiedMemory  Value[bool]    `json:"unified_memory"`
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

	FanSpeed          Value[Percent]    `json:"fan_speed"`
	Temperature       Value[Celsius]    `json:"temperature"`
	MemoryTemperature Value[Celsius]    `json:"memory_temperature"`
	PowerUsage        Value[MilliWatts] `json:"power_usage"`
	PowerLimit        Value[MilliWatts] `json:"power_limit"`
	DefaultPowerLimit Value[MilliWatts] `json:"default_power_limit"`
	// TotalEnergyConsumption is the energy the GPU used since the driver
	// loaded (Volta and later), a counter: difference two readings.
	TotalEnergyConsumption Value[MilliJoules] `json:"total_energy_consumption"`

	PCIeTXThroughput   Value[KiBPerSecond] `json:"pcie_tx_throughput"`
	PCIeRXThroughput   Value[KiBPerSecond] `json:"pcie_rx_throughput"`
	NVLinkTXThroughput Value[KiBPerSecond] `json:"nvlink_tx_throughput"`
	NVLinkRXThroughput Value[KiBPerSecond] `json:"nvlink_rx_throughput"`
	NVLinkCount        Value[int]          `json:"nvlink_count"`

	TotalVolatileUncorrectedECCErrors Value[uint64]      `json:"total_volatile_uncorrected_ecc_errors"`
	PerformanceState                  Value[PState]      `json:"performance_state"`
	DisplayActive                     Value[OnOff]       `json:"display_active"`
	DisplayMode                       Value[OnOff]       `json:"display_mode"`
	PersistenceMode                   Value[OnOff]       `json:"persistence_mode"`
	ComputeMode                       Value[ComputeMode] `json:"compute_mode"`
	MIGMode                           Value[OnOff]       `json:"mig_mode"`
	MIGModePending                    Value[OnOff]       `json:"mig_mode_pending"`

	// MIG identity, real only on a MIG device's snapshot (Index is then
	// the parent GPU's NVML index); N/A (NotSupported) on a physical GPU.
	MIGIndex          Value[int]    `json:"mig_index"`
	GPUInstanceID     Value[int]    `json:"gpu_instance_id"`
	ComputeInstanceID Value[int]    `json:"compute_instance_id"`
	MIGProfile        Value[string] `json:"mig_profile"`
	ParentUUID        Value[string] `json:"parent_uuid"`

	// MIGDevices are the MIG devices of a GPU with MIG on, read with the
	// same groups, when FieldMIGDevices was asked for. Their processes are
	// listed under them, and the GPU's own Processes is then nil.
	MIGDevices []DeviceSnapshot `json:"mig_devices,omitempty"`
	// MIGDevicesErr is why the MIG devices could not be listed;
	// MIGDevicesError is its text in JSON.
	MIGDevicesErr   error  `json:"-"`
	MIGDevicesError string `json:"mig_devices_error,omitempty"`

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
func (l *Library) versions() (driver, cuda, nvmlv Value[string]) {
	l.verOnce.Do(func() {
		l.ver[0] = FromErr(l.DriverVersion())
		l.ver[1] = FromErr(l.CUDADriverVersion())
		l.ver[2] = FromErr(l.NVMLVersion())
	})
	return l.ver[0], l.ver[1], l.ver[2]
}

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
	s.UUID = d.UUID()
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
	} else {
		describeNotMIG(s)
	}

	h, err := d.handle()
	if err != nil {
		s.setErr(err)
		s.fillNA(f, err)
		return
	}
	r := newReader(d, h, hosts.stamp)
	defer r.release()
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
