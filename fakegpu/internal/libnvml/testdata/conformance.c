/*
 * Conformance of nvgo's drop-in libnvidia-ml.so.1 to NVML's header, as a C
 * client sees it. Run by TestConformance on the fleet it describes:
 *
 *   GPU 0: three compute processes (PIDs 101, 102, 103), busy, with
 *          utilization samples at several times
 *   GPU 1: idle, no process
 *   GPU 2: lost
 *
 * Prints "ok NAME" or "not ok NAME: detail" per check; exits 1 if any
 * check failed.
 */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include "nvml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long long nvgoFakeCallCount(const char *name);

static int failed;

#define CHECK(name, cond, ...)                                   \
	do {                                                     \
		if (cond) {                                      \
			printf("ok %s\n", name);                 \
		} else {                                         \
			failed = 1;                              \
			printf("not ok %s: ", name);             \
			printf(__VA_ARGS__);                     \
			printf("\n");                            \
		}                                                \
	} while (0)

#define RET(name, call, want)                                                        \
	do {                                                                         \
		nvmlReturn_t r_ = (call);                                            \
		CHECK(name, r_ == (want), "got %d (%s), want %d", r_, nvmlErrorString(r_), want); \
	} while (0)

int main(void)
{
	nvmlDevice_t gpu0, gpu1, gpu2;
	unsigned int n;

	/* Before nvmlInit. */
	RET("count before init", nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	RET("shutdown before init", nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	CHECK("error strings", nvmlErrorString(NVML_ERROR_GPU_IS_LOST) != NULL &&
				       strlen(nvmlErrorString(NVML_ERROR_GPU_IS_LOST)) > 0 &&
				       strcmp(nvmlErrorString(9999), "") != 0,
	      "empty");

	/* Refcounted Init and Shutdown. */
	RET("init", nvmlInit_v2(), NVML_SUCCESS);
	RET("init again", nvmlInitWithFlags(0), NVML_SUCCESS);
	RET("first shutdown", nvmlShutdown(), NVML_SUCCESS);
	RET("count with one init held", nvmlDeviceGetCount_v2(&n), NVML_SUCCESS);
	CHECK("three GPUs", n == 3, "got %u", n);

	RET("handle 0", nvmlDeviceGetHandleByIndex_v2(0, &gpu0), NVML_SUCCESS);
	RET("handle 1", nvmlDeviceGetHandleByIndex_v2(1, &gpu1), NVML_SUCCESS);
	RET("lost GPU's handle", nvmlDeviceGetHandleByIndex_v2(2, &gpu2), NVML_ERROR_GPU_IS_LOST);
	RET("lost GPU's name", nvmlDeviceGetName(gpu2, (char[96]){0}, 96), NVML_ERROR_GPU_IS_LOST);
	RET("index out of range", nvmlDeviceGetHandleByIndex_v2(3, &gpu2), NVML_ERROR_INVALID_ARGUMENT);
	nvmlDevice_t junk = {(struct nvmlDevice_st *)&n};
	RET("foreign handle", nvmlDeviceGetName(junk, (char[96]){0}, 96), NVML_ERROR_INVALID_ARGUMENT);
	RET("NULL output", nvmlDeviceGetFanSpeed(gpu0, NULL), NVML_ERROR_INVALID_ARGUMENT);

	/* Strings. */
	char name[96];
	RET("name too long for the buffer", nvmlDeviceGetName(gpu0, name, 4), NVML_ERROR_INSUFFICIENT_SIZE);
	RET("name", nvmlDeviceGetName(gpu0, name, sizeof name), NVML_SUCCESS);
	CHECK("name is the fleet's", strcmp(name, "NVIDIA H100 80GB HBM3") == 0, "got %s", name);
	char uuid[96];
	nvmlDevice_t byuuid;
	RET("uuid", nvmlDeviceGetUUID(gpu1, uuid, sizeof uuid), NVML_SUCCESS);
	RET("handle by UUID", nvmlDeviceGetHandleByUUID(uuid, &byuuid), NVML_SUCCESS);
	CHECK("same handle by UUID", byuuid.handle == gpu1.handle, "different handle");
	nvmlPciInfo_t pci;
	nvmlDevice_t bybus;
	RET("PCI info", nvmlDeviceGetPciInfo_v3(gpu1, &pci), NVML_SUCCESS);
	RET("handle by bus ID", nvmlDeviceGetHandleByPciBusId_v2(pci.busId, &bybus), NVML_SUCCESS);
	CHECK("same handle by bus ID", bybus.handle == gpu1.handle, "different handle");
	RET("bad bus ID", nvmlDeviceGetHandleByPciBusId_v2("zz:00.0", &bybus), NVML_ERROR_INVALID_ARGUMENT);

	/* Versioned structs. */
	nvmlMemory_v2_t mem = {0};
	mem.version = nvmlMemory_v2 + 1;
	RET("memory v2 with a wrong version", nvmlDeviceGetMemoryInfo_v2(gpu0, &mem), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	mem.version = nvmlMemory_v2;
	RET("memory v2", nvmlDeviceGetMemoryInfo_v2(gpu0, &mem), NVML_SUCCESS);
	CHECK("used + free + reserved = total", mem.used + mem.free + mem.reserved == mem.total,
	      "%llu + %llu + %llu != %llu", mem.used, mem.free, mem.reserved, mem.total);
	nvmlMemory_t mem1;
	RET("memory v1", nvmlDeviceGetMemoryInfo(gpu0, &mem1), NVML_SUCCESS);
	CHECK("v1 counts reserved as used", mem1.used == mem.used + mem.reserved, "%llu", mem1.used);
	nvmlTemperature_t temp = {0};
	temp.sensorType = NVML_TEMPERATURE_GPU;
	RET("temperature with a wrong version", nvmlDeviceGetTemperatureV(gpu0, &temp), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	temp.version = nvmlTemperature_v1;
	RET("temperature", nvmlDeviceGetTemperatureV(gpu0, &temp), NVML_SUCCESS);

	/* The list protocol. */
	n = 0;
	RET("process count with no buffer", nvmlDeviceGetComputeRunningProcesses_v3(gpu0, &n, NULL), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK("count needed", n == 3, "got %u", n);
	nvmlProcessInfo_t procs[3];
	n = 2;
	RET("too small a buffer", nvmlDeviceGetComputeRunningProcesses_v3(gpu0, &n, procs), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK("count needed again", n == 3, "got %u", n);
	n = 3;
	RET("processes", nvmlDeviceGetComputeRunningProcesses_v3(gpu0, &n, procs), NVML_SUCCESS);
	CHECK("the fleet's PIDs", n == 3 && procs[0].pid == 101 && procs[1].pid == 102 && procs[2].pid == 103,
	      "n=%u pids %u %u %u", n, procs[0].pid, procs[1].pid, procs[2].pid);
	CHECK("no MIG instance IDs", procs[0].gpuInstanceId == 0xFFFFFFFFu, "got %u", procs[0].gpuInstanceId);
	nvmlProcessInfo_v1_t old[3];
	n = 3;
	RET("processes, first version", nvmlDeviceGetComputeRunningProcesses(gpu0, &n, old), NVML_SUCCESS);
	CHECK("first version's layout", old[2].pid == 103 && old[2].usedGpuMemory == procs[2].usedGpuMemory,
	      "pid %u", old[2].pid);
	n = 0;
	RET("empty list", nvmlDeviceGetComputeRunningProcesses_v3(gpu1, &n, NULL), NVML_SUCCESS);
	CHECK("empty count", n == 0, "got %u", n);
	char pname[64];
	RET("process name", nvmlSystemGetProcessName(101, pname, sizeof pname), NVML_SUCCESS);
	RET("unknown process name", nvmlSystemGetProcessName(999999, pname, sizeof pname), NVML_ERROR_NOT_FOUND);

	/* Sample windows. */
	nvmlValueType_t vt;
	n = 0;
	RET("sample count", nvmlDeviceGetSamples(gpu0, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &n, NULL), NVML_SUCCESS);
	CHECK("some samples", n >= 2, "got %u", n);
	nvmlSample_t samples[256];
	unsigned int room = n;
	RET("samples", nvmlDeviceGetSamples(gpu0, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &n, samples), NVML_SUCCESS);
	CHECK("oldest first", n == room && samples[0].timeStamp < samples[n - 1].timeStamp, "n=%u", n);
	unsigned long long newest = samples[n - 1].timeStamp;
	n = 1;
	RET("a buffer of one", nvmlDeviceGetSamples(gpu0, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &n, samples), NVML_SUCCESS);
	CHECK("the oldest sample", n == 1, "n=%u", n);
	n = 256;
	RET("nothing newer", nvmlDeviceGetSamples(gpu0, NVML_GPU_UTILIZATION_SAMPLES, newest, &vt, &n, samples), NVML_ERROR_NOT_FOUND);
	n = 1;
	RET("zero-sized buffer", nvmlDeviceGetSamples(gpu0, NVML_GPU_UTILIZATION_SAMPLES, 0, &vt, &(unsigned int){0}, samples),
	    NVML_ERROR_INVALID_ARGUMENT);
	n = 0;
	RET("process samples size", nvmlDeviceGetProcessUtilization(gpu0, NULL, &n, 0), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECK("one sample per busy process", n == 3, "got %u", n);
	nvmlProcessUtilizationSample_t ps[8];
	n = 8;
	RET("process samples", nvmlDeviceGetProcessUtilization(gpu0, ps, &n, 0), NVML_SUCCESS);
	n = 8;
	RET("no newer process sample", nvmlDeviceGetProcessUtilization(gpu0, ps, &n, ps[0].timeStamp), NVML_ERROR_NOT_FOUND);

	/* Field values. */
	nvmlFieldValue_t fv[2] = {{.fieldId = NVML_FI_DEV_POWER_INSTANT}, {.fieldId = 9999}};
	RET("field values", nvmlDeviceGetFieldValues(gpu0, 2, fv), NVML_SUCCESS);
	CHECK("a known field", fv[0].nvmlReturn == NVML_SUCCESS && fv[0].value.uiVal > 0, "ret %d", fv[0].nvmlReturn);
	CHECK("an unknown field", fv[1].nvmlReturn == NVML_ERROR_NOT_SUPPORTED, "ret %d", fv[1].nvmlReturn);
	RET("no field values", nvmlDeviceGetFieldValues(gpu0, 0, fv), NVML_ERROR_INVALID_ARGUMENT);

	/* A read-only door, and what the fake GPU lacks. */
	RET("set accounting mode", nvmlDeviceSetAccountingMode(gpu0, NVML_FEATURE_ENABLED), NVML_ERROR_NO_PERMISSION);
	unsigned int fan;
	RET("no fan on an SXM board", nvmlDeviceGetFanSpeed(gpu0, &fan), NVML_ERROR_NOT_SUPPORTED);
	nvmlDevice_t mig;
	RET("MIG off", nvmlDeviceGetMigDeviceHandleByIndex(gpu0, 0, &mig), NVML_ERROR_NOT_SUPPORTED);

	/* Counting. */
	CHECK("calls are counted", nvgoFakeCallCount("nvmlDeviceGetSamples") == 5, "got %llu",
	      nvgoFakeCallCount("nvmlDeviceGetSamples"));
	CHECK("refused calls are counted", nvgoFakeCallCount("nvmlDeviceGetCount_v2") == 2, "got %llu",
	      nvgoFakeCallCount("nvmlDeviceGetCount_v2"));

	RET("last shutdown", nvmlShutdown(), NVML_SUCCESS);
	RET("after the last shutdown", nvmlDeviceGetName(gpu0, name, sizeof name), NVML_ERROR_UNINITIALIZED);
	RET("shutdown once too often", nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	RET("init again after shutdown", nvmlInit_v2(), NVML_SUCCESS);
	RET("handle again", nvmlDeviceGetHandleByIndex_v2(0, &gpu0), NVML_SUCCESS);
	RET("shutdown at the end", nvmlShutdown(), NVML_SUCCESS);
	return failed;
}
