//go:build ignore

// This file is the input of go tool cgo -godefs, which writes ztypes.go:
// Go types with the exact layout of state.h. Regenerate after changing
// state.h with
//
//	go generate ./fakegpu/internal/libnvml
//
// (TestGeneratedTypesMatchHeader fails while they differ.)

package libnvml

/*
#include "state.h"
*/
import "C"

// Sizes and limits of the state file.
const (
	Layout       = C.NVGO_FAKE_LAYOUT
	Page         = C.NVGO_FAKE_PAGE
	MaxDevices   = C.NVGO_FAKE_MAX_DEVICES
	MaxProcs     = C.NVGO_FAKE_MAX_PROCS
	MaxNames     = C.NVGO_FAKE_MAX_NAMES
	MaxSamples   = C.NVGO_FAKE_MAX_SAMPLES
	MaxPSamples  = C.NVGO_FAKE_MAX_PSAMPLES
	MaxAcct      = C.NVGO_FAKE_MAX_ACCT
	MaxFields    = C.NVGO_FAKE_MAX_FIELDS
	MaxVgpus     = C.NVGO_FAKE_MAX_VGPUS
	MaxVtypes    = C.NVGO_FAKE_MAX_VTYPES
	MaxVSamples  = C.NVGO_FAKE_MAX_VSAMPLES
	MaxVPSamples = C.NVGO_FAKE_MAX_VPSAMPLES
	MaxMissing   = C.NVGO_FAKE_MAX_MISSING
	MIGSlots     = C.NVGO_FAKE_MIG_SLOTS
	OtherScope   = C.NVGO_FAKE_OTHER_SCOPE
)

// Device call slots (enum nvgo_fake_call).
const (
	NFHandle                 = C.NF_HANDLE
	NFName                   = C.NF_NAME
	NFUUID                   = C.NF_UUID
	NFSerial                 = C.NF_SERIAL
	NFIndex                  = C.NF_INDEX
	NFMinor                  = C.NF_MINOR
	NFBrand                  = C.NF_BRAND
	NFArch                   = C.NF_ARCH
	NFCC                     = C.NF_CC
	NFPCI                    = C.NF_PCI
	NFMemory                 = C.NF_MEMORY
	NFMemoryV2               = C.NF_MEMORY_V2
	NFBAR1                   = C.NF_BAR1
	NFUtilization            = C.NF_UTILIZATION
	NFEncoder                = C.NF_ENCODER
	NFDecoder                = C.NF_DECODER
	NFClockGraphics          = C.NF_CLOCK_GRAPHICS
	NFClockOther             = C.NF_CLOCK_OTHER
	NFMaxClockGraphics       = C.NF_MAXCLOCK_GRAPHICS
	NFMaxClockOther          = C.NF_MAXCLOCK_OTHER
	NFFan                    = C.NF_FAN
	NFFan0                   = C.NF_FAN0
	NFFanOther               = C.NF_FAN_OTHER
	NFNumFans                = C.NF_NUM_FANS
	NFTemperature            = C.NF_TEMPERATURE
	NFTemperatureOther       = C.NF_TEMPERATURE_OTHER
	NFPower                  = C.NF_POWER
	NFPowerLimit             = C.NF_POWER_LIMIT
	NFEnforcedLimit          = C.NF_ENFORCED_LIMIT
	NFDefaultLimit           = C.NF_DEFAULT_LIMIT
	NFEnergy                 = C.NF_ENERGY
	NFPCIeTX                 = C.NF_PCIE_TX
	NFPCIeRX                 = C.NF_PCIE_RX
	NFPCIeOther              = C.NF_PCIE_OTHER
	NFNVLinkState            = C.NF_NVLINK_STATE
	NFNVLinkStateOther       = C.NF_NVLINK_STATE_OTHER
	NFDisplayActive          = C.NF_DISPLAY_ACTIVE
	NFDisplayMode            = C.NF_DISPLAY_MODE
	NFPersistence            = C.NF_PERSISTENCE
	NFPState                 = C.NF_PSTATE
	NFPowerState             = C.NF_POWER_STATE
	NFComputeMode            = C.NF_COMPUTE_MODE
	NFECCUncorrectedVolatile = C.NF_ECC_UNCORRECTED_VOLATILE
	NFECCOther               = C.NF_ECC_OTHER
	NFECCMode                = C.NF_ECC_MODE
	NFMIGMode                = C.NF_MIG_MODE
	NFMaxMIG                 = C.NF_MAX_MIG
	NFIsMIG                  = C.NF_IS_MIG
	NFMIGParent              = C.NF_MIG_PARENT
	NFGPUInstance            = C.NF_GPU_INSTANCE
	NFComputeInstance        = C.NF_COMPUTE_INSTANCE
	NFAttributes             = C.NF_ATTRIBUTES
	NFMIGHandleOther         = C.NF_MIG_HANDLE_OTHER
	NFFieldValues            = C.NF_FIELD_VALUES
	NFComputeProcs           = C.NF_COMPUTE_PROCS
	NFGraphicsProcs          = C.NF_GRAPHICS_PROCS
	NFMPSProcs               = C.NF_MPS_PROCS
	NFProcessUtilization     = C.NF_PROCESS_UTILIZATION
	NFSamplesGPU             = C.NF_SAMPLES_GPU
	NFSamplesMem             = C.NF_SAMPLES_MEM
	NFSamplesOther           = C.NF_SAMPLES_OTHER
	NFAccountingMode         = C.NF_ACCOUNTING_MODE
	NFSetAccounting          = C.NF_SET_ACCOUNTING
	NFAccountingPIDs         = C.NF_ACCOUNTING_PIDS
	NFAccountingStatsOther   = C.NF_ACCOUNTING_STATS_OTHER
	NFAccountingBuffer       = C.NF_ACCOUNTING_BUFFER
	NFClearAccounting        = C.NF_CLEAR_ACCOUNTING
	NFVirtualization         = C.NF_VIRTUALIZATION
	NFActiveVgpus            = C.NF_ACTIVE_VGPUS
	NFVgpuUtilization        = C.NF_VGPU_UTILIZATION
	NFVgpuProcessUtilization = C.NF_VGPU_PROCESS_UTILIZATION
	NFDriverModel            = C.NF_DRIVER_MODEL
	NFSetPersistence         = C.NF_SET_PERSISTENCE
	NFCount                  = C.NF_COUNT
)

// vGPU instance call slots (enum nvgo_fake_vgpu_call).
const (
	NVUUID                 = C.NV_UUID
	NVVMID                 = C.NV_VM_ID
	NVVMDriver             = C.NV_VM_DRIVER
	NVType                 = C.NV_TYPE
	NVFBUsage              = C.NV_FB_USAGE
	NVFrameRateLimit       = C.NV_FRAME_RATE_LIMIT
	NVEncoderCapacity      = C.NV_ENCODER_CAPACITY
	NVECC                  = C.NV_ECC
	NVGPUInstance          = C.NV_GPU_INSTANCE
	NVPlacement            = C.NV_PLACEMENT
	NVLicense              = C.NV_LICENSE
	NVLicenseStatus        = C.NV_LICENSE_STATUS
	NVMdevUUID             = C.NV_MDEV_UUID
	NVAccountingMode       = C.NV_ACCOUNTING_MODE
	NVAccountingPIDs       = C.NV_ACCOUNTING_PIDS
	NVAccountingStatsOther = C.NV_ACCOUNTING_STATS_OTHER
	NVClearAccounting      = C.NV_CLEAR_ACCOUNTING
	NVCount                = C.NV_COUNT
)

// Process lists.
const (
	ListCompute  = C.NVGO_FAKE_COMPUTE
	ListGraphics = C.NVGO_FAKE_GRAPHICS
	ListMPS      = C.NVGO_FAKE_MPS
	Lists        = C.NVGO_FAKE_LISTS
)

type (
	Range    C.nvgo_fake_range_t
	Proc     C.nvgo_fake_proc_t
	Name     C.nvgo_fake_name_t
	Sample   C.nvgo_fake_sample_t
	PSample  C.nvgo_fake_psample_t
	Acct     C.nvgo_fake_acct_t
	Field    C.nvgo_fake_field_t
	Vgpu     C.nvgo_fake_vgpu_t
	Vtype    C.nvgo_fake_vtype_t
	VSample  C.nvgo_fake_vsample_t
	VPSample C.nvgo_fake_vpsample_t
	Device   C.nvgo_fake_device_t
	State    C.nvgo_fake_state_t
	Header   C.nvgo_fake_header_t
)
