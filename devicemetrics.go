package nvgo

// The live face of the metric table (metrics.go): one method per reading,
// of the same name as its DeviceSnapshot field. Each reads its group
// through the Device's cache (at most DefaultCacheTTL old, or the latest
// snapshot's reading); a static one is read once. Where a reading is N/A,
// its Reason says why; DeviceMetric.Help, from LookupDeviceMetric, says
// what each is.

// MemoryTotal returns the frame-buffer size. N/A on a unified-memory GPU
// (see UnifiedMemory), as are the other memory figures.
func (d *Device) MemoryTotal() Value[Bytes] { return d.cached(FieldMemory).MemoryTotal }

// MemoryUsed returns the allocated frame buffer. With drivers from R510 it
// excludes the memory the driver reserves (MemoryReserved), as nvidia-smi
// shows it; older drivers count reserved memory as used.
func (d *Device) MemoryUsed() Value[Bytes] { return d.cached(FieldMemory).MemoryUsed }

// MemoryFree returns the free frame buffer.
func (d *Device) MemoryFree() Value[Bytes] { return d.cached(FieldMemory).MemoryFree }

// MemoryReserved returns the memory the driver reserves (N/A on drivers before R510).
func (d *Device) MemoryReserved() Value[Bytes] { return d.cached(FieldMemory).MemoryReserved }

// MemoryPercent returns used/total in percent, rounded to one decimal.
func (d *Device) MemoryPercent() Value[Percent] { return d.cached(FieldMemory).MemoryPercent }

// UnifiedMemory reports whether the GPU has no frame buffer of its own
// (NVML reports memory as not supported, or a total of 0): its memory
// figures are then N/A with ErrUnifiedMemory. N/A when memory could not be
// read at all.
func (d *Device) UnifiedMemory() Value[bool] { return d.cached(FieldMemory).UnifiedMemory }

// BAR1Total returns the BAR1 aperture size.
func (d *Device) BAR1Total() Value[Bytes] { return d.cached(FieldBAR1).BAR1Total }

// BAR1Used returns the BAR1 memory in use.
func (d *Device) BAR1Used() Value[Bytes] { return d.cached(FieldBAR1).BAR1Used }

// BAR1Free returns the free BAR1 memory.
func (d *Device) BAR1Free() Value[Bytes] { return d.cached(FieldBAR1).BAR1Free }

// GPUUtilization returns the percent of time a kernel ran over the driver's
// last sample period. N/A on a MIG device.
func (d *Device) GPUUtilization() Value[Percent] { return d.cached(FieldUtilization).GPUUtilization }

// MemoryUtilization returns the percent of time device memory was read or
// written over the driver's last sample period. N/A on a MIG device.
func (d *Device) MemoryUtilization() Value[Percent] {
	return d.cached(FieldUtilization).MemoryUtilization
}

// EncoderUtilization returns the video encoder utilization.
func (d *Device) EncoderUtilization() Value[Percent] { return d.cached(FieldCodec).EncoderUtilization }

// DecoderUtilization returns the video decoder utilization.
func (d *Device) DecoderUtilization() Value[Percent] { return d.cached(FieldCodec).DecoderUtilization }

// GraphicsClock returns the current graphics clock.
func (d *Device) GraphicsClock() Value[MHz] { return d.cached(FieldClocks).GraphicsClock }

// SMClock returns the current SM clock.
func (d *Device) SMClock() Value[MHz] { return d.cached(FieldClocks).SMClock }

// MemoryClock returns the current memory clock.
func (d *Device) MemoryClock() Value[MHz] { return d.cached(FieldClocks).MemoryClock }

// VideoClock returns the current video clock.
func (d *Device) VideoClock() Value[MHz] { return d.cached(FieldClocks).VideoClock }

// MaxGraphicsClock returns the maximum graphics clock. Static.
func (d *Device) MaxGraphicsClock() Value[MHz] { return d.staticReadings(FieldClocks).MaxGraphicsClock }

// MaxSMClock returns the maximum SM clock. Static.
func (d *Device) MaxSMClock() Value[MHz] { return d.staticReadings(FieldClocks).MaxSMClock }

// MaxMemoryClock returns the maximum memory clock. Static.
func (d *Device) MaxMemoryClock() Value[MHz] { return d.staticReadings(FieldClocks).MaxMemoryClock }

// MaxVideoClock returns the maximum video clock. Static.
func (d *Device) MaxVideoClock() Value[MHz] { return d.staticReadings(FieldClocks).MaxVideoClock }

// FanSpeed returns the fan speed in percent of its maximum (it can exceed
// 100). N/A on boards without fans (SXM modules).
func (d *Device) FanSpeed() Value[Percent] { return d.cached(FieldFan).FanSpeed }

// Temperature returns the GPU core temperature.
func (d *Device) Temperature() Value[Celsius] { return d.cached(FieldTemperature).Temperature }

// MemoryTemperature returns the memory (HBM) temperature. N/A on GPUs
// without a memory sensor the driver reads.
func (d *Device) MemoryTemperature() Value[Celsius] {
	return d.cached(FieldTemperature).MemoryTemperature
}

// PowerUsage returns the board power draw, as nvidia-smi's power.draw: the
// one-second average on Ampere and newer (except A100), else instantaneous.
func (d *Device) PowerUsage() Value[MilliWatts] { return d.cached(FieldPower).PowerUsage }

// PowerLimit returns the power management limit in force.
func (d *Device) PowerLimit() Value[MilliWatts] { return d.cached(FieldPower).PowerLimit }

// DefaultPowerLimit returns the power management limit the board ships
// with. Static.
func (d *Device) DefaultPowerLimit() Value[MilliWatts] {
	return d.staticReadings(FieldPower).DefaultPowerLimit
}

// TotalEnergyConsumption returns the energy the GPU used since the driver
// loaded (Volta and later), a counter: difference two readings.
func (d *Device) TotalEnergyConsumption() Value[MilliJoules] {
	return d.cached(FieldPower).TotalEnergyConsumption
}

// PowerStatus returns "66W / 250W".
func (d *Device) PowerStatus() string {
	s := d.cached(FieldPower)
	return PowerStatus(s.PowerUsage, s.PowerLimit)
}

// PCIeTXThroughput returns the PCIe transmit rate: the mean since the
// device's previous PCIe reading, from the byte counters of drivers R555
// and later, else over the driver's 20 ms window.
func (d *Device) PCIeTXThroughput() Value[KiBPerSecond] { return d.cached(FieldPCIe).PCIeTXThroughput }

// PCIeRXThroughput returns the PCIe receive rate, like PCIeTXThroughput.
func (d *Device) PCIeRXThroughput() Value[KiBPerSecond] { return d.cached(FieldPCIe).PCIeRXThroughput }

// NVLinkTXThroughput returns the NVLink transmit rate summed over links,
// averaged since the previous NVLink reading of this Device (N/A on the first).
func (d *Device) NVLinkTXThroughput() Value[KiBPerSecond] {
	return d.cached(FieldNVLink).NVLinkTXThroughput
}

// NVLinkRXThroughput returns the NVLink receive rate summed over links, like NVLinkTXThroughput.
func (d *Device) NVLinkRXThroughput() Value[KiBPerSecond] {
	return d.cached(FieldNVLink).NVLinkRXThroughput
}

// NVLinkCount returns the number of NVLink links (0 without NVLink). Static.
func (d *Device) NVLinkCount() Value[int] { return d.staticReadings(FieldNVLink).NVLinkCount }

// TotalVolatileUncorrectedECCErrors returns the uncorrected (double-bit)
// ECC errors since the driver loaded, a counter. N/A with ECC off.
func (d *Device) TotalVolatileUncorrectedECCErrors() Value[uint64] {
	return d.cached(FieldECC).TotalVolatileUncorrectedECCErrors
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
