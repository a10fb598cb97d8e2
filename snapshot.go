package nvgo

import (
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
