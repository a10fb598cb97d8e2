//go:build cgo

package fakegpu

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Every …Func field of the fleet's and the devices' moq mocks goes through
// one interceptor, built here by reflection: fields left nil get a stub
// answering ERROR_NOT_SUPPORTED, then each field is wrapped so that a call
// is counted, checked against the rules of the real library (a call that
// would kill a real process is refused and recorded as a violation), and
// subjected to injected faults before it reaches the implementation.

var (
	returnType = reflect.TypeOf(nvml.SUCCESS)
	errorType  = reflect.TypeOf((*error)(nil)).Elem()
	deviceType = reflect.TypeOf((*nvml.Device)(nil)).Elem()
)

// initFree are the library-level methods a real process may call without a
// successful Init: Init itself, and those go-nvml answers in Go.
var initFree = map[string]bool{
	"Init":          true,
	"InitWithFlags": true,
	"Extensions":    true,
	"LookupSymbol":  true,
	"ErrorString":   true,
}

// versioned are the NVML functions go-nvml binds to the newest of the base
// symbol, "_v2" and "_v3"; they are missing only when all three are.
var versioned = map[string]bool{
	"nvmlDeviceGetComputeRunningProcesses":    true,
	"nvmlDeviceGetGraphicsRunningProcesses":   true,
	"nvmlDeviceGetMPSComputeRunningProcesses": true,
}

// site is one function of the fake: where a call goes and how it is checked.
type site struct {
	name     string   // counted name: "DeviceGetCount", "Device.GetName"
	method   string   // bare method name, the key of injected faults
	symbols  []string // NVML symbols; missing only when all are
	initFree bool
	gpu      *GPU // nil for library-level functions
	mig      *MIG // the MIG device of a MIG handle's function
	outs     []reflect.Type
	variadic bool
}

func newSite(name, method, symbol string, gpu *GPU, ft reflect.Type) *site {
	s := &site{name: name, method: method, gpu: gpu, variadic: ft.IsVariadic()}
	if gpu == nil {
		s.initFree = initFree[method]
	}
	s.symbols = []string{symbol}
	if versioned[symbol] {
		s.symbols = append(s.symbols, symbol+"_v2", symbol+"_v3")
	}
	for i := 0; i < ft.NumOut(); i++ {
		s.outs = append(s.outs, ft.Out(i))
	}
	return s
}

// results returns zero results carrying ret in every nvml.Return result
// (and every error result, unless ret is SUCCESS).
func (s *site) results(ret nvml.Return) []reflect.Value {
	out := make([]reflect.Value, len(s.outs))
	for i, t := range s.outs {
		v := reflect.New(t).Elem()
		switch {
		case t == returnType:
			v.Set(reflect.ValueOf(ret))
		case t == errorType && ret != nvml.SUCCESS:
			v.Set(reflect.ValueOf(ret))
		}
		out[i] = v
	}
	return out
}

// wireInterface wires the fleet's nvml.Interface and ExtendedInterface
// mocks. A nil "DeviceX(dev, …)" method forwards to the handle's X, as the
// real library does; other nil methods are stubs.
func (f *Fleet) wireInterface() {
	for _, mockValue := range []reflect.Value{
		reflect.ValueOf(&f.Interface).Elem(),
		reflect.ValueOf(&f.ExtendedInterface).Elem(),
	} {
		f.wire(mockValue, nil, nil, f.forwarder)
	}
}

// wireDevice wires a device handle's mock, a GPU's or a MIG device's; nil
// methods are stubs.
func (f *Fleet) wireDevice(d *device) {
	f.wire(reflect.ValueOf(&d.Device).Elem(), d.g, d.m, nil)
}

// wire wraps every …Func field of the addressable moq struct v.
func (f *Fleet) wire(v reflect.Value, gpu *GPU, mig *MIG, fallback func(method string, ft reflect.Type) (reflect.Value, bool)) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		method, ok := strings.CutSuffix(sf.Name, "Func")
		if !ok || !sf.IsExported() || sf.Type.Kind() != reflect.Func {
			continue
		}
		name, symbol := method, "nvml"+method
		if gpu != nil {
			name, symbol = "Device."+method, "nvmlDevice"+method
		}
		s := newSite(name, method, symbol, gpu, sf.Type)
		s.mig = mig
		// Copy the func out of the field: the field itself is about to
		// hold the wrapper.
		impl := reflect.ValueOf(v.Field(i).Interface())
		if impl.IsNil() {
			var found bool
			if fallback != nil {
				impl, found = fallback(method, sf.Type)
			}
			if !found {
				impl = stub(s, sf.Type)
			}
		}
		v.Field(i).Set(reflect.MakeFunc(sf.Type, func(args []reflect.Value) []reflect.Value {
			return f.call(s, impl, args)
		}))
	}
}

// stub answers ERROR_NOT_SUPPORTED with zero values, as a GPU without the
// feature would.
func stub(s *site, ft reflect.Type) reflect.Value {
	return reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
		return s.results(nvml.ERROR_NOT_SUPPORTED)
	})
}

// forwarder implements a library-level "DeviceX(dev, args…)" method by
// calling dev.X(args…) on one of this fleet's handles, if the signatures
// match. Another device is ERROR_INVALID_ARGUMENT.
func (f *Fleet) forwarder(method string, ft reflect.Type) (reflect.Value, bool) {
	name, ok := strings.CutPrefix(method, "Device")
	if !ok || ft.NumIn() == 0 || ft.In(0) != deviceType || ft.IsVariadic() {
		return reflect.Value{}, false
	}
	m, ok := reflect.TypeOf((*device)(nil)).MethodByName(name)
	if !ok || !sameSignature(m.Type, ft) {
		return reflect.Value{}, false
	}
	s := newSite(method, method, "", nil, ft)
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		d, ok := args[0].Interface().(*device)
		if !ok || d == nil || d.g.f != f {
			return s.results(nvml.ERROR_INVALID_ARGUMENT)
		}
		return reflect.ValueOf(d).Method(m.Index).Call(args[1:])
	}), true
}

// sameSignature reports whether method type mt (receiver first) takes the
// parameters of ft after its first and returns the same results.
func sameSignature(mt, ft reflect.Type) bool {
	if mt.NumIn() != ft.NumIn() || mt.NumOut() != ft.NumOut() {
		return false
	}
	for i := 1; i < ft.NumIn(); i++ {
		if mt.In(i) != ft.In(i) {
			return false
		}
	}
	for i := 0; i < ft.NumOut(); i++ {
		if mt.Out(i) != ft.Out(i) {
			return false
		}
	}
	return true
}

// call is the interceptor.
func (f *Fleet) call(s *site, impl reflect.Value, args []reflect.Value) []reflect.Value {
	if ret := f.admit(s); ret != nvml.SUCCESS {
		return s.results(ret)
	}
	if s.variadic {
		return impl.CallSlice(args)
	}
	return impl.Call(args)
}

// admit counts a call and returns SUCCESS if it may proceed, else the code
// it answers instead.
func (f *Fleet) admit(s *site) nvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[s.name]++
	f.total++
	if !s.initFree {
		if f.refcount == 0 {
			f.violateLocked(s.name + " called " + f.stateLocked())
			return nvml.ERROR_UNINITIALIZED
		}
		if f.missingLocked(s.symbols) {
			f.violateLocked(fmt.Sprintf("%s called but the driver lacks %s", s.name, strings.Join(s.symbols, ", ")))
			return nvml.ERROR_FUNCTION_NOT_FOUND
		}
	}
	if m := s.mig; m != nil {
		// The parent's injected faults are its own; a MIG device has its
		// own (MIG.Fail).
		switch {
		case m.removed:
			return nvml.ERROR_INVALID_ARGUMENT
		case m.g.lost:
			return nvml.ERROR_GPU_IS_LOST
		}
		if r, ok := m.fails[s.method]; ok {
			return r
		}
		return nvml.SUCCESS
	}
	if g := s.gpu; g != nil {
		if g.lost {
			return nvml.ERROR_GPU_IS_LOST
		}
		if r, ok := g.fails[s.method]; ok {
			return r
		}
		if g.unsupported[s.method] {
			return nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.SUCCESS
	}
	if r, ok := f.fails[s.method]; ok {
		return r
	}
	return nvml.SUCCESS
}

// stateLocked says why no Init is held.
func (f *Fleet) stateLocked() string {
	switch {
	case f.initFailed:
		return "after failed Init"
	case f.shutDown:
		return "after final Shutdown"
	}
	return "before Init"
}

// missingLocked reports whether every one of symbols was declared missing.
func (f *Fleet) missingLocked(symbols []string) bool {
	for _, sym := range symbols {
		if !f.missing[sym] {
			return false
		}
	}
	return len(symbols) > 0
}
