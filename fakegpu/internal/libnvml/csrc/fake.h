/*
 * Internal declarations of nvgo's drop-in libnvidia-ml.so.1.
 *
 * Every exported function counts its call, refuses to run before nvmlInit
 * (NVML_ERROR_UNINITIALIZED), validates its handle and pointers, then reads
 * the fleet's answers from the state file (../state.h) under the seqlock
 * protocol described there, and only then writes the caller's memory.
 */
#ifndef NVGO_FAKE_H
#define NVGO_FAKE_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include "nvml.h"
#include "state.h"

/* NVGO_DRIVER is the driver branch a build imitates: 580 (everything), 470
 * or 418 (without the functions those branches lacked). */
#ifndef NVGO_DRIVER
#define NVGO_DRIVER 580
#endif

#define EXPORT __attribute__((visibility("default")))

enum nvgo_fn {
#define CALL(n) FN_##n,
#include "calls.def"
#undef CALL
	FN_COUNT
};

extern const char *const nvgo_fn_names[FN_COUNT];

/* nvgo_enter counts a call of fn and says whether it may run: SUCCESS, or
 * UNINITIALIZED before nvmlInit, or FUNCTION_NOT_FOUND for a function the
 * fleet declares missing. */
nvmlReturn_t nvgo_enter(int fn);

/* nvgo_record turns a device handle into its record index. */
nvmlReturn_t nvgo_record(nvmlDevice_t h, uint32_t *rec);
/* nvgo_handle is the handle of record rec (stable for the library's life). */
nvmlDevice_t nvgo_handle(uint32_t rec);

/* nvgo_begin starts a read of the published state; nvgo_retry says whether
 * the read raced a writer and must be done again. */
const nvgo_fake_state_t *nvgo_begin(uint64_t *seq);
int nvgo_retry(uint64_t seq);

/* Clamped views of the state's arrays: never beyond their capacity, even
 * when a count was torn by a racing writer. */
static inline uint32_t nvgo_clamp(uint32_t n, uint32_t cap) { return n < cap ? n : cap; }

static inline nvgo_fake_range_t nvgo_range(nvgo_fake_range_t r, uint32_t cap)
{
	if (r.first >= cap) {
		r.first = 0;
		r.count = 0;
	} else if (r.count > cap - r.first) {
		r.count = cap - r.first;
	}
	return r;
}

/* nvgo_device is device record rec of st, or NULL if there is none. */
static inline const nvgo_fake_device_t *nvgo_device(const nvgo_fake_state_t *st, uint32_t rec)
{
	if (rec >= nvgo_clamp(st->device_count, NVGO_FAKE_MAX_DEVICES))
		return NULL;
	return &st->devices[rec];
}

/* nvgo_snap copies device record rec out of the published state:
 * INVALID_ARGUMENT if there is no such record. */
nvmlReturn_t nvgo_snap(uint32_t rec, nvgo_fake_device_t *out, uint64_t *now_us);

/* Accounting records shared by devices and vGPU instances. */
nvmlReturn_t nvgo_pid_list(const nvgo_fake_state_t *st, nvgo_fake_range_t rg, unsigned int room, unsigned int *pids,
			   uint32_t *n);
int nvgo_find_stats(const nvgo_fake_state_t *st, nvgo_fake_range_t rg, unsigned int pid, nvmlAccountingStats_t *out);

/* nvgo_copy_string copies a NUL-terminated string of at most max bytes
 * into a buffer of length bytes: INSUFFICIENT_SIZE if it does not fit. */
nvmlReturn_t nvgo_copy_string(char *dst, unsigned int length, const char *src, size_t max);

/* The device call preamble: count, check Init, resolve the handle. */
#define DEVICE_ENTER(fn, dev, rec)                                    \
	uint32_t rec;                                                 \
	do {                                                          \
		nvmlReturn_t enter_ = nvgo_enter(FN_##fn);            \
		if (enter_ != NVML_SUCCESS)                           \
			return enter_;                                \
		enter_ = nvgo_record((dev), &rec);                    \
		if (enter_ != NVML_SUCCESS)                           \
			return enter_;                                \
	} while (0)

/* SNAP_DEVICE is DEVICE_ENTER, then a copy of the record in d, then the
 * record's answer for call slot: the usual start of a scalar query. */
#define SNAP_DEVICE(fn, dev, slot)                                    \
	DEVICE_ENTER(fn, dev, rec);                                   \
	nvgo_fake_device_t d;                                         \
	do {                                                          \
		nvmlReturn_t snap_ = nvgo_snap(rec, &d, NULL);        \
		if (snap_ != NVML_SUCCESS)                            \
			return snap_;                                 \
		if (d.ret[(slot)] != NVML_SUCCESS)                    \
			return (nvmlReturn_t)d.ret[(slot)];           \
	} while (0)

#define ENTER(fn)                                                     \
	do {                                                          \
		nvmlReturn_t enter_ = nvgo_enter(FN_##fn);            \
		if (enter_ != NVML_SUCCESS)                           \
			return enter_;                                \
	} while (0)

#endif
