//go:build cgo

package libnvml

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

typedef unsigned int (*nvgo_counts_fn)(char *, unsigned int);
typedef void (*nvgo_reset_fn)(void);

static unsigned int nvgo_call_counts(void *fn, char *buf, unsigned int size) {
	return ((nvgo_counts_fn)fn)(buf, size);
}
static void nvgo_reset_calls(void *fn) { ((nvgo_reset_fn)fn)(); }
static void *nvgo_lookup(const char *name) { return dlsym(RTLD_DEFAULT, name); }
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"
)

// ErrNotLoaded is returned when this process has not loaded the drop-in
// library (go-nvml loads it at the first Init).
var ErrNotLoaded = errors.New("nvgo's drop-in libnvidia-ml.so.1 is not loaded in this process")

// CallCounts is what the library counted: calls per function, and in all.
type CallCounts struct {
	Total uint64            `json:"total"`
	Calls map[string]uint64 `json:"calls"`
}

// ParseCallCounts reads the JSON the library writes (nvgoFakeCallCounts,
// NVGO_FAKE_CALLS).
func ParseCallCounts(data []byte) (CallCounts, error) {
	var c CallCounts
	if err := json.Unmarshal(data, &c); err != nil {
		return CallCounts{}, fmt.Errorf("call counts: %w", err)
	}
	if c.Calls == nil {
		c.Calls = map[string]uint64{}
	}
	return c, nil
}

func lookup(name string) unsafe.Pointer {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return C.nvgo_lookup(cs)
}

// LoadedCalls returns the counts of the library loaded in this process.
func LoadedCalls() (CallCounts, error) {
	fn := lookup("nvgoFakeCallCounts")
	if fn == nil {
		return CallCounts{}, ErrNotLoaded
	}
	n := C.nvgo_call_counts(fn, nil, 0)
	buf := make([]byte, n+1)
	C.nvgo_call_counts(fn, (*C.char)(unsafe.Pointer(&buf[0])), C.uint(len(buf)))
	return ParseCallCounts(buf[:n])
}

// ResetLoadedCalls sets the counts of the library loaded in this process
// to zero.
func ResetLoadedCalls() error {
	fn := lookup("nvgoFakeResetCalls")
	if fn == nil {
		return ErrNotLoaded
	}
	C.nvgo_reset_calls(fn)
	return nil
}
