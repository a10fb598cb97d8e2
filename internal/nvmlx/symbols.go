//go:build cgo

package nvmlx

// symbol is an NVML function this package may call (besides Init and
// Shutdown): each is probed once after Init, and a call names its symbol
// by this index rather than by a string to look up.
type symbol uint8

const (
	symSystemGetDriverVersion symbol = iota
	symSystemGetNVMLVersion
	symSystemGetCudaDriverVersion
	symDeviceGetCount
	symDeviceGetHandleByIndex
	symDeviceGetHandleByUUID
	symDeviceGetHandleByPciBusId
	symDeviceGetName
	symDeviceGetUUID
	symDeviceGetPciInfo
	symDeviceGetSerial
	symDeviceGetMinorNumber
	symDeviceGetIndex
	symDeviceGetCudaComputeCapability
	symDeviceGetMemoryInfo
	symDeviceGetMemoryInfo_v2
	symDeviceGetBAR1MemoryInfo
	symDeviceGetUtilizationRates
	symDeviceGetEncoderUtilization
	symDeviceGetDecoderUtilization
	symDeviceGetClockInfo
	symDeviceGetMaxClockInfo
	symDeviceGetFanSpeed
	symDeviceGetTemperature
	symDeviceGetPowerUsage
	symDeviceGetPowerManagementLimit
	symDeviceGetPcieThroughput
	symDeviceGetDisplayActive
	symDeviceGetDisplayMode
	symDeviceGetPersistenceMode
	symDeviceGetPerformanceState
	symDeviceGetComputeMode
	symDeviceGetTotalEccErrors
	symDeviceGetMigMode
	symDeviceGetFieldValues
	symDeviceGetComputeRunningProcesses
	symDeviceGetGraphicsRunningProcesses
	symDeviceGetMPSComputeRunningProcesses
	symDeviceGetProcessUtilization
	symDeviceGetMaxMigDeviceCount
	symDeviceGetMigDeviceHandleByIndex
	symDeviceIsMigDeviceHandle
	symDeviceGetDeviceHandleFromMigDeviceHandle
	symDeviceGetGpuInstanceId
	symDeviceGetComputeInstanceId
	symDeviceGetAttributes
	symDeviceGetSamples
	symDeviceGetAccountingMode
	symDeviceSetAccountingMode
	symDeviceGetAccountingPids
	symDeviceGetAccountingStats
	symDeviceGetAccountingBufferSize
	symDeviceGetVirtualizationMode
	symDeviceGetActiveVgpus
	symDeviceGetVgpuUtilization
	symDeviceGetVgpuProcessUtilization
	symVgpuInstanceGetUUID
	symVgpuInstanceGetVmID
	symVgpuInstanceGetVmDriverVersion
	symVgpuInstanceGetType
	symVgpuTypeGetName
	symVgpuTypeGetClass
	symVgpuTypeGetFramebufferSize
	symVgpuInstanceGetFbUsage
	symVgpuInstanceGetFrameRateLimit
	symVgpuInstanceGetEncoderCapacity
	symVgpuInstanceGetEccMode
	symVgpuInstanceGetGpuInstanceId
	symVgpuInstanceGetPlacementId
	symVgpuInstanceGetLicenseInfo
	symVgpuInstanceGetAccountingMode
	symVgpuInstanceGetAccountingPids
	symVgpuInstanceGetAccountingStats
	symVgpuInstanceClearAccountingPids
	numSymbols
)

// symbolNames are the symbols' names, as the driver exports them (the
// unversioned name of a function go-nvml binds to its newest version).
var symbolNames = [numSymbols]string{
	symSystemGetDriverVersion:                   "nvmlSystemGetDriverVersion",
	symSystemGetNVMLVersion:                     "nvmlSystemGetNVMLVersion",
	symSystemGetCudaDriverVersion:               "nvmlSystemGetCudaDriverVersion",
	symDeviceGetCount:                           "nvmlDeviceGetCount",
	symDeviceGetHandleByIndex:                   "nvmlDeviceGetHandleByIndex",
	symDeviceGetHandleByUUID:                    "nvmlDeviceGetHandleByUUID",
	symDeviceGetHandleByPciBusId:                "nvmlDeviceGetHandleByPciBusId",
	symDeviceGetName:                            "nvmlDeviceGetName",
	symDeviceGetUUID:                            "nvmlDeviceGetUUID",
	symDeviceGetPciInfo:                         "nvmlDeviceGetPciInfo",
	symDeviceGetSerial:                          "nvmlDeviceGetSerial",
	symDeviceGetMinorNumber:                     "nvmlDeviceGetMinorNumber",
	symDeviceGetIndex:                           "nvmlDeviceGetIndex",
	symDeviceGetCudaComputeCapability:           "nvmlDeviceGetCudaComputeCapability",
	symDeviceGetMemoryInfo:                      "nvmlDeviceGetMemoryInfo",
	symDeviceGetMemoryInfo_v2:                   "nvmlDeviceGetMemoryInfo_v2",
	symDeviceGetBAR1MemoryInfo:                  "nvmlDeviceGetBAR1MemoryInfo",
	symDeviceGetUtilizationRates:                "nvmlDeviceGetUtilizationRates",
	symDeviceGetEncoderUtilization:              "nvmlDeviceGetEncoderUtilization",
	symDeviceGetDecoderUtilization:              "nvmlDeviceGetDecoderUtilization",
	symDeviceGetClockInfo:                       "nvmlDeviceGetClockInfo",
	symDeviceGetMaxClockInfo:                    "nvmlDeviceGetMaxClockInfo",
	symDeviceGetFanSpeed:                        "nvmlDeviceGetFanSpeed",
	symDeviceGetTemperature:                     "nvmlDeviceGetTemperature",
	symDeviceGetPowerUsage:                      "nvmlDeviceGetPowerUsage",
	symDeviceGetPowerManagementLimit:            "nvmlDeviceGetPowerManagementLimit",
	symDeviceGetPcieThroughput:                  "nvmlDeviceGetPcieThroughput",
	symDeviceGetDisplayActive:                   "nvmlDeviceGetDisplayActive",
	symDeviceGetDisplayMode:                     "nvmlDeviceGetDisplayMode",
	symDeviceGetPersistenceMode:                 "nvmlDeviceGetPersistenceMode",
	symDeviceGetPerformanceState:                "nvmlDeviceGetPerformanceState",
	symDeviceGetComputeMode:                     "nvmlDeviceGetComputeMode",
	symDeviceGetTotalEccErrors:                  "nvmlDeviceGetTotalEccErrors",
	symDeviceGetMigMode:                         "nvmlDeviceGetMigMode",
	symDeviceGetFieldValues:                     "nvmlDeviceGetFieldValues",
	symDeviceGetComputeRunningProcesses:         "nvmlDeviceGetComputeRunningProcesses",
	symDeviceGetGraphicsRunningProcesses:        "nvmlDeviceGetGraphicsRunningProcesses",
	symDeviceGetMPSComputeRunningProcesses:      "nvmlDeviceGetMPSComputeRunningProcesses",
	symDeviceGetProcessUtilization:              "nvmlDeviceGetProcessUtilization",
	symDeviceGetMaxMigDeviceCount:               "nvmlDeviceGetMaxMigDeviceCount",
	symDeviceGetMigDeviceHandleByIndex:          "nvmlDeviceGetMigDeviceHandleByIndex",
	symDeviceIsMigDeviceHandle:                  "nvmlDeviceIsMigDeviceHandle",
	symDeviceGetDeviceHandleFromMigDeviceHandle: "nvmlDeviceGetDeviceHandleFromMigDeviceHandle",
	symDeviceGetGpuInstanceId:                   "nvmlDeviceGetGpuInstanceId",
	symDeviceGetComputeInstanceId:               "nvmlDeviceGetComputeInstanceId",
	symDeviceGetAttributes:                      "nvmlDeviceGetAttributes",
	symDeviceGetSamples:                         "nvmlDeviceGetSamples",
	symDeviceGetAccountingMode:                  "nvmlDeviceGetAccountingMode",
	symDeviceSetAccountingMode:                  "nvmlDeviceSetAccountingMode",
	symDeviceGetAccountingPids:                  "nvmlDeviceGetAccountingPids",
	symDeviceGetAccountingStats:                 "nvmlDeviceGetAccountingStats",
	symDeviceGetAccountingBufferSize:            "nvmlDeviceGetAccountingBufferSize",
	symDeviceGetVirtualizationMode:              "nvmlDeviceGetVirtualizationMode",
	symDeviceGetActiveVgpus:                     "nvmlDeviceGetActiveVgpus",
	symDeviceGetVgpuUtilization:                 "nvmlDeviceGetVgpuUtilization",
	symDeviceGetVgpuProcessUtilization:          "nvmlDeviceGetVgpuProcessUtilization",
	symVgpuInstanceGetUUID:                      "nvmlVgpuInstanceGetUUID",
	symVgpuInstanceGetVmID:                      "nvmlVgpuInstanceGetVmID",
	symVgpuInstanceGetVmDriverVersion:           "nvmlVgpuInstanceGetVmDriverVersion",
	symVgpuInstanceGetType:                      "nvmlVgpuInstanceGetType",
	symVgpuTypeGetName:                          "nvmlVgpuTypeGetName",
	symVgpuTypeGetClass:                         "nvmlVgpuTypeGetClass",
	symVgpuTypeGetFramebufferSize:               "nvmlVgpuTypeGetFramebufferSize",
	symVgpuInstanceGetFbUsage:                   "nvmlVgpuInstanceGetFbUsage",
	symVgpuInstanceGetFrameRateLimit:            "nvmlVgpuInstanceGetFrameRateLimit",
	symVgpuInstanceGetEncoderCapacity:           "nvmlVgpuInstanceGetEncoderCapacity",
	symVgpuInstanceGetEccMode:                   "nvmlVgpuInstanceGetEccMode",
	symVgpuInstanceGetGpuInstanceId:             "nvmlVgpuInstanceGetGpuInstanceId",
	symVgpuInstanceGetPlacementId:               "nvmlVgpuInstanceGetPlacementId",
	symVgpuInstanceGetLicenseInfo:               "nvmlVgpuInstanceGetLicenseInfo",
	symVgpuInstanceGetAccountingMode:            "nvmlVgpuInstanceGetAccountingMode",
	symVgpuInstanceGetAccountingPids:            "nvmlVgpuInstanceGetAccountingPids",
	symVgpuInstanceGetAccountingStats:           "nvmlVgpuInstanceGetAccountingStats",
	symVgpuInstanceClearAccountingPids:          "nvmlVgpuInstanceClearAccountingPids",
}
