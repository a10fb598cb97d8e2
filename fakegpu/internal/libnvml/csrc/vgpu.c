/* vGPU hosts: active instances, their utilization, and the instances' and
 * types' own queries. Instances and types are named by their IDs. */
#include "fake.h"

#define NEED(p)                                                   \
	do {                                                      \
		if ((p) == NULL)                                  \
			return NVML_ERROR_INVALID_ARGUMENT;       \
	} while (0)

/* snap_vgpu copies the record of instance id: NOT_FOUND when there is none
 * (never created, or destroyed). */
static nvmlReturn_t snap_vgpu(unsigned int id, nvgo_fake_vgpu_t *out)
{
	int found;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t n = nvgo_clamp(st->vgpu_count, NVGO_FAKE_MAX_VGPUS);
		found = 0;
		for (uint32_t i = 0; i < n && !found; i++)
			if (st->vgpus[i].id == id) {
				*out = st->vgpus[i];
				found = 1;
			}
	} while (nvgo_retry(s));
	return found ? NVML_SUCCESS : NVML_ERROR_NOT_FOUND;
}

#define SNAP_VGPU(fn, id, slot)                                       \
	ENTER(fn);                                                    \
	nvgo_fake_vgpu_t v;                                           \
	do {                                                          \
		nvmlReturn_t snap_ = snap_vgpu((id), &v);             \
		if (snap_ != NVML_SUCCESS)                            \
			return snap_;                                 \
		if (v.ret[(slot)] != NVML_SUCCESS)                    \
			return (nvmlReturn_t)v.ret[(slot)];           \
	} while (0)

EXPORT nvmlReturn_t nvmlDeviceGetActiveVgpus(nvmlDevice_t device, unsigned int *count, nvmlVgpuInstance_t *out)
{
	DEVICE_ENTER(nvmlDeviceGetActiveVgpus, device, rec);
	NEED(count);
	unsigned int room = out == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		r = d == NULL ? NVML_ERROR_INVALID_ARGUMENT : (nvmlReturn_t)d->ret[NF_ACTIVE_VGPUS];
		if (r != NVML_SUCCESS)
			continue;
		nvgo_fake_range_t rg = nvgo_range(d->vgpus, NVGO_FAKE_MAX_VGPUS);
		n = rg.count;
		if (n <= room)
			for (uint32_t i = 0; i < n; i++)
				out[i] = st->vgpus[rg.first + i].id;
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	*count = n;
	return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetVgpuUtilization(nvmlDevice_t device, unsigned long long lastSeen,
						 nvmlValueType_t *valueType, unsigned int *count,
						 nvmlVgpuInstanceUtilizationSample_t *out)
{
	DEVICE_ENTER(nvmlDeviceGetVgpuUtilization, device, rec);
	if (valueType == NULL || count == NULL || (out != NULL && *count == 0))
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int room = out == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n = 0, instances = 0, vt = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		n = 0;
		r = d == NULL ? NVML_ERROR_INVALID_ARGUMENT : (nvmlReturn_t)d->ret[NF_VGPU_UTILIZATION];
		if (r != NVML_SUCCESS)
			continue;
		instances = nvgo_range(d->vgpus, NVGO_FAKE_MAX_VGPUS).count;
		vt = d->vsample_value_type;
		nvgo_fake_range_t rg = nvgo_range(d->vsamples, NVGO_FAKE_MAX_VSAMPLES);
		for (uint32_t i = 0; i < rg.count; i++) {
			const nvgo_fake_vsample_t *p = &st->vsamples[rg.first + i];
			if (p->timestamp <= lastSeen)
				continue;
			if (n < room) {
				nvmlVgpuInstanceUtilizationSample_t *o = &out[n];
				o->vgpuInstance = p->instance;
				o->timeStamp = p->timestamp;
				memcpy(&o->smUtil, &p->sm, 8);
				memcpy(&o->memUtil, &p->memory, 8);
				memcpy(&o->encUtil, &p->encoder, 8);
				memcpy(&o->decUtil, &p->decoder, 8);
			}
			n++;
		}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	*valueType = (nvmlValueType_t)vt;
	if (instances == 0) {
		*count = 0;
		return NVML_SUCCESS;
	}
	if (out == NULL || room < n) {
		*count = n > instances ? n : instances;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	if (n == 0)
		return NVML_ERROR_NOT_FOUND;
	*count = n;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetVgpuProcessUtilization(nvmlDevice_t device, unsigned long long lastSeen,
							unsigned int *count, nvmlVgpuProcessUtilizationSample_t *out)
{
	DEVICE_ENTER(nvmlDeviceGetVgpuProcessUtilization, device, rec);
	if (count == NULL || (out != NULL && *count == 0))
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int room = out == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		n = 0;
		r = d == NULL ? NVML_ERROR_INVALID_ARGUMENT : (nvmlReturn_t)d->ret[NF_VGPU_PROCESS_UTILIZATION];
		if (r != NVML_SUCCESS)
			continue;
		nvgo_fake_range_t rg = nvgo_range(d->vpsamples, NVGO_FAKE_MAX_VPSAMPLES);
		for (uint32_t i = 0; i < rg.count; i++) {
			const nvgo_fake_vpsample_t *p = &st->vpsamples[rg.first + i];
			if (p->timestamp <= lastSeen)
				continue;
			if (n < room) {
				nvmlVgpuProcessUtilizationSample_t *o = &out[n];
				o->vgpuInstance = p->instance;
				o->pid = p->pid;
				nvgo_copy_string(o->processName, sizeof o->processName, p->name, sizeof p->name);
				o->timeStamp = p->timestamp;
				o->smUtil = p->sm;
				o->memUtil = p->memory;
				o->encUtil = p->encoder;
				o->decUtil = p->decoder;
			}
			n++;
		}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	if (n == 0)
		return NVML_ERROR_NOT_FOUND;
	*count = n;
	return out == NULL || room < n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

/* ---- Instances ---- */

#define VGPU_STRING(fn, slot, member)                                                       \
	EXPORT nvmlReturn_t fn(nvmlVgpuInstance_t id, char *out, unsigned int size)          \
	{                                                                                   \
		SNAP_VGPU(fn, id, slot);                                                    \
		return nvgo_copy_string(out, size, v.member, sizeof v.member);              \
	}

VGPU_STRING(nvmlVgpuInstanceGetUUID, NV_UUID, uuid)
VGPU_STRING(nvmlVgpuInstanceGetMdevUUID, NV_MDEV_UUID, mdev_uuid)
VGPU_STRING(nvmlVgpuInstanceGetVmDriverVersion, NV_VM_DRIVER, vm_driver)

EXPORT nvmlReturn_t nvmlVgpuInstanceGetVmID(nvmlVgpuInstance_t id, char *out, unsigned int size,
					    nvmlVgpuVmIdType_t *idType)
{
	NEED(idType);
	SNAP_VGPU(nvmlVgpuInstanceGetVmID, id, NV_VM_ID);
	nvmlReturn_t r = nvgo_copy_string(out, size, v.vm_id, sizeof v.vm_id);
	if (r == NVML_SUCCESS)
		*idType = (nvmlVgpuVmIdType_t)v.vm_id_type;
	return r;
}

#define VGPU_UINT(fn, type, slot, expr)                                  \
	EXPORT nvmlReturn_t fn(nvmlVgpuInstance_t id, type *out)         \
	{                                                                \
		NEED(out);                                               \
		SNAP_VGPU(fn, id, slot);                                 \
		*out = (type)(expr);                                     \
		return NVML_SUCCESS;                                     \
	}

VGPU_UINT(nvmlVgpuInstanceGetType, nvmlVgpuTypeId_t, NV_TYPE, v.type_id)
VGPU_UINT(nvmlVgpuInstanceGetFbUsage, unsigned long long, NV_FB_USAGE, v.fb_usage)
VGPU_UINT(nvmlVgpuInstanceGetFrameRateLimit, unsigned int, NV_FRAME_RATE_LIMIT, v.frame_rate_limit)
VGPU_UINT(nvmlVgpuInstanceGetEncoderCapacity, unsigned int, NV_ENCODER_CAPACITY, v.encoder_capacity)
VGPU_UINT(nvmlVgpuInstanceGetLicenseStatus, unsigned int, NV_LICENSE_STATUS, v.license_status)
VGPU_UINT(nvmlVgpuInstanceGetAccountingMode, nvmlEnableState_t, NV_ACCOUNTING_MODE, v.accounting_mode)
#if NVGO_DRIVER >= 450
VGPU_UINT(nvmlVgpuInstanceGetEccMode, nvmlEnableState_t, NV_ECC, v.ecc)
#endif
#if NVGO_DRIVER >= 460
VGPU_UINT(nvmlVgpuInstanceGetGpuInstanceId, unsigned int, NV_GPU_INSTANCE, v.gpu_instance)
#endif

#if NVGO_DRIVER >= 550
EXPORT nvmlReturn_t nvmlVgpuInstanceGetPlacementId(nvmlVgpuInstance_t id, nvmlVgpuPlacementId_t *p)
{
	ENTER(nvmlVgpuInstanceGetPlacementId);
	NEED(p);
	if (p->version != nvmlVgpuPlacementId_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	nvgo_fake_vgpu_t v;
	nvmlReturn_t r = snap_vgpu(id, &v);
	if (r == NVML_SUCCESS)
		r = (nvmlReturn_t)v.ret[NV_PLACEMENT];
	if (r == NVML_SUCCESS)
		p->placementId = v.placement;
	return r;
}
#endif

__attribute__((unused)) static nvmlReturn_t license_info(nvmlVgpuInstance_t id, nvmlVgpuLicenseInfo_t *info)
{
	nvgo_fake_vgpu_t v;
	nvmlReturn_t r = snap_vgpu(id, &v);
	if (r == NVML_SUCCESS)
		r = (nvmlReturn_t)v.ret[NV_LICENSE];
	if (r != NVML_SUCCESS)
		return r;
	memset(info, 0, sizeof *info);
	info->isLicensed = (unsigned char)v.licensed;
	info->currentState = v.license_state;
	info->licenseExpiry.year = v.expiry_year;
	info->licenseExpiry.month = v.expiry_month;
	info->licenseExpiry.day = v.expiry_day;
	info->licenseExpiry.hour = v.expiry_hour;
	info->licenseExpiry.min = v.expiry_min;
	info->licenseExpiry.sec = v.expiry_sec;
	info->licenseExpiry.status = (unsigned char)v.expiry_status;
	return NVML_SUCCESS;
}

#if NVGO_DRIVER >= 495
EXPORT nvmlReturn_t nvmlVgpuInstanceGetLicenseInfo(nvmlVgpuInstance_t id, nvmlVgpuLicenseInfo_t *info)
{
	ENTER(nvmlVgpuInstanceGetLicenseInfo);
	NEED(info);
	return license_info(id, info);
}
#endif

#if NVGO_DRIVER >= 510
EXPORT nvmlReturn_t nvmlVgpuInstanceGetLicenseInfo_v2(nvmlVgpuInstance_t id, nvmlVgpuLicenseInfo_t *info)
{
	ENTER(nvmlVgpuInstanceGetLicenseInfo_v2);
	NEED(info);
	return license_info(id, info);
}
#endif

EXPORT nvmlReturn_t nvmlVgpuInstanceGetAccountingPids(nvmlVgpuInstance_t id, unsigned int *count, unsigned int *pids)
{
	ENTER(nvmlVgpuInstanceGetAccountingPids);
	NEED(count);
	unsigned int room = pids == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t nv = nvgo_clamp(st->vgpu_count, NVGO_FAKE_MAX_VGPUS);
		r = NVML_ERROR_NOT_FOUND;
		for (uint32_t i = 0; i < nv; i++)
			if (st->vgpus[i].id == id) {
				r = (nvmlReturn_t)st->vgpus[i].ret[NV_ACCOUNTING_PIDS];
				if (r == NVML_SUCCESS)
					nvgo_pid_list(st, st->vgpus[i].acct, room, pids, &n);
				break;
			}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	*count = n;
	return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlVgpuInstanceGetAccountingStats(nvmlVgpuInstance_t id, unsigned int pid,
						       nvmlAccountingStats_t *stats)
{
	ENTER(nvmlVgpuInstanceGetAccountingStats);
	NEED(stats);
	nvmlReturn_t r;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t nv = nvgo_clamp(st->vgpu_count, NVGO_FAKE_MAX_VGPUS);
		r = NVML_ERROR_NOT_FOUND;
		for (uint32_t i = 0; i < nv; i++) {
			const nvgo_fake_vgpu_t *v = &st->vgpus[i];
			if (v->id != id)
				continue;
			if (v->ret[NV_ACCOUNTING_PIDS] != NVML_SUCCESS || !nvgo_find_stats(st, v->acct, pid, stats))
				r = (nvmlReturn_t)v->ret[NV_ACCOUNTING_STATS_OTHER];
			else
				r = NVML_SUCCESS;
			break;
		}
	} while (nvgo_retry(s));
	return r;
}

EXPORT nvmlReturn_t nvmlVgpuInstanceClearAccountingPids(nvmlVgpuInstance_t id)
{
	SNAP_VGPU(nvmlVgpuInstanceClearAccountingPids, id, NV_CLEAR_ACCOUNTING);
	return NVML_ERROR_NO_PERMISSION; /* the C door is read-only */
}

/* ---- Types ---- */

static nvmlReturn_t snap_type(nvmlVgpuTypeId_t id, nvgo_fake_vtype_t *out)
{
	int found;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t n = nvgo_clamp(st->vtype_count, NVGO_FAKE_MAX_VTYPES);
		found = 0;
		for (uint32_t i = 0; i < n && !found; i++)
			if (st->vtypes[i].id == id) {
				*out = st->vtypes[i];
				found = 1;
			}
	} while (nvgo_retry(s));
	return found ? NVML_SUCCESS : NVML_ERROR_INVALID_ARGUMENT;
}

/* A type string: size is in and out, the length needed with the NUL. */
static nvmlReturn_t type_string(const char *src, size_t max, char *out, unsigned int *size)
{
	size_t n = strnlen(src, max - 1);
	if (*size < n + 1) {
		*size = (unsigned int)(n + 1);
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	memcpy(out, src, n);
	out[n] = 0;
	*size = (unsigned int)n;
	return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlVgpuTypeGetName(nvmlVgpuTypeId_t id, char *out, unsigned int *size)
{
	ENTER(nvmlVgpuTypeGetName);
	NEED(out);
	NEED(size);
	nvgo_fake_vtype_t t;
	nvmlReturn_t r = snap_type(id, &t);
	if (r == NVML_SUCCESS)
		r = (nvmlReturn_t)t.ret_name;
	return r == NVML_SUCCESS ? type_string(t.name, sizeof t.name, out, size) : r;
}

EXPORT nvmlReturn_t nvmlVgpuTypeGetClass(nvmlVgpuTypeId_t id, char *out, unsigned int *size)
{
	ENTER(nvmlVgpuTypeGetClass);
	NEED(out);
	NEED(size);
	nvgo_fake_vtype_t t;
	nvmlReturn_t r = snap_type(id, &t);
	if (r == NVML_SUCCESS)
		r = (nvmlReturn_t)t.ret_class;
	return r == NVML_SUCCESS ? type_string(t.class_name, sizeof t.class_name, out, size) : r;
}

EXPORT nvmlReturn_t nvmlVgpuTypeGetFramebufferSize(nvmlVgpuTypeId_t id, unsigned long long *fb)
{
	ENTER(nvmlVgpuTypeGetFramebufferSize);
	NEED(fb);
	nvgo_fake_vtype_t t;
	nvmlReturn_t r = snap_type(id, &t);
	if (r == NVML_SUCCESS)
		r = (nvmlReturn_t)t.ret_fb;
	if (r == NVML_SUCCESS)
		*fb = t.framebuffer;
	return r;
}
