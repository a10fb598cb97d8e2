//go:build cgo

package nvmlx

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>

// nvmlVgpuPlacementId_v1_t.
typedef struct {
	unsigned int version;
	unsigned int placementId;
} nvgoVgpuPlacementId;

typedef int (*nvgoPlacementFn)(unsigned int, nvgoVgpuPlacementId *);

// nvgoPlacementID calls nvmlVgpuInstanceGetPlacementId from the NVML that
// go-nvml loaded (RTLD_GLOBAL). A driver without the symbol gives
// NVML_ERROR_FUNCTION_NOT_FOUND (13), never a call.
static int nvgoPlacementID(unsigned int instance, unsigned int *id) {
	nvgoPlacementFn f = (nvgoPlacementFn)dlsym(RTLD_DEFAULT, "nvmlVgpuInstanceGetPlacementId");
	if (f == 0) {
		return 13;
	}
	// NVML_STRUCT_VERSION(VgpuPlacementId, 1): the size, and 1 in the top byte.
	nvgoVgpuPlacementId p = {(unsigned int)sizeof(nvgoVgpuPlacementId) | (1u << 24), 0};
	int r = f(instance, &p);
	*id = p.placementId;
	return r;
}
*/
import "C"

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// placementID calls nvmlVgpuInstanceGetPlacementId for a vGPU instance of
// the real library; the caller holds the backend's guard.
func placementID(instance uint32) (uint32, nvml.Return) {
	var id C.uint
	r := C.nvgoPlacementID(C.uint(instance), &id)
	return uint32(id), nvml.Return(r)
}
