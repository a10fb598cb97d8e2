//go:build cgo

package nvmlx

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

// nvmlDevice_t: a struct of one pointer, passed as the pointer is.
typedef struct { void *handle; } nvgoDevice;

typedef int (*nvgoListFn)(nvgoDevice, unsigned int *, void *);
typedef int (*nvgoProcUtilFn)(nvgoDevice, void *, unsigned int *, unsigned long long);
typedef int (*nvgoSamplesFn)(nvgoDevice, int, unsigned long long, int *, unsigned int *, void *);

static void *nvgoLookup(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static int nvgoCallList(void *fn, void *dev, unsigned int *count, void *buf) {
	nvgoDevice d = {dev};
	return ((nvgoListFn)fn)(d, count, buf);
}

static int nvgoCallProcUtil(void *fn, void *dev, void *buf, unsigned int *count, unsigned long long lastSeen) {
	nvgoDevice d = {dev};
	return ((nvgoProcUtilFn)fn)(d, buf, count, lastSeen);
}

static int nvgoCallSamples(void *fn, void *dev, int type, unsigned long long lastSeen, int *vt, unsigned int *count, void *buf) {
	nvgoDevice d = {dev};
	return ((nvgoSamplesFn)fn)(d, type, lastSeen, vt, count, buf);
}
*/
import "C"

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// go-nvml's wrappers of the list calls grow their buffer from one entry
// by doubling, and ask the sample calls their size first: two or more C
// calls where one does. For handles of the real library (go-nvml's own
// device type), nvgo makes these calls itself, through the functions of
// the library go-nvml loaded, with a buffer sized from the previous
// answer: one call per list in steady state. Fakes behind nvml.Interface
// keep going through go-nvml's methods.

// rawHandle returns the C handle inside a go-nvml device handle, or nil for
// any other implementation of nvml.Device (a fake).
func rawHandle(h nvml.Device) unsafe.Pointer {
	v := reflect.ValueOf(h)
	t := v.Type()
	if t.PkgPath() != "github.com/NVIDIA/go-nvml/pkg/nvml" || t.Name() != "nvmlDevice" ||
		t.Kind() != reflect.Struct || t.NumField() != 1 || t.Field(0).Type.Kind() != reflect.Pointer {
		return nil
	}
	return v.Field(0).UnsafePointer()
}

// rawFunc is an NVML function found in the loaded library: the newest of
// its versions.
type rawFunc struct {
	once sync.Once
	fn   unsafe.Pointer
	v1   bool // the unversioned function, with v1 structs
}

func (f *rawFunc) resolve(names ...string) unsafe.Pointer {
	f.once.Do(func() {
		for i, n := range names {
			cs := C.CString(n)
			p := C.nvgoLookup(cs)
			C.free(unsafe.Pointer(cs))
			if p != nil {
				f.fn, f.v1 = p, i == len(names)-1 && len(names) > 1
				return
			}
		}
	})
	return f.fn
}

var (
	rawCompute  rawFunc
	rawGraphics rawFunc
	rawMPS      rawFunc
	rawProcUtil rawFunc
	rawSamples  rawFunc
)

// processInfoV2 is nvmlProcessInfo_v2_t (the _v2 and _v3 calls' entries).
type processInfoV2 struct {
	pid               uint32
	_                 uint32
	usedGpuMemory     uint64
	gpuInstanceID     uint32
	computeInstanceID uint32
}

// processInfoV1 is nvmlProcessInfo_v1_t.
type processInfoV1 struct {
	pid           uint32
	_             uint32
	usedGpuMemory uint64
}

// bufPool reuses the buffers of the list calls: memory handed to C moves
// to the heap, so a buffer per call would be garbage per call.
type bufPool[T any] struct{ p sync.Pool }

// get returns a buffer of n entries.
func (bp *bufPool[T]) get(n uint32) *[]T {
	v, _ := bp.p.Get().(*[]T)
	if v == nil || uint32(cap(*v)) < n {
		b := make([]T, n)
		v = &b
	}
	*v = (*v)[:n]
	return v
}

func (bp *bufPool[T]) put(v *[]T) { bp.p.Put(v) }

var (
	procBufsV1 bufPool[processInfoV1]
	procBufsV2 bufPool[processInfoV2]
	utilBufs   bufPool[processUtilizationSample]
	sampleBufs bufPool[sampleEntry]
)

// listHint is the capacity a list call starts with: the entries of the
// previous answer and some room, at least minListRoom.
type listHint struct{ n atomic.Uint32 }

const minListRoom = 16

func (h *listHint) room() uint32 { return max(h.n.Load()+h.n.Load()/4+2, minListRoom) }

// maxRawTries bounds the calls of one list read when the list keeps
// growing between the calls.
const maxRawTries = 4

// rawProcessList reads a process list with a buffer sized from the hint.
func rawProcessList(f *rawFunc, dev unsafe.Pointer, hint *listHint, names ...string) ([]ProcessInfo, nvml.Return) {
	fn := f.resolve(names...)
	if fn == nil {
		return nil, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	room := hint.room()
	for try := 0; ; try++ {
		count := C.uint(room)
		var ret C.int
		var out []ProcessInfo
		if f.v1 {
			bp := procBufsV1.get(room)
			buf := *bp
			ret = C.nvgoCallList(fn, dev, &count, unsafe.Pointer(&buf[0]))
			if ret == C.int(nvml.SUCCESS) {
				out = make([]ProcessInfo, min(uint32(count), room))
				for i := range out {
					out[i] = ProcessInfo{PID: buf[i].pid, UsedMemory: buf[i].usedGpuMemory, GPUInstanceID: NoInstance, ComputeInstanceID: NoInstance}
				}
			}
			procBufsV1.put(bp)
		} else {
			bp := procBufsV2.get(room)
			buf := *bp
			ret = C.nvgoCallList(fn, dev, &count, unsafe.Pointer(&buf[0]))
			if ret == C.int(nvml.SUCCESS) {
				out = make([]ProcessInfo, min(uint32(count), room))
				for i := range out {
					b := &buf[i]
					out[i] = ProcessInfo{PID: b.pid, UsedMemory: b.usedGpuMemory, GPUInstanceID: b.gpuInstanceID, ComputeInstanceID: b.computeInstanceID}
				}
			}
			procBufsV2.put(bp)
		}
		switch nvml.Return(ret) {
		case nvml.SUCCESS:
			hint.n.Store(uint32(len(out)))
			return out, nvml.SUCCESS
		case nvml.ERROR_INSUFFICIENT_SIZE:
			if try == maxRawTries-1 {
				return nil, nvml.ERROR_INSUFFICIENT_SIZE
			}
			hint.n.Store(uint32(count))
			room = hint.room()
		default:
			return nil, nvml.Return(ret)
		}
	}
}

// processUtilizationSample is nvmlProcessUtilizationSample_t.
type processUtilizationSample struct {
	pid       uint32
	_         uint32
	timeStamp uint64
	smUtil    uint32
	memUtil   uint32
	encUtil   uint32
	decUtil   uint32
}

// rawProcessUtilization reads the process samples newer than lastSeen
// with a buffer sized from the hint; NOT_FOUND (none newer) is an empty
// answer.
func rawProcessUtilization(dev unsafe.Pointer, hint *listHint, lastSeen uint64) ([]ProcessSample, nvml.Return) {
	fn := rawProcUtil.resolve("nvmlDeviceGetProcessUtilization")
	if fn == nil {
		return nil, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	room := hint.room()
	for try := 0; ; try++ {
		bp := utilBufs.get(room)
		buf := *bp
		count := C.uint(room)
		ret := nvml.Return(C.nvgoCallProcUtil(fn, dev, unsafe.Pointer(&buf[0]), &count, C.ulonglong(lastSeen)))
		var out []ProcessSample
		if ret == nvml.SUCCESS {
			out = make([]ProcessSample, min(uint32(count), room))
			for i := range out {
				b := &buf[i]
				out[i] = ProcessSample{PID: b.pid, Timestamp: b.timeStamp, SM: b.smUtil, Memory: b.memUtil, Enc: b.encUtil, Dec: b.decUtil}
			}
		}
		utilBufs.put(bp)
		switch ret {
		case nvml.SUCCESS:
			hint.n.Store(uint32(len(out)))
			return out, nvml.SUCCESS
		case nvml.ERROR_NOT_FOUND:
			return nil, nvml.SUCCESS
		case nvml.ERROR_INSUFFICIENT_SIZE:
			if try == maxRawTries-1 {
				return nil, ret
			}
			hint.n.Store(uint32(count))
			room = hint.room()
		default:
			return nil, ret
		}
	}
}

// sampleEntry is nvmlSample_t.
type sampleEntry struct {
	timeStamp uint64
	value     [8]byte
}

// rawSamples reads the samples of kind newer than lastSeen in one call,
// with a buffer as large as the driver's (capacity, learnt once with a
// size query).
func rawSampleRead(dev unsafe.Pointer, capacity *atomic.Uint32, kind SampleKind, lastSeen uint64) (nvml.ValueType, []nvml.Sample, nvml.Return) {
	fn := rawSamples.resolve("nvmlDeviceGetSamples")
	if fn == nil {
		return 0, nil, nvml.ERROR_FUNCTION_NOT_FOUND
	}
	var vt C.int
	room := capacity.Load()
	if room == 0 {
		// The size query answers how many samples the driver keeps (since
		// lastSeen 0: all of them).
		var n C.uint
		ret := nvml.Return(C.nvgoCallSamples(fn, dev, C.int(kind), 0, &vt, &n, nil))
		if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_FOUND {
			return 0, nil, ret
		}
		room = max(uint32(n), 2*minListRoom)
		capacity.Store(room)
	}
	bp := sampleBufs.get(room)
	defer sampleBufs.put(bp)
	buf := *bp
	count := C.uint(room)
	ret := nvml.Return(C.nvgoCallSamples(fn, dev, C.int(kind), C.ulonglong(lastSeen), &vt, &count, unsafe.Pointer(&buf[0])))
	if ret != nvml.SUCCESS {
		return nvml.ValueType(vt), nil, ret
	}
	n := min(uint32(count), room)
	if n == room {
		capacity.Store(2 * room) // perhaps more were kept than fit: more room next time
	}
	out := make([]nvml.Sample, n)
	for i := range out {
		out[i] = nvml.Sample{TimeStamp: buf[i].timeStamp, SampleValue: buf[i].value}
	}
	return nvml.ValueType(vt), out, nvml.SUCCESS
}
