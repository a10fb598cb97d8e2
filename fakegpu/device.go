//go:build cgo

package fakegpu

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// samplingPeriod is the encoder/decoder sampling period reported, in µs.
const samplingPeriod = 167_000

// maxMigDevices is what GetMaxMigDeviceCount reports with MIG enabled (7
// GPU instances on every MIG-capable board here): MIG device indices are
// 0..maxMigDevices-1.
const maxMigDevices = 7

// device is the nvml.Device handle of a GPU or of a MIG device. Its …Func
// fields are set once, in wire (or MIG.wire), and never change, so calls
// may run concurrently; all state is read under the fleet's mutex.
type device struct {
	mock.Device
	g     *GPU  // the GPU, or the parent of the MIG device
	m     *MIG  // nil for a GPU's handle
	sites sites // set by wire
}

var _ nvml.Device = (*device)(nil)

// wire sets the implemented methods, then lets the fleet stub the rest and
// route all of them through its interceptor.
func (d *device) wire() {
	d.GetNameFunc = d.getName
	d.GetUUIDFunc = d.getUUID
	d.GetSerialFunc = d.getSerial
	d.GetIndexFunc = d.getIndex
	d.GetMinorNumberFunc = d.getIndex
	d.GetBrandFunc = d.getBrand
	d.GetArchitectureFunc = d.getArchitecture
	d.GetCudaComputeCapabilityFunc = d.getCudaComputeCapability
	d.GetPciInfoFunc = d.getPciInfo
	d.GetMemoryInfoFunc = d.getMemoryInfo
	d.GetMemoryInfo_v2Func = d.getMemoryInfoV2
	d.GetBAR1MemoryInfoFunc = d.getBAR1MemoryInfo
	d.GetUtilizationRatesFunc = d.getUtilizationRates
	d.GetEncoderUtilizationFunc = d.getEncoderUtilization
	d.GetDecoderUtilizationFunc = d.getDecoderUtilization
	d.GetClockInfoFunc = d.getClockInfo
	d.GetMaxClockInfoFunc = d.getMaxClockInfo
	d.GetFanSpeedFunc = d.getFanSpeed
	d.GetFanSpeed_v2Func = d.getFanSpeedV2
	d.GetNumFansFunc = d.getNumFans
	d.GetTemperatureFunc = d.getTemperature
	d.GetPowerUsageFunc = d.getPowerUsage
	d.GetPowerManagementLimitFunc = d.getPowerLimit
	d.GetEnforcedPowerLimitFunc = d.getPowerLimit
	d.GetPowerManagementDefaultLimitFunc = d.getDefaultPowerLimit
	d.GetTotalEnergyConsumptionFunc = d.getTotalEnergyConsumption
	d.GetPcieThroughputFunc = d.getPcieThroughput
	d.GetNvLinkStateFunc = d.getNvLinkState
	d.GetDisplayActiveFunc = d.getDisplayActive
	d.GetDisplayModeFunc = d.getDisplayMode
	d.GetPersistenceModeFunc = d.getPersistenceMode
	d.GetPerformanceStateFunc = d.getPerformanceState
	d.GetPowerStateFunc = d.getPerformanceState
	d.GetComputeModeFunc = d.getComputeMode
	d.GetTotalEccErrorsFunc = d.getTotalEccErrors
	d.GetEccModeFunc = d.getEccMode
	d.GetMigModeFunc = d.getMigMode
	d.GetMaxMigDeviceCountFunc = d.getMaxMigDeviceCount
	d.IsMigDeviceHandleFunc = d.isMigDeviceHandle
	d.GetMigDeviceHandleByIndexFunc = d.getMigDeviceHandleByIndex
	d.GetDeviceHandleFromMigDeviceHandleFunc = func() (nvml.Device, nvml.Return) { return nil, nvml.ERROR_INVALID_ARGUMENT }
	d.GetGpuInstanceIdFunc = notMIG
	d.GetComputeInstanceIdFunc = notMIG
	d.GetFieldValuesFunc = d.getFieldValues
	d.GetComputeRunningProcessesFunc = d.getComputeRunningProcesses
	d.GetGraphicsRunningProcessesFunc = d.getGraphicsRunningProcesses
	d.GetMPSComputeRunningProcessesFunc = d.getMPSComputeRunningProcesses
	d.GetProcessUtilizationFunc = d.getProcessUtilization
	d.GetSamplesFunc = d.getSamples
	d.GetAccountingModeFunc = d.getAccountingMode
	d.SetAccountingModeFunc = d.setAccountingMode
	d.GetAccountingPidsFunc = d.getAccountingPids
	d.GetAccountingStatsFunc = d.getAccountingStats
	d.GetAccountingBufferSizeFunc = d.getAccountingBufferSize
	d.ClearAccountingPidsFunc = d.clearAccountingPids
	d.GetVirtualizationModeFunc = d.getVirtualizationMode
	d.GetActiveVgpusFunc = d.getActiveVgpus
	d.GetVgpuUtilizationFunc = d.getVgpuUtilization
	d.GetVgpuProcessUtilizationFunc = d.getVgpuProcessUtilization
	d.VgpuTypeGetMaxInstancesFunc = d.vgpuTypeGetMaxInstances
	d.g.f.wireDevice(d)
}

// lock locks the fleet and returns the GPU; defer the returned unlock.
func (d *device) lock() (*GPU, func()) {
	d.g.f.mu.Lock()
	return d.g, d.g.f.mu.Unlock
}

func enable(on bool) nvml.EnableState {
	if on {
		return nvml.FEATURE_ENABLED
	}
	return nvml.FEATURE_DISABLED
}

// Identity: fixed after New, so no lock is needed.

func (d *device) getName() (string, nvml.Return)   { return d.g.spec.Name, nvml.SUCCESS }
func (d *device) getUUID() (string, nvml.Return)   { return d.g.spec.UUID, nvml.SUCCESS }
func (d *device) getSerial() (string, nvml.Return) { return d.g.spec.Serial, nvml.SUCCESS }
func (d *device) getIndex() (int, nvml.Return)     { return d.g.index, nvml.SUCCESS }

func (d *device) getBrand() (nvml.BrandType, nvml.Return) { return nvml.BRAND_NVIDIA, nvml.SUCCESS }

func (d *device) getArchitecture() (nvml.DeviceArchitecture, nvml.Return) {
	return d.g.spec.Architecture, nvml.SUCCESS
}

func (d *device) getCudaComputeCapability() (int, int, nvml.Return) {
	return d.g.spec.CCMajor, d.g.spec.CCMinor, nvml.SUCCESS
}

func (d *device) getPciInfo() (nvml.PciInfo, nvml.Return) {
	b := d.g.bus
	info := nvml.PciInfo{
		Domain:      b.domain,
		Bus:         b.bus,
		Device:      b.device,
		PciDeviceId: d.g.spec.PCIDeviceID,
	}
	putCString(info.BusId[:], b.String())
	putCString(info.BusIdLegacy[:], b.legacy())
	return info, nvml.SUCCESS
}

// putCString copies s into a C char array, NUL-terminated and truncated
// to fit, as NVML fills its fixed-size strings.
func putCString(dst []int8, s string) {
	n := min(len(s), len(dst)-1)
	for i := 0; i < n; i++ {
		dst[i] = int8(s[i])
	}
	dst[n] = 0
}

// Memory.

func (d *device) getMemoryInfo() (nvml.Memory, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	used := g.spec.MemoryReserved + g.allocatedLocked()
	return nvml.Memory{Total: g.spec.MemoryTotal, Used: used, Free: g.spec.MemoryTotal - used}, nvml.SUCCESS
}

func (d *device) getMemoryInfoV2() (nvml.Memory_v2, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	m := nvml.Memory_v2{
		Total:    g.spec.MemoryTotal,
		Reserved: g.spec.MemoryReserved,
		Used:     g.allocatedLocked(),
	}
	m.Version = nvml.STRUCT_VERSION(m, 2)
	m.Free = m.Total - m.Reserved - m.Used
	return m, nvml.SUCCESS
}

func (d *device) getBAR1MemoryInfo() (nvml.BAR1Memory, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return nvml.BAR1Memory{Bar1Total: g.spec.BAR1Total, Bar1Used: g.bar1Used, Bar1Free: g.spec.BAR1Total - g.bar1Used}, nvml.SUCCESS
}

// Utilization.

func (d *device) getUtilizationRates() (nvml.Utilization, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if g.migCur == nvml.DEVICE_MIG_ENABLE {
		return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.Utilization{Gpu: g.gpuUtil, Memory: g.memUtil}, nvml.SUCCESS
}

func (d *device) getEncoderUtilization() (uint32, uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.encUtil, samplingPeriod, nvml.SUCCESS
}

func (d *device) getDecoderUtilization() (uint32, uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.decUtil, samplingPeriod, nvml.SUCCESS
}

// Clocks.

func clockOf(c Clocks, t nvml.ClockType) (uint32, nvml.Return) {
	switch t {
	case nvml.CLOCK_GRAPHICS:
		return c.Graphics, nvml.SUCCESS
	case nvml.CLOCK_SM:
		return c.SM, nvml.SUCCESS
	case nvml.CLOCK_MEM:
		return c.Memory, nvml.SUCCESS
	case nvml.CLOCK_VIDEO:
		return c.Video, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

func (d *device) getClockInfo(t nvml.ClockType) (uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return clockOf(g.clocks, t)
}

func (d *device) getMaxClockInfo(t nvml.ClockType) (uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return clockOf(g.maxClocks, t)
}

// Thermal and power.

func (d *device) getFanSpeed() (uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.fan, nvml.SUCCESS
}

func (d *device) getFanSpeedV2(fan int) (uint32, nvml.Return) {
	if fan != 0 {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.getFanSpeed()
}

func (d *device) getNumFans() (int, nvml.Return) { return 1, nvml.SUCCESS }

func (d *device) getTemperature(sensor nvml.TemperatureSensors) (uint32, nvml.Return) {
	if sensor != nvml.TEMPERATURE_GPU {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	g, unlock := d.lock()
	defer unlock()
	return g.temp, nvml.SUCCESS
}

func (d *device) getPowerUsage() (uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.power, nvml.SUCCESS
}

func (d *device) getPowerLimit() (uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.limit, nvml.SUCCESS
}

func (d *device) getDefaultPowerLimit() (uint32, nvml.Return) {
	return d.g.spec.PowerLimit, nvml.SUCCESS
}

func (d *device) getTotalEnergyConsumption() (uint64, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.energy, nvml.SUCCESS
}

// Interconnect.

func (d *device) getPcieThroughput(c nvml.PcieUtilCounter) (uint32, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	switch c {
	case nvml.PCIE_UTIL_TX_BYTES:
		return g.pcieTx, nvml.SUCCESS
	case nvml.PCIE_UTIL_RX_BYTES:
		return g.pcieRx, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

func (d *device) getNvLinkState(link int) (nvml.EnableState, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if g.nvLinks == 0 {
		return nvml.FEATURE_DISABLED, nvml.ERROR_NOT_SUPPORTED
	}
	if link < 0 || link >= g.nvLinks {
		return nvml.FEATURE_DISABLED, nvml.ERROR_INVALID_ARGUMENT
	}
	return nvml.FEATURE_ENABLED, nvml.SUCCESS
}

// Modes and states.

func (d *device) getDisplayActive() (nvml.EnableState, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return enable(g.displayActive), nvml.SUCCESS
}

func (d *device) getDisplayMode() (nvml.EnableState, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return enable(g.displayMode), nvml.SUCCESS
}

func (d *device) getPersistenceMode() (nvml.EnableState, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return enable(g.persistence), nvml.SUCCESS
}

func (d *device) getPerformanceState() (nvml.Pstates, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.pstate, nvml.SUCCESS
}

func (d *device) getComputeMode() (nvml.ComputeMode, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.computeMode, nvml.SUCCESS
}

func (d *device) getTotalEccErrors(et nvml.MemoryErrorType, ct nvml.EccCounterType) (uint64, nvml.Return) {
	if ct != nvml.VOLATILE_ECC && ct != nvml.AGGREGATE_ECC {
		return 0, nvml.ERROR_INVALID_ARGUMENT
	}
	g, unlock := d.lock()
	defer unlock()
	switch et {
	case nvml.MEMORY_ERROR_TYPE_UNCORRECTED:
		return g.ecc, nvml.SUCCESS
	case nvml.MEMORY_ERROR_TYPE_CORRECTED:
		return 0, nvml.SUCCESS
	}
	return 0, nvml.ERROR_INVALID_ARGUMENT
}

func (d *device) getEccMode() (nvml.EnableState, nvml.EnableState, nvml.Return) {
	return nvml.FEATURE_ENABLED, nvml.FEATURE_ENABLED, nvml.SUCCESS
}

// MIG.

func (d *device) getMigMode() (int, int, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return g.migCur, g.migPend, nvml.SUCCESS
}

// getMaxMigDeviceCount is 0 with MIG disabled, as NVML documents.
func (d *device) getMaxMigDeviceCount() (int, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if g.migCur != nvml.DEVICE_MIG_ENABLE {
		return 0, nvml.SUCCESS
	}
	return maxMigDevices, nvml.SUCCESS
}

func (d *device) isMigDeviceHandle() (bool, nvml.Return) { return false, nvml.SUCCESS }

// getMigDeviceHandleByIndex returns the handle of the MIG device in slot i:
// ERROR_NOT_SUPPORTED with MIG disabled, ERROR_INVALID_ARGUMENT for an
// index outside 0..6, ERROR_NOT_FOUND for a free slot.
func (d *device) getMigDeviceHandleByIndex(i int) (nvml.Device, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	switch {
	case g.migCur != nvml.DEVICE_MIG_ENABLE:
		return nil, nvml.ERROR_NOT_SUPPORTED
	case i < 0 || i >= maxMigDevices:
		return nil, nvml.ERROR_INVALID_ARGUMENT
	case g.migs[i] == nil:
		return nil, nvml.ERROR_NOT_FOUND
	}
	return g.migs[i].dev, nvml.SUCCESS
}

// notMIG answers GetGpuInstanceId and GetComputeInstanceId on a GPU's
// handle, which is not a MIG device's.
func notMIG() (int, nvml.Return) { return 0, nvml.ERROR_INVALID_ARGUMENT }
