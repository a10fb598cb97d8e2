//go:build cgo

package cudaprobe

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// CUresult is an enum and CUdevice an int in cuda.h; both are int-sized.
// CUuuid is a struct of 16 chars, passed by pointer.

// dlerror's text is per thread, so it is read in the same C call as dlopen.
static void *cuprobe_open(const char *path, char *err, size_t n) {
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		strncpy(err, e != NULL ? e : "dlopen failed", n - 1);
		err[n - 1] = 0;
	}
	return h;
}

static int cuprobe_init(void *f, unsigned int flags) { return ((int (*)(unsigned int))f)(flags); }
static int cuprobe_count(void *f, int *n) { return ((int (*)(int *))f)(n); }
static int cuprobe_get(void *f, int *dev, int ordinal) { return ((int (*)(int *, int))f)(dev, ordinal); }
static int cuprobe_uuid(void *f, unsigned char *uuid, int dev) { return ((int (*)(unsigned char *, int))f)(uuid, dev); }
static int cuprobe_version(void *f, int *v) { return ((int (*)(int *))f)(v); }
static int cuprobe_errname(void *f, int code, const char **name) { return ((int (*)(int, const char **))f)(code, name); }
*/
import "C"

import (
	"fmt"
	"os"
	"unsafe"
)

const haveCGO = true

const (
	cudaSuccess  = 0
	cudaNoDevice = 100 // CUDA_ERROR_NO_DEVICE: nothing visible, not a failure
)

// driver holds the libcuda entry points. The optional ones may be nil and are
// then never called.
type driver struct {
	init, count, get, uuid unsafe.Pointer // required
	version, errName       unsafe.Pointer // optional
	uuidFunc               string
}

func probeDriver() reply {
	path := C.CString(libPath())
	defer C.free(unsafe.Pointer(path))
	var msg [512]C.char
	h := C.cuprobe_open(path, &msg[0], C.size_t(len(msg)))
	if h == nil {
		return reply{Err: &replyErr{Kind: kindNoLib, Msg: C.GoString(&msg[0])}}
	}
	// No dlclose: the process exits right after, and libcuda dislikes unloading.
	d, missing := resolve(h)
	if missing != "" {
		return reply{Err: &replyErr{Kind: kindSymbol, Msg: missing}}
	}
	uuids, err := d.enumerate()
	if err != nil {
		return reply{Err: err}
	}
	return reply{UUIDs: uuids, UUIDFunc: d.uuidFunc, DriverVersion: d.driverVersion()}
}

// libPath is NVGO_LIBCUDA, or libcuda.so.1 when that is empty.
func libPath() string {
	if p := os.Getenv(libEnv); p != "" {
		return p
	}
	return defaultLib
}

// resolve looks up every entry point; it returns the name of the first
// required one that is missing.
func resolve(h unsafe.Pointer) (*driver, string) {
	d := &driver{
		init:    sym(h, "cuInit"),
		count:   sym(h, "cuDeviceGetCount"),
		get:     sym(h, "cuDeviceGet"),
		version: sym(h, "cuDriverGetVersion"),
		errName: sym(h, "cuGetErrorName"),
	}
	for _, name := range []string{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"} {
		if d.uuid = sym(h, name); d.uuid != nil {
			d.uuidFunc = name
			break
		}
	}
	switch {
	case d.init == nil:
		return nil, "cuInit"
	case d.count == nil:
		return nil, "cuDeviceGetCount"
	case d.get == nil:
		return nil, "cuDeviceGet"
	case d.uuid == nil:
		return nil, "neither cuDeviceGetUuid_v2 nor cuDeviceGetUuid"
	}
	return d, ""
}

func sym(h unsafe.Pointer, name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.dlsym(h, cname)
}

// enumerate returns the UUID of every device CUDA enumerates, by ordinal.
func (d *driver) enumerate() ([]string, *replyErr) {
	if rc := C.cuprobe_init(d.init, 0); rc == cudaNoDevice {
		return []string{}, nil
	} else if rc != cudaSuccess {
		return nil, d.fail("cuInit", rc)
	}
	var n C.int
	if rc := C.cuprobe_count(d.count, &n); rc == cudaNoDevice {
		return []string{}, nil
	} else if rc != cudaSuccess {
		return nil, d.fail("cuDeviceGetCount", rc)
	}
	uuids := make([]string, 0, int(n))
	for i := C.int(0); i < n; i++ {
		var dev C.int
		if rc := C.cuprobe_get(d.get, &dev, i); rc != cudaSuccess {
			return nil, d.fail("cuDeviceGet", rc)
		}
		var u [16]C.uchar
		if rc := C.cuprobe_uuid(d.uuid, &u[0], dev); rc != cudaSuccess {
			return nil, d.fail(d.uuidFunc, rc)
		}
		b := C.GoBytes(unsafe.Pointer(&u[0]), 16)
		uuids = append(uuids, fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
	}
	return uuids, nil
}

func (d *driver) fail(op string, rc C.int) *replyErr {
	e := &replyErr{Kind: kindCUDA, Op: op, Code: int(rc)}
	if d.errName != nil {
		var name *C.char
		if C.cuprobe_errname(d.errName, rc, &name) == cudaSuccess && name != nil {
			e.Name = C.GoString(name)
		}
	}
	return e
}

// driverVersion is cuDriverGetVersion's value (e.g. 12040), or 0.
func (d *driver) driverVersion() int {
	var v C.int
	if d.version == nil || C.cuprobe_version(d.version, &v) != cudaSuccess {
		return 0
	}
	return int(v)
}
