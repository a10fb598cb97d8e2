/*
 * A device's list queries, with NVML's buffer protocol: process lists,
 * process utilization, sample buffers, accounting records and field values.
 * Entries are written straight into the caller's buffer inside the read of
 * the state, which is repeated if it raced a writer.
 */
#include "fake.h"

/* ---- Process lists ---- */

enum { PROC_V1, PROC_V2 }; /* nvmlProcessInfo_v1_t or nvmlProcessInfo_v2_t (= _v3's) */

static const int list_slot[NVGO_FAKE_LISTS] = {NF_COMPUTE_PROCS, NF_GRAPHICS_PROCS, NF_MPS_PROCS};

static void put_proc(void *infos, int layout, uint32_t i, const nvgo_fake_proc_t *p)
{
	if (layout == PROC_V1) {
		nvmlProcessInfo_v1_t *o = (nvmlProcessInfo_v1_t *)infos + i;
		o->pid = p->pid;
		o->usedGpuMemory = p->used_memory;
	} else {
		nvmlProcessInfo_v2_t *o = (nvmlProcessInfo_v2_t *)infos + i;
		o->pid = p->pid;
		o->usedGpuMemory = p->used_memory;
		o->gpuInstanceId = p->gpu_instance;
		o->computeInstanceId = p->compute_instance;
	}
}

/* process_list answers Get{Compute,Graphics,MPSCompute}RunningProcesses:
 * a NULL buffer or one too small gets INSUFFICIENT_SIZE and the count
 * needed (an empty list is SUCCESS with a count of 0). */
static nvmlReturn_t process_list(uint32_t rec, int list, int layout, unsigned int *count, void *infos)
{
	if (count == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int room = infos == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		if (d == NULL) {
			r = NVML_ERROR_INVALID_ARGUMENT;
			n = 0;
			continue;
		}
		r = (nvmlReturn_t)d->ret[list_slot[list]];
		nvgo_fake_range_t rg = nvgo_range(d->procs[list], NVGO_FAKE_MAX_PROCS);
		n = rg.count;
		if (r == NVML_SUCCESS && n <= room)
			for (uint32_t i = 0; i < n; i++)
				put_proc(infos, layout, i, &st->procs[rg.first + i]);
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	if (n > room) {
		*count = n;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*count = n;
	return NVML_SUCCESS;
}

#define PROCESS_LIST(fn, list, layout, type)                                                  \
	EXPORT nvmlReturn_t fn(nvmlDevice_t device, unsigned int *count, type *infos)          \
	{                                                                                      \
		DEVICE_ENTER(fn, device, rec);                                                 \
		return process_list(rec, list, layout, count, infos);                          \
	}

/* Branches that introduced each list (from NVIDIA's headers): the first
 * versions are as old as NVML, but for MPS (R470); _v2 came with R455
 * (MPS's with R470), _v3 with R510. */
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses, NVGO_FAKE_COMPUTE, PROC_V1, nvmlProcessInfo_v1_t)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses, NVGO_FAKE_GRAPHICS, PROC_V1, nvmlProcessInfo_v1_t)
#if NVGO_DRIVER >= 455
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v2, NVGO_FAKE_COMPUTE, PROC_V2, nvmlProcessInfo_v2_t)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v2, NVGO_FAKE_GRAPHICS, PROC_V2, nvmlProcessInfo_v2_t)
#endif
#if NVGO_DRIVER >= 470
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses, NVGO_FAKE_MPS, PROC_V1, nvmlProcessInfo_v1_t)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v2, NVGO_FAKE_MPS, PROC_V2, nvmlProcessInfo_v2_t)
#endif
#if NVGO_DRIVER >= 510
PROCESS_LIST(nvmlDeviceGetComputeRunningProcesses_v3, NVGO_FAKE_COMPUTE, PROC_V2, nvmlProcessInfo_t)
PROCESS_LIST(nvmlDeviceGetGraphicsRunningProcesses_v3, NVGO_FAKE_GRAPHICS, PROC_V2, nvmlProcessInfo_t)
PROCESS_LIST(nvmlDeviceGetMPSComputeRunningProcesses_v3, NVGO_FAKE_MPS, PROC_V2, nvmlProcessInfo_t)
#endif

#if NVGO_DRIVER >= 535
/* nvmlDeviceGetRunningProcessDetailList: one mode's list, or every list
 * (a PID on several lists once, with its first entry) for MODE_ALL. */
EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, nvmlProcessDetailList_t *plist)
{
	DEVICE_ENTER(nvmlDeviceGetRunningProcessDetailList, device, rec);
	if (plist == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (plist->version != nvmlProcessDetailList_v1)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	if (plist->mode >= NVML_PROCESS_MODE_MAX)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int room = plist->procArray == NULL ? 0 : plist->numProcArrayEntries;
	nvmlReturn_t r;
	uint32_t n;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		r = d == NULL ? NVML_ERROR_INVALID_ARGUMENT : NVML_SUCCESS;
		n = 0;
		for (int list = 0; d != NULL && list < NVGO_FAKE_LISTS && r == NVML_SUCCESS; list++) {
			if (plist->mode != NVML_PROCESS_MODE_ALL && (unsigned)list != plist->mode)
				continue;
			r = (nvmlReturn_t)d->ret[list_slot[list]];
			nvgo_fake_range_t rg = nvgo_range(d->procs[list], NVGO_FAKE_MAX_PROCS);
			for (uint32_t i = 0; i < rg.count && r == NVML_SUCCESS; i++) {
				const nvgo_fake_proc_t *p = &st->procs[rg.first + i];
				int seen = 0;
				for (uint32_t j = 0; j < n && j < room && !seen; j++)
					seen = plist->procArray[j].pid == p->pid;
				if (seen)
					continue;
				if (n < room) {
					nvmlProcessDetail_v1_t *o = &plist->procArray[n];
					o->pid = p->pid;
					o->usedGpuMemory = p->used_memory;
					o->gpuInstanceId = p->gpu_instance;
					o->computeInstanceId = p->compute_instance;
					o->usedGpuCcProtectedMemory = 0;
				}
				n++;
			}
		}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	plist->numProcArrayEntries = n;
	return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}
#endif

/* ---- Process utilization ---- */

EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *out,
						    unsigned int *count, unsigned long long lastSeen)
{
	DEVICE_ENTER(nvmlDeviceGetProcessUtilization, device, rec);
	if (count == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int room = out == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		n = 0;
		if (d == NULL) {
			r = NVML_ERROR_INVALID_ARGUMENT;
			continue;
		}
		r = (nvmlReturn_t)d->ret[NF_PROCESS_UTILIZATION];
		nvgo_fake_range_t rg = nvgo_range(d->psamples, NVGO_FAKE_MAX_PSAMPLES);
		for (uint32_t i = 0; i < rg.count && r == NVML_SUCCESS; i++) {
			const nvgo_fake_psample_t *p = &st->psamples[rg.first + i];
			if (p->timestamp <= lastSeen)
				continue;
			if (n < room) {
				out[n].pid = p->pid;
				out[n].timeStamp = p->timestamp;
				out[n].smUtil = p->sm;
				out[n].memUtil = p->memory;
				out[n].encUtil = p->encoder;
				out[n].decUtil = p->decoder;
			}
			n++;
		}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	if (n == 0)
		return NVML_ERROR_NOT_FOUND; /* no sample newer than lastSeen */
	*count = n;
	return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

/* ---- Sample buffers ---- */

/* nvmlDeviceGetSamples: with a NULL buffer, the number of samples newer
 * than lastSeen; with a buffer, as many of them as fit, oldest first, so
 * that a reader that keeps the newest timestamp it got misses none. */
EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long lastSeen,
					 nvmlValueType_t *valueType, unsigned int *count, nvmlSample_t *samples)
{
	DEVICE_ENTER(nvmlDeviceGetSamples, device, rec);
	if (valueType == NULL || count == NULL || (samples != NULL && *count == 0))
		return NVML_ERROR_INVALID_ARGUMENT;
	int which = type == NVML_GPU_UTILIZATION_SAMPLES ? 0 : type == NVML_MEMORY_UTILIZATION_SAMPLES ? 1 : -1;
	unsigned int room = samples == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n, vt = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		n = 0;
		if (d == NULL) {
			r = NVML_ERROR_INVALID_ARGUMENT;
			continue;
		}
		r = (nvmlReturn_t)d->ret[which == 0 ? NF_SAMPLES_GPU : which == 1 ? NF_SAMPLES_MEM : NF_SAMPLES_OTHER];
		if (r != NVML_SUCCESS || which < 0)
			continue;
		vt = d->sample_value_type[which];
		nvgo_fake_range_t rg = nvgo_range(d->samples[which], NVGO_FAKE_MAX_SAMPLES);
		for (uint32_t i = 0; i < rg.count; i++) {
			const nvgo_fake_sample_t *p = &st->samples[rg.first + i];
			if (p->timestamp <= lastSeen)
				continue;
			if (samples != NULL && n < room) {
				samples[n].timeStamp = p->timestamp;
				memcpy(&samples[n].sampleValue, &p->value, sizeof p->value);
			}
			n++;
		}
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	if (which < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (n == 0)
		return NVML_ERROR_NOT_FOUND;
	*valueType = (nvmlValueType_t)vt;
	*count = samples == NULL || n < room ? n : room;
	return NVML_SUCCESS;
}

/* ---- Accounting ---- */

static void put_stats(nvmlAccountingStats_t *o, const nvgo_fake_acct_t *a)
{
	memset(o, 0, sizeof *o);
	o->gpuUtilization = a->gpu_utilization;
	o->memoryUtilization = a->memory_utilization;
	o->maxMemoryUsage = a->max_memory;
	o->time = a->time_ms;
	o->startTime = a->start_us;
	o->isRunning = a->is_running;
}

/* nvgo_pid_list answers a GetAccountingPids call from records rg. */
nvmlReturn_t nvgo_pid_list(const nvgo_fake_state_t *st, nvgo_fake_range_t rg, unsigned int room, unsigned int *pids,
			   uint32_t *n)
{
	rg = nvgo_range(rg, NVGO_FAKE_MAX_ACCT);
	*n = rg.count;
	if (pids != NULL && rg.count <= room)
		for (uint32_t i = 0; i < rg.count; i++)
			pids[i] = st->acct[rg.first + i].pid;
	return NVML_SUCCESS;
}

/* nvgo_find_stats looks pid up in records rg. */
int nvgo_find_stats(const nvgo_fake_state_t *st, nvgo_fake_range_t rg, unsigned int pid, nvmlAccountingStats_t *out)
{
	rg = nvgo_range(rg, NVGO_FAKE_MAX_ACCT);
	for (uint32_t i = 0; i < rg.count; i++)
		if (st->acct[rg.first + i].pid == pid) {
			put_stats(out, &st->acct[rg.first + i]);
			return 1;
		}
	return 0;
}

EXPORT nvmlReturn_t nvmlDeviceGetAccountingPids(nvmlDevice_t device, unsigned int *count, unsigned int *pids)
{
	DEVICE_ENTER(nvmlDeviceGetAccountingPids, device, rec);
	if (count == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	unsigned int room = pids == NULL ? 0 : *count;
	nvmlReturn_t r;
	uint32_t n = 0;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		r = d == NULL ? NVML_ERROR_INVALID_ARGUMENT : (nvmlReturn_t)d->ret[NF_ACCOUNTING_PIDS];
		if (r == NVML_SUCCESS)
			nvgo_pid_list(st, d->acct, room, pids, &n);
	} while (nvgo_retry(s));
	if (r != NVML_SUCCESS)
		return r;
	*count = n;
	return n > room ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetAccountingStats(nvmlDevice_t device, unsigned int pid, nvmlAccountingStats_t *stats)
{
	DEVICE_ENTER(nvmlDeviceGetAccountingStats, device, rec);
	if (stats == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		if (d == NULL)
			r = NVML_ERROR_INVALID_ARGUMENT;
		else if (d->ret[NF_ACCOUNTING_PIDS] != NVML_SUCCESS || !nvgo_find_stats(st, d->acct, pid, stats))
			r = (nvmlReturn_t)d->ret[NF_ACCOUNTING_STATS_OTHER];
		else
			r = NVML_SUCCESS;
	} while (nvgo_retry(s));
	return r;
}

/* ---- Field values ---- */

/* NVGO_FIELD_LIMIT is one more than the largest field ID the imitated
 * driver knows: it answers a per-field INVALID_ARGUMENT for the others. */
#ifndef NVGO_FIELD_LIMIT
#define NVGO_FIELD_LIMIT 0xFFFFFFFFu
#endif

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values)
{
	DEVICE_ENTER(nvmlDeviceGetFieldValues, device, rec);
	if (valuesCount <= 0 || values == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	nvmlReturn_t r;
	uint64_t s;
	do {
		const nvgo_fake_state_t *st = nvgo_begin(&s);
		const nvgo_fake_device_t *d = nvgo_device(st, rec);
		r = d == NULL ? NVML_ERROR_INVALID_ARGUMENT : (nvmlReturn_t)d->ret[NF_FIELD_VALUES];
		if (r != NVML_SUCCESS)
			continue;
		nvgo_fake_range_t rg = nvgo_range(d->fields, NVGO_FAKE_MAX_FIELDS);
		for (int k = 0; k < valuesCount; k++) {
			nvmlFieldValue_t *v = &values[k];
			const nvgo_fake_field_t *exact = NULL, *other = NULL;
			for (uint32_t i = 0; i < rg.count && exact == NULL; i++) {
				const nvgo_fake_field_t *f = &st->fields[rg.first + i];
				if (f->id != v->fieldId)
					continue;
				if (f->scope == v->scopeId)
					exact = f;
				else if (f->scope == NVGO_FAKE_OTHER_SCOPE)
					other = f;
			}
			const nvgo_fake_field_t *f = exact ? exact : other;
			if (v->fieldId >= NVGO_FIELD_LIMIT)
				f = NULL; /* the imitated driver does not know it */
			v->timestamp = (long long)st->now_us;
			v->latencyUsec = 0;
			memset(&v->value, 0, sizeof v->value);
			if (f == NULL) {
				v->valueType = 0;
				v->nvmlReturn = v->fieldId >= NVGO_FIELD_LIMIT ? NVML_ERROR_INVALID_ARGUMENT
									       : NVML_ERROR_NOT_SUPPORTED;
				continue;
			}
			v->valueType = (nvmlValueType_t)f->value_type;
			v->nvmlReturn = (nvmlReturn_t)f->ret;
			if (f->ret == NVML_SUCCESS)
				memcpy(&v->value, &f->value, sizeof f->value);
		}
	} while (nvgo_retry(s));
	return r;
}
