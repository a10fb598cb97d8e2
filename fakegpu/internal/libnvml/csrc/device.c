/* A device's scalar queries: identity, memory, utilization, clocks, power,
 * modes, MIG identity. Each answers from a copy of the device's record. */
#include "fake.h"

#define NEED(p)                                                   \
	do {                                                      \
		if ((p) == NULL)                                  \
			return NVML_ERROR_INVALID_ARGUMENT;       \
	} while (0)

/* A string query: name, UUID, serial. */
#define STRING_QUERY(fn, slot, member)                                             \
	EXPORT nvmlReturn_t fn(nvmlDevice_t device, char *out, unsigned int length) \
	{                                                                          \
		NEED(out);                                                         \
		SNAP_DEVICE(fn, device, slot);                                     \
		return nvgo_copy_string(out, length, d.member, sizeof d.member);   \
	}

STRING_QUERY(nvmlDeviceGetName, NF_NAME, name)
STRING_QUERY(nvmlDeviceGetUUID, NF_UUID, uuid)
STRING_QUERY(nvmlDeviceGetSerial, NF_SERIAL, serial)

/* A query of one unsigned int (or an enum of that size). */
#define UINT_QUERY(fn, type, slot, expr)                           \
	EXPORT nvmlReturn_t fn(nvmlDevice_t device, type *out)     \
	{                                                          \
		NEED(out);                                         \
		SNAP_DEVICE(fn, device, slot);                     \
		*out = (type)(expr);                               \
		return NVML_SUCCESS;                               \
	}

UINT_QUERY(nvmlDeviceGetIndex, unsigned int, NF_INDEX, d.index)
UINT_QUERY(nvmlDeviceGetMinorNumber, unsigned int, NF_MINOR, d.minor)
UINT_QUERY(nvmlDeviceGetBrand, nvmlBrandType_t, NF_BRAND, d.brand)
UINT_QUERY(nvmlDeviceGetFanSpeed, unsigned int, NF_FAN, d.fan)
UINT_QUERY(nvmlDeviceGetPowerUsage, unsigned int, NF_POWER, d.power)
UINT_QUERY(nvmlDeviceGetPowerManagementLimit, unsigned int, NF_POWER_LIMIT, d.power_limit)
UINT_QUERY(nvmlDeviceGetEnforcedPowerLimit, unsigned int, NF_ENFORCED_LIMIT, d.enforced_limit)
UINT_QUERY(nvmlDeviceGetPowerManagementDefaultLimit, unsigned int, NF_DEFAULT_LIMIT, d.default_limit)
UINT_QUERY(nvmlDeviceGetTotalEnergyConsumption, unsigned long long, NF_ENERGY, d.energy)
UINT_QUERY(nvmlDeviceGetDisplayActive, nvmlEnableState_t, NF_DISPLAY_ACTIVE, d.display_active)
UINT_QUERY(nvmlDeviceGetDisplayMode, nvmlEnableState_t, NF_DISPLAY_MODE, d.display_mode)
UINT_QUERY(nvmlDeviceGetPersistenceMode, nvmlEnableState_t, NF_PERSISTENCE, d.persistence)
UINT_QUERY(nvmlDeviceGetPerformanceState, nvmlPstates_t, NF_PSTATE, d.pstate)
UINT_QUERY(nvmlDeviceGetPowerState, nvmlPstates_t, NF_POWER_STATE, d.power_state)
UINT_QUERY(nvmlDeviceGetComputeMode, nvmlComputeMode_t, NF_COMPUTE_MODE, d.compute_mode)
UINT_QUERY(nvmlDeviceGetAccountingMode, nvmlEnableState_t, NF_ACCOUNTING_MODE, d.accounting_mode)
UINT_QUERY(nvmlDeviceGetAccountingBufferSize, unsigned int, NF_ACCOUNTING_BUFFER, d.accounting_buffer)
UINT_QUERY(nvmlDeviceGetVirtualizationMode, nvmlGpuVirtualizationMode_t, NF_VIRTUALIZATION, d.virtualization)
#if NVGO_DRIVER >= 450
UINT_QUERY(nvmlDeviceGetArchitecture, nvmlDeviceArchitecture_t, NF_ARCH, d.architecture)
#endif
#if NVGO_DRIVER >= 510
UINT_QUERY(nvmlDeviceGetNumFans, unsigned int, NF_NUM_FANS, d.num_fans)
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor)
{
	NEED(major);
	NEED(minor);
	SNAP_DEVICE(nvmlDeviceGetCudaComputeCapability, device, NF_CC);
	*major = d.cc_major;
	*minor = d.cc_minor;
	return NVML_SUCCESS;
}

static void fill_pci(const nvgo_fake_device_t *d, nvmlPciInfo_t *pci)
{
	memset(pci, 0, sizeof *pci);
	nvgo_copy_string(pci->busIdLegacy, sizeof pci->busIdLegacy, d->bus_id_legacy, sizeof d->bus_id_legacy);
	nvgo_copy_string(pci->busId, sizeof pci->busId, d->bus_id, sizeof d->bus_id);
	pci->domain = d->pci_domain;
	pci->bus = d->pci_bus;
	pci->device = d->pci_device;
	pci->pciDeviceId = d->pci_device_id;
	pci->pciSubSystemId = d->pci_subsystem_id;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	NEED(pci);
	SNAP_DEVICE(nvmlDeviceGetPciInfo, device, NF_PCI);
	/* The first version's struct ended before pciSubSystemId. */
	nvmlPciInfo_t full;
	fill_pci(&d, &full);
	memcpy(pci, &full, offsetof(nvmlPciInfo_t, pciSubSystemId));
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	NEED(pci);
	SNAP_DEVICE(nvmlDeviceGetPciInfo_v2, device, NF_PCI);
	fill_pci(&d, pci);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	NEED(pci);
	SNAP_DEVICE(nvmlDeviceGetPciInfo_v3, device, NF_PCI);
	fill_pci(&d, pci);
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	NEED(memory);
	SNAP_DEVICE(nvmlDeviceGetMemoryInfo, device, NF_MEMORY);
	memory->total = d.memory_v1_total;
	memory->free = d.memory_v1_free;
	memory->used = d.memory_v1_used;
	return NVML_SUCCESS;
}

#if NVGO_DRIVER >= 510
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	DEVICE_ENTER(nvmlDeviceGetMemoryInfo_v2, device, rec);
	NEED(memory);
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	nvgo_fake_device_t d;
	nvmlReturn_t r = nvgo_snap(rec, &d, NULL);
	if (r != NVML_SUCCESS)
		return r;
	if (d.ret[NF_MEMORY_V2] != NVML_SUCCESS)
		return (nvmlReturn_t)d.ret[NF_MEMORY_V2];
	memory->total = d.memory_total;
	memory->reserved = d.memory_reserved;
	memory->free = d.memory_free;
	memory->used = d.memory_used;
	return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetBAR1MemoryInfo(nvmlDevice_t device, nvmlBAR1Memory_t *bar1)
{
	NEED(bar1);
	SNAP_DEVICE(nvmlDeviceGetBAR1MemoryInfo, device, NF_BAR1);
	bar1->bar1Total = d.bar1_total;
	bar1->bar1Free = d.bar1_free;
	bar1->bar1Used = d.bar1_used;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
	NEED(u);
	SNAP_DEVICE(nvmlDeviceGetUtilizationRates, device, NF_UTILIZATION);
	u->gpu = d.util_gpu;
	u->memory = d.util_memory;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *u, unsigned int *period)
{
	NEED(u);
	NEED(period);
	SNAP_DEVICE(nvmlDeviceGetEncoderUtilization, device, NF_ENCODER);
	*u = d.encoder;
	*period = d.encoder_period;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t device, unsigned int *u, unsigned int *period)
{
	NEED(u);
	NEED(period);
	SNAP_DEVICE(nvmlDeviceGetDecoderUtilization, device, NF_DECODER);
	*u = d.decoder;
	*period = d.decoder_period;
	return NVML_SUCCESS;
}

/* clock_slot is the call slot of a clock type: graphics, SM, memory, video
 * are 0..3 after base; anything else is base's OTHER slot. */
static int clock_slot(nvmlClockType_t t, int base)
{
	return (unsigned)t <= NVML_CLOCK_VIDEO ? base + (int)t : base + 4;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	NEED(clock);
	int slot = clock_slot(type, NF_CLOCK_GRAPHICS);
	SNAP_DEVICE(nvmlDeviceGetClockInfo, device, slot);
	*clock = d.clock[type];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock)
{
	NEED(clock);
	int slot = clock_slot(type, NF_MAXCLOCK_GRAPHICS);
	SNAP_DEVICE(nvmlDeviceGetMaxClockInfo, device, slot);
	*clock = d.max_clock[type];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed)
{
	NEED(speed);
	SNAP_DEVICE(nvmlDeviceGetFanSpeed_v2, device, fan == 0 ? NF_FAN0 : NF_FAN_OTHER);
	*speed = d.fan0;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int *temp)
{
	NEED(temp);
	SNAP_DEVICE(nvmlDeviceGetTemperature, device, sensor == NVML_TEMPERATURE_GPU ? NF_TEMPERATURE : NF_TEMPERATURE_OTHER);
	*temp = d.temperature;
	return NVML_SUCCESS;
}

#if NVGO_DRIVER >= 570
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *t)
{
	DEVICE_ENTER(nvmlDeviceGetTemperatureV, device, rec);
	NEED(t);
	if (t->version != nvmlTemperature_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	nvgo_fake_device_t d;
	nvmlReturn_t r = nvgo_snap(rec, &d, NULL);
	if (r != NVML_SUCCESS)
		return r;
	r = (nvmlReturn_t)d.ret[t->sensorType == NVML_TEMPERATURE_GPU ? NF_TEMPERATURE : NF_TEMPERATURE_OTHER];
	if (r == NVML_SUCCESS)
		t->temperature = (int)d.temperature;
	return r;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value)
{
	NEED(value);
	int slot = counter == NVML_PCIE_UTIL_TX_BYTES ? NF_PCIE_TX : counter == NVML_PCIE_UTIL_RX_BYTES ? NF_PCIE_RX : NF_PCIE_OTHER;
	SNAP_DEVICE(nvmlDeviceGetPcieThroughput, device, slot);
	*value = counter == NVML_PCIE_UTIL_TX_BYTES ? d.pcie_tx : d.pcie_rx;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link, nvmlEnableState_t *active)
{
	NEED(active);
	DEVICE_ENTER(nvmlDeviceGetNvLinkState, device, rec);
	nvgo_fake_device_t d;
	nvmlReturn_t r = nvgo_snap(rec, &d, NULL);
	if (r != NVML_SUCCESS)
		return r;
	r = (nvmlReturn_t)d.ret[link < d.nvlinks ? NF_NVLINK_STATE : NF_NVLINK_STATE_OTHER];
	if (r == NVML_SUCCESS)
		*active = NVML_FEATURE_ENABLED;
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, nvmlMemoryErrorType_t et, nvmlEccCounterType_t ct,
						unsigned long long *count)
{
	NEED(count);
	int k = -1;
	if ((et == NVML_MEMORY_ERROR_TYPE_UNCORRECTED || et == NVML_MEMORY_ERROR_TYPE_CORRECTED) &&
	    (ct == NVML_VOLATILE_ECC || ct == NVML_AGGREGATE_ECC))
		k = (et == NVML_MEMORY_ERROR_TYPE_CORRECTED ? 2 : 0) + (ct == NVML_AGGREGATE_ECC ? 1 : 0);
	SNAP_DEVICE(nvmlDeviceGetTotalEccErrors, device, k < 0 ? NF_ECC_OTHER : NF_ECC_UNCORRECTED_VOLATILE + k);
	*count = d.ecc[k];
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, nvmlEnableState_t *current, nvmlEnableState_t *pending)
{
	NEED(current);
	NEED(pending);
	SNAP_DEVICE(nvmlDeviceGetEccMode, device, NF_ECC_MODE);
	*current = (nvmlEnableState_t)d.ecc_current;
	*pending = (nvmlEnableState_t)d.ecc_pending;
	return NVML_SUCCESS;
}

static nvmlReturn_t driver_model(int fn, nvmlDevice_t device, nvmlDriverModel_t *current, nvmlDriverModel_t *pending)
{
	if (current == NULL || pending == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	uint32_t rec;
	nvmlReturn_t r = nvgo_record(device, &rec);
	if (r != NVML_SUCCESS)
		return r;
	nvgo_fake_device_t d;
	if ((r = nvgo_snap(rec, &d, NULL)) != NVML_SUCCESS)
		return r;
	if (d.ret[NF_DRIVER_MODEL] != NVML_SUCCESS)
		return (nvmlReturn_t)d.ret[NF_DRIVER_MODEL];
	*current = *pending = (nvmlDriverModel_t)d.driver_model;
	(void)fn;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetDriverModel(nvmlDevice_t device, nvmlDriverModel_t *current, nvmlDriverModel_t *pending)
{
	ENTER(nvmlDeviceGetDriverModel);
	return driver_model(FN_nvmlDeviceGetDriverModel, device, current, pending);
}

#if NVGO_DRIVER >= 555
EXPORT nvmlReturn_t nvmlDeviceGetDriverModel_v2(nvmlDevice_t device, nvmlDriverModel_t *current, nvmlDriverModel_t *pending)
{
	ENTER(nvmlDeviceGetDriverModel_v2);
	return driver_model(FN_nvmlDeviceGetDriverModel_v2, device, current, pending);
}
#endif

/* The C door is read-only: the fleet's state belongs to its Go writer, so
 * requests to change it are refused as they are without root. */
static nvmlReturn_t refuse_change(nvmlDevice_t device, int slot)
{
	uint32_t rec;
	nvmlReturn_t r = nvgo_record(device, &rec);
	if (r != NVML_SUCCESS)
		return r;
	nvgo_fake_device_t d;
	if ((r = nvgo_snap(rec, &d, NULL)) != NVML_SUCCESS)
		return r;
	return d.ret[slot] != NVML_SUCCESS ? (nvmlReturn_t)d.ret[slot] : NVML_ERROR_NO_PERMISSION;
}

EXPORT nvmlReturn_t nvmlDeviceSetPersistenceMode(nvmlDevice_t device, nvmlEnableState_t mode)
{
	(void)mode;
	ENTER(nvmlDeviceSetPersistenceMode);
	return refuse_change(device, NF_SET_PERSISTENCE);
}

EXPORT nvmlReturn_t nvmlDeviceSetAccountingMode(nvmlDevice_t device, nvmlEnableState_t mode)
{
	(void)mode;
	ENTER(nvmlDeviceSetAccountingMode);
	return refuse_change(device, NF_SET_ACCOUNTING);
}

EXPORT nvmlReturn_t nvmlDeviceClearAccountingPids(nvmlDevice_t device)
{
	ENTER(nvmlDeviceClearAccountingPids);
	return refuse_change(device, NF_CLEAR_ACCOUNTING);
}

/* ---- MIG ---- */

#if NVGO_DRIVER >= 450
EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned int *current, unsigned int *pending)
{
	NEED(current);
	NEED(pending);
	SNAP_DEVICE(nvmlDeviceGetMigMode, device, NF_MIG_MODE);
	*current = d.mig_current;
	*pending = d.mig_pending;
	return NVML_SUCCESS;
}

UINT_QUERY(nvmlDeviceGetMaxMigDeviceCount, unsigned int, NF_MAX_MIG, d.max_mig)
UINT_QUERY(nvmlDeviceIsMigDeviceHandle, unsigned int, NF_IS_MIG, d.is_mig)
UINT_QUERY(nvmlDeviceGetGpuInstanceId, unsigned int, NF_GPU_INSTANCE, d.gpu_instance)
UINT_QUERY(nvmlDeviceGetComputeInstanceId, unsigned int, NF_COMPUTE_INSTANCE, d.compute_instance)

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int index, nvmlDevice_t *mig)
{
	NEED(mig);
	DEVICE_ENTER(nvmlDeviceGetMigDeviceHandleByIndex, device, rec);
	nvgo_fake_device_t d;
	nvmlReturn_t r = nvgo_snap(rec, &d, NULL);
	if (r != NVML_SUCCESS)
		return r;
	if (index >= NVGO_FAKE_MIG_SLOTS)
		return (nvmlReturn_t)d.ret[NF_MIG_HANDLE_OTHER];
	r = (nvmlReturn_t)d.mig_slot_ret[index];
	if (r == NVML_SUCCESS) {
		if (d.mig_slot[index] < 0 || d.mig_slot[index] >= NVGO_FAKE_MAX_DEVICES)
			return NVML_ERROR_UNKNOWN;
		*mig = nvgo_handle((uint32_t)d.mig_slot[index]);
	}
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t device, nvmlDevice_t *parent)
{
	NEED(parent);
	SNAP_DEVICE(nvmlDeviceGetDeviceHandleFromMigDeviceHandle, device, NF_MIG_PARENT);
	if (d.parent >= NVGO_FAKE_MAX_DEVICES)
		return NVML_ERROR_UNKNOWN;
	*parent = nvgo_handle(d.parent);
	return NVML_SUCCESS;
}

static nvmlReturn_t attributes(nvmlDevice_t device, nvmlDeviceAttributes_t *a)
{
	uint32_t rec;
	nvmlReturn_t r = nvgo_record(device, &rec);
	if (r != NVML_SUCCESS)
		return r;
	nvgo_fake_device_t d;
	if ((r = nvgo_snap(rec, &d, NULL)) != NVML_SUCCESS)
		return r;
	if (d.ret[NF_ATTRIBUTES] != NVML_SUCCESS)
		return (nvmlReturn_t)d.ret[NF_ATTRIBUTES];
	a->multiprocessorCount = d.attr_sm;
	a->sharedCopyEngineCount = d.attr_ce;
	a->sharedDecoderCount = d.attr_dec;
	a->sharedEncoderCount = d.attr_enc;
	a->sharedJpegCount = d.attr_jpeg;
	a->sharedOfaCount = d.attr_ofa;
	a->gpuInstanceSliceCount = d.attr_gi_slices;
	a->computeInstanceSliceCount = d.attr_ci_slices;
	a->memorySizeMB = d.attr_memory_mib;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetAttributes(nvmlDevice_t device, nvmlDeviceAttributes_t *a)
{
	ENTER(nvmlDeviceGetAttributes);
	NEED(a);
	return attributes(device, a);
}

#endif

#if NVGO_DRIVER >= 455
EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t *a)
{
	ENTER(nvmlDeviceGetAttributes_v2);
	NEED(a);
	return attributes(device, a);
}
#endif
