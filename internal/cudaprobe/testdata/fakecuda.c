// fakecuda: a stand-in for libcuda.so.1 with just the functions cudaprobe
// calls. Behaviour comes from the environment the probe child sees:
//
//   FAKECUDA_UUIDS        devices in PCI order: comma-separated UUIDs, 32 hex
//                         digits each, dashes ignored
//   CUDA_DEVICE_ORDER     PCI_BUS_ID keeps that order; anything else (the
//                         driver's FASTEST_FIRST default) reverses it, so a
//                         test can tell whether the variable reached the child
//   CUDA_VISIBLE_DEVICES  integer entries only, read up to the first invalid
//                         one; unset means all
//   FAKECUDA_INIT=<code>  cuInit returns code
//   FAKECUDA_COUNT=<code> cuDeviceGetCount returns code
//   FAKECUDA_CRASH=1      cuInit calls abort()
//   FAKECUDA_HANG=1       cuInit sleeps for a minute
//
// Build with -DNO_V2 to leave out cuDeviceGetUuid_v2, with -DNO_UUID to leave
// out both UUID functions.
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct { char bytes[16]; } CUuuid;

enum {
	SUCCESS = 0,
	INVALID_VALUE = 1,
	NOT_INITIALIZED = 3,
	NO_DEVICE = 100,
	INVALID_DEVICE = 101,
};

#define MAXDEV 32

static int initialised;
static int ndev;                          // devices visible, by ordinal
static unsigned char uuids[MAXDEV][16];   // by ordinal

static int hexval(char c) {
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

// parse_uuids reads FAKECUDA_UUIDS into out and returns how many it read.
static int parse_uuids(unsigned char out[][16]) {
	const char *s = getenv("FAKECUDA_UUIDS");
	int n = 0;
	while (s != NULL && *s != 0 && n < MAXDEV) {
		int nib = 0;
		memset(out[n], 0, 16);
		for (; *s != 0 && *s != ','; s++) {
			int v = hexval(*s);
			if (v < 0 || nib >= 32) continue;
			out[n][nib / 2] |= (unsigned char)(nib % 2 == 0 ? v << 4 : v);
			nib++;
		}
		n++;
		if (*s == ',') s++;
	}
	return n;
}

static int env_int(const char *name) {
	const char *s = getenv(name);
	return s != NULL ? atoi(s) : 0;
}

CUresult cuInit(unsigned int flags) {
	unsigned char all[MAXDEV][16];
	int nall, i;
	const char *order, *cvd;

	(void)flags;
	if (env_int("FAKECUDA_CRASH")) abort();
	if (env_int("FAKECUDA_HANG")) sleep(60);
	if (env_int("FAKECUDA_INIT")) return env_int("FAKECUDA_INIT");

	nall = parse_uuids(all);
	order = getenv("CUDA_DEVICE_ORDER");
	if (order == NULL || strcmp(order, "PCI_BUS_ID") != 0) {
		for (i = 0; i < nall / 2; i++) {
			unsigned char t[16];
			memcpy(t, all[i], 16);
			memcpy(all[i], all[nall - 1 - i], 16);
			memcpy(all[nall - 1 - i], t, 16);
		}
	}

	cvd = getenv("CUDA_VISIBLE_DEVICES");
	ndev = 0;
	if (cvd == NULL) {
		memcpy(uuids, all, sizeof all);
		ndev = nall;
	} else {
		while (*cvd != 0 && ndev < MAXDEV) {
			char *end;
			long idx = strtol(cvd, &end, 10);
			if (end == cvd || (*end != ',' && *end != 0) || idx < 0 || idx >= nall) break;
			memcpy(uuids[ndev++], all[idx], 16);
			cvd = *end == ',' ? end + 1 : end;
		}
	}
	initialised = 1;
	return ndev == 0 ? NO_DEVICE : SUCCESS;
}

CUresult cuDeviceGetCount(int *count) {
	if (!initialised) return NOT_INITIALIZED;
	if (env_int("FAKECUDA_COUNT")) return env_int("FAKECUDA_COUNT");
	*count = ndev;
	return SUCCESS;
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal) {
	if (!initialised) return NOT_INITIALIZED;
	if (ordinal < 0 || ordinal >= ndev) return INVALID_DEVICE;
	*dev = ordinal;
	return SUCCESS;
}

#ifndef NO_UUID
static CUresult get_uuid(CUuuid *uuid, CUdevice dev) {
	if (!initialised) return NOT_INITIALIZED;
	if (dev < 0 || dev >= ndev) return INVALID_DEVICE;
	memcpy(uuid->bytes, uuids[dev], 16);
	return SUCCESS;
}

CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }

#ifndef NO_V2
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev) { return get_uuid(uuid, dev); }
#endif
#endif

CUresult cuDriverGetVersion(int *version) {
	*version = 12040;
	return SUCCESS;
}

CUresult cuGetErrorName(CUresult code, const char **name) {
	switch (code) {
	case INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return SUCCESS;
	case NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; return SUCCESS;
	case NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; return SUCCESS;
	case INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; return SUCCESS;
	case 999: *name = "CUDA_ERROR_UNKNOWN"; return SUCCESS;
	}
	*name = NULL;
	return INVALID_VALUE;
}
