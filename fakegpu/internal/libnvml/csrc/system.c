/* Library-level calls: versions, process names, device count and handles. */
#include "fake.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	ENTER(nvmlSystemGetDriverVersion);
	char buf[NVGO_FAKE_STR];
	nvmlReturn_t r;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		r = st->ret_driver_version;
		memcpy(buf, st->driver_version, sizeof buf);
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	return nvgo_copy_string(version, length, buf, sizeof buf);
}

EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	ENTER(nvmlSystemGetNVMLVersion);
	char buf[NVGO_FAKE_STR];
	nvmlReturn_t r;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		r = st->ret_nvml_version;
		memcpy(buf, st->nvml_version, sizeof buf);
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	return nvgo_copy_string(version, length, buf, sizeof buf);
}

static nvmlReturn_t cuda_version(int *v)
{
	if (v == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	int value;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		r = st->ret_cuda_version;
		value = st->cuda_version;
	} while (nvgo_retry(s));
	if (r == NVML_SUCCESS)
		*v = value;
	return r;
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *v)
{
	ENTER(nvmlSystemGetCudaDriverVersion);
	return cuda_version(v);
}

EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	ENTER(nvmlSystemGetCudaDriverVersion_v2);
	return cuda_version(v);
}

EXPORT nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length)
{
	ENTER(nvmlSystemGetProcessName);
	if (name == NULL || length == 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	char buf[NVGO_FAKE_STR];
	nvmlReturn_t r;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		r = NVML_ERROR_NOT_FOUND;
		uint32_t n = nvgo_clamp(st->name_count, NVGO_FAKE_MAX_NAMES);
		for (uint32_t i = 0; i < n; i++)
			if (st->names[i].pid == pid) {
				r = st->names[i].ret;
				memcpy(buf, st->names[i].name, sizeof buf);
				break;
			}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	/* NVML cuts a long name to the buffer. */
	size_t n = strnlen(buf, sizeof buf - 1);
	if (n >= length)
		n = length - 1;
	memcpy(name, buf, n);
	name[n] = 0;
	return NVML_SUCCESS;
}

static nvmlReturn_t device_count(unsigned int *count)
{
	if (count == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	uint32_t n;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		r = st->ret_count;
		n = nvgo_clamp(st->gpu_count, nvgo_clamp(st->device_count, NVGO_FAKE_MAX_DEVICES));
	} while (nvgo_retry(s));
	if (r == NVML_SUCCESS)
		*count = n;
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
	ENTER(nvmlDeviceGetCount);
	return device_count(count);
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	ENTER(nvmlDeviceGetCount_v2);
	return device_count(count);
}

/* handle_of answers a DeviceGetHandleBy… call for record rec (or none, when
 * rec is negative): a lost GPU's handle comes with GPU_IS_LOST. */
static nvmlReturn_t handle_of(const nvgo_fake_state_t *st, int64_t rec, nvmlReturn_t none, uint32_t *out)
{
	const nvgo_fake_device_t *d = rec < 0 ? NULL : nvgo_device(st, (uint32_t)rec);
	if (d == NULL)
		return none;
	*out = (uint32_t)rec;
	return d->ret[NF_HANDLE];
}

static nvmlReturn_t by_index(unsigned int index, nvmlDevice_t *device)
{
	if (device == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	uint32_t rec = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t n = nvgo_clamp(st->gpu_count, NVGO_FAKE_MAX_DEVICES);
		r = handle_of(st, index < n ? (int64_t)index : -1, NVML_ERROR_INVALID_ARGUMENT, &rec);
	} while (nvgo_retry(s));
	if (r == NVML_SUCCESS || r == NVML_ERROR_GPU_IS_LOST)
		*device = nvgo_handle(rec);
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	ENTER(nvmlDeviceGetHandleByIndex);
	return by_index(index, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	ENTER(nvmlDeviceGetHandleByIndex_v2);
	return by_index(index, device);
}

/* legacy_mig parses the pre-R470 MIG UUID "MIG-GPU-<uuid>/<gi>/<ci>". */
static int legacy_mig(const char *s, char *gpu, size_t size, unsigned *gi, unsigned *ci)
{
	if (strncmp(s, "MIG-GPU-", 8) != 0)
		return 0;
	const char *slash = strchr(s, '/');
	if (slash == NULL || (size_t)(slash - s - 4) >= size)
		return 0;
	memcpy(gpu, s + 4, (size_t)(slash - s - 4));
	gpu[slash - s - 4] = 0;
	char *end;
	unsigned long g = strtoul(slash + 1, &end, 10);
	if (end == slash + 1 || *end != '/')
		return 0;
	const char *c0 = end + 1;
	unsigned long c = strtoul(c0, &end, 10);
	if (end == c0 || *end != 0)
		return 0;
	*gi = (unsigned)g;
	*ci = (unsigned)c;
	return 1;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	ENTER(nvmlDeviceGetHandleByUUID);
	if (uuid == NULL || device == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	char gpu[NVGO_FAKE_STR];
	unsigned gi = 0, ci = 0;
	int legacy = legacy_mig(uuid, gpu, sizeof gpu, &gi, &ci);
	nvmlReturn_t r;
	uint32_t rec = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t n = nvgo_clamp(st->device_count, NVGO_FAKE_MAX_DEVICES);
		int64_t found = -1;
		for (uint32_t i = 0; i < n && found < 0; i++) {
			const nvgo_fake_device_t *d = &st->devices[i];
			if (d->removed)
				continue;
			if (legacy) {
				const nvgo_fake_device_t *p = d->is_mig ? nvgo_device(st, d->parent) : NULL;
				if (p != NULL && strncmp(p->uuid, gpu, NVGO_FAKE_STR) == 0 &&
				    d->gpu_instance == gi && d->compute_instance == ci)
					found = i;
			} else if (strncmp(d->uuid, uuid, NVGO_FAKE_STR) == 0) {
				found = i;
			}
		}
		r = handle_of(st, found, NVML_ERROR_NOT_FOUND, &rec);
	} while (nvgo_retry(s));
	if (r == NVML_SUCCESS || r == NVML_ERROR_GPU_IS_LOST)
		*device = nvgo_handle(rec);
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleBySerial(const char *serial, nvmlDevice_t *device)
{
	ENTER(nvmlDeviceGetHandleBySerial);
	if (serial == NULL || device == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	uint32_t rec = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t n = nvgo_clamp(st->gpu_count, NVGO_FAKE_MAX_DEVICES);
		int64_t found = -1;
		for (uint32_t i = 0; i < n && found < 0; i++)
			if (strncmp(st->devices[i].serial, serial, NVGO_FAKE_STR) == 0)
				found = i;
		r = handle_of(st, found, NVML_ERROR_NOT_FOUND, &rec);
	} while (nvgo_retry(s));
	if (r == NVML_SUCCESS || r == NVML_ERROR_GPU_IS_LOST)
		*device = nvgo_handle(rec);
	return r;
}

/* parse_bus_id reads "domain:bus:device.function" in hex, the domain
 * optional and of up to 8 digits, as NVML accepts. */
static int parse_bus_id(const char *s, unsigned *domain, unsigned *bus, unsigned *dev)
{
	unsigned part[3] = {0, 0, 0};
	int parts = 0;
	const char *p = s;
	for (;;) {
		if (parts == 3)
			return 0;
		char *end;
		if (!isxdigit((unsigned char)*p))
			return 0;
		unsigned long v = strtoul(p, &end, 16);
		if (end - p > 8)
			return 0;
		part[parts++] = (unsigned)v;
		p = end;
		if (*p == ':') {
			p++;
			continue;
		}
		if (*p == '.')
			break;
		return 0;
	}
	p++;
	if (!isxdigit((unsigned char)*p) || p[1] != 0)
		return 0;
	if (parts == 2) {
		*domain = 0, *bus = part[0], *dev = part[1];
	} else if (parts == 3) {
		*domain = part[0], *bus = part[1], *dev = part[2];
	} else {
		return 0;
	}
	return *bus <= 0xff && *dev <= 0x1f;
}

static nvmlReturn_t by_bus_id(const char *id, nvmlDevice_t *device)
{
	unsigned domain, bus, dev;
	if (id == NULL || device == NULL || !parse_bus_id(id, &domain, &bus, &dev))
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	uint32_t rec = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		uint32_t n = nvgo_clamp(st->gpu_count, NVGO_FAKE_MAX_DEVICES);
		int64_t found = -1;
		for (uint32_t i = 0; i < n && found < 0; i++) {
			const nvgo_fake_device_t *d = &st->devices[i];
			if (d->pci_domain == domain && d->pci_bus == bus && d->pci_device == dev)
				found = i;
		}
		r = handle_of(st, found, NVML_ERROR_NOT_FOUND, &rec);
	} while (nvgo_retry(s));
	if (r == NVML_SUCCESS || r == NVML_ERROR_GPU_IS_LOST)
		*device = nvgo_handle(rec);
	return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *id, nvmlDevice_t *device)
{
	ENTER(nvmlDeviceGetHandleByPciBusId);
	return by_bus_id(id, device);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *id, nvmlDevice_t *device)
{
	ENTER(nvmlDeviceGetHandleByPciBusId_v2);
	return by_bus_id(id, device);
}
