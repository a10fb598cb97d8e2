//go:build cgo

package fakegpu

import (
	"reflect"
	"sort"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// metricMethods maps the metric names that GPU.Unsupported, GPU.Fail and the
// scenario keys "unsupported" and "errors" accept to the nvml.Device methods
// behind them. Field IDs follow their owner method (see fieldOwners).
var metricMethods = map[string][]string{
	"name":                {"GetName"},
	"uuid":                {"GetUUID"},
	"serial":              {"GetSerial"},
	"index":               {"GetIndex"},
	"minor_number":        {"GetMinorNumber"},
	"pci_info":            {"GetPciInfo"},
	"brand":               {"GetBrand"},
	"architecture":        {"GetArchitecture"},
	"compute_capability":  {"GetCudaComputeCapability"},
	"memory":              {"GetMemoryInfo", "GetMemoryInfo_v2"},
	"bar1":                {"GetBAR1MemoryInfo"},
	"utilization":         {"GetUtilizationRates", "GetSamples"},
	"encoder":             {"GetEncoderUtilization"},
	"decoder":             {"GetDecoderUtilization"},
	"clocks":              {"GetClockInfo"},
	"max_clocks":          {"GetMaxClockInfo"},
	"fan_speed":           {"GetFanSpeed", "GetFanSpeed_v2", "GetNumFans"},
	"temperature":         {"GetTemperature", "GetTemperatureV"},
	"power":               {"GetPowerUsage"},
	"power_limit":         {"GetPowerManagementLimit", "GetEnforcedPowerLimit", "GetPowerManagementDefaultLimit"},
	"energy":              {"GetTotalEnergyConsumption"},
	"pcie":                {"GetPcieThroughput"},
	"nvlink":              {"GetNvLinkState"},
	"ecc":                 {"GetTotalEccErrors", "GetEccMode"},
	"pstate":              {"GetPerformanceState", "GetPowerState"},
	"persistence_mode":    {"GetPersistenceMode"},
	"compute_mode":        {"GetComputeMode"},
	"display":             {"GetDisplayActive", "GetDisplayMode"},
	"mig_mode":            {"GetMigMode", "GetMaxMigDeviceCount", "GetMigDeviceHandleByIndex"},
	"processes":           {"GetComputeRunningProcesses", "GetGraphicsRunningProcesses", "GetMPSComputeRunningProcesses"},
	"process_utilization": {"GetProcessUtilization"},
	"field_values":        {"GetFieldValues"},
	"accounting":          {"GetAccountingMode", "SetAccountingMode", "GetAccountingPids", "GetAccountingStats", "GetAccountingBufferSize", "ClearAccountingPids"},
}

// MetricNames returns the metric names that GPU.Unsupported, GPU.Fail and
// the scenario keys "unsupported" and "errors" accept, sorted.
func MetricNames() []string {
	names := make([]string, 0, len(metricMethods))
	for n := range metricMethods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// methodSet returns the method names of a moq mock type: its "…Func" fields.
func methodSet(mockType reflect.Type) map[string]bool {
	set := make(map[string]bool)
	for i := 0; i < mockType.NumField(); i++ {
		f := mockType.Field(i)
		if name, ok := strings.CutSuffix(f.Name, "Func"); ok && f.Type.Kind() == reflect.Func {
			set[name] = true
		}
	}
	return set
}

var (
	deviceMethods    = methodSet(reflect.TypeOf(mock.Device{}))
	interfaceMethods = methodSet(reflect.TypeOf(mock.Interface{}))
)

// resolveDeviceMethods turns a metric name, an nvml.Device method name or a
// "Device."-prefixed method name into method names; ok is false for a name
// that is none of these.
func resolveDeviceMethods(name string) (methods []string, ok bool) {
	if m, found := metricMethods[name]; found {
		return m, true
	}
	name = strings.TrimPrefix(name, "Device.")
	if deviceMethods[name] {
		return []string{name}, true
	}
	return nil, false
}

// returnNames are the NVML error codes by the name nvml.h gives them, less
// the NVML_ERROR_ prefix.
var returnNames = map[string]nvml.Return{
	"UNINITIALIZED":             nvml.ERROR_UNINITIALIZED,
	"INVALID_ARGUMENT":          nvml.ERROR_INVALID_ARGUMENT,
	"NOT_SUPPORTED":             nvml.ERROR_NOT_SUPPORTED,
	"NO_PERMISSION":             nvml.ERROR_NO_PERMISSION,
	"ALREADY_INITIALIZED":       nvml.ERROR_ALREADY_INITIALIZED,
	"NOT_FOUND":                 nvml.ERROR_NOT_FOUND,
	"INSUFFICIENT_SIZE":         nvml.ERROR_INSUFFICIENT_SIZE,
	"INSUFFICIENT_POWER":        nvml.ERROR_INSUFFICIENT_POWER,
	"DRIVER_NOT_LOADED":         nvml.ERROR_DRIVER_NOT_LOADED,
	"TIMEOUT":                   nvml.ERROR_TIMEOUT,
	"IRQ_ISSUE":                 nvml.ERROR_IRQ_ISSUE,
	"LIBRARY_NOT_FOUND":         nvml.ERROR_LIBRARY_NOT_FOUND,
	"FUNCTION_NOT_FOUND":        nvml.ERROR_FUNCTION_NOT_FOUND,
	"CORRUPTED_INFOROM":         nvml.ERROR_CORRUPTED_INFOROM,
	"GPU_IS_LOST":               nvml.ERROR_GPU_IS_LOST,
	"RESET_REQUIRED":            nvml.ERROR_RESET_REQUIRED,
	"OPERATING_SYSTEM":          nvml.ERROR_OPERATING_SYSTEM,
	"LIB_RM_VERSION_MISMATCH":   nvml.ERROR_LIB_RM_VERSION_MISMATCH,
	"IN_USE":                    nvml.ERROR_IN_USE,
	"MEMORY":                    nvml.ERROR_MEMORY,
	"NO_DATA":                   nvml.ERROR_NO_DATA,
	"VGPU_ECC_NOT_SUPPORTED":    nvml.ERROR_VGPU_ECC_NOT_SUPPORTED,
	"INSUFFICIENT_RESOURCES":    nvml.ERROR_INSUFFICIENT_RESOURCES,
	"FREQ_NOT_SUPPORTED":        nvml.ERROR_FREQ_NOT_SUPPORTED,
	"ARGUMENT_VERSION_MISMATCH": nvml.ERROR_ARGUMENT_VERSION_MISMATCH,
	"DEPRECATED":                nvml.ERROR_DEPRECATED,
	"NOT_READY":                 nvml.ERROR_NOT_READY,
	"GPU_NOT_FOUND":             nvml.ERROR_GPU_NOT_FOUND,
	"INVALID_STATE":             nvml.ERROR_INVALID_STATE,
	"RESET_TYPE_NOT_SUPPORTED":  nvml.ERROR_RESET_TYPE_NOT_SUPPORTED,
	"UNKNOWN":                   nvml.ERROR_UNKNOWN,
}

// parseReturn parses an error code name, with or without "ERROR_".
func parseReturn(name string) (nvml.Return, bool) {
	r, ok := returnNames[strings.TrimPrefix(name, "ERROR_")]
	return r, ok
}
