//go:build cgo

package fakegpu

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Every …Func field of the moq mocks of the fleet and of its handles
// (devices, vGPU instances, vGPU types) goes through one interceptor, built
// here by reflection: fields left nil get a stub answering
// ERROR_NOT_SUPPORTED, then each field is wrapped so that a call is
// counted, checked against the rules of the real library (a call that
// would kill a real process is refused and recorded as a violation), and
// subjected to injected faults before it reaches the implementation.

var (
	returnType       = reflect.TypeOf(nvml.SUCCESS)
	errorType        = reflect.TypeOf((*error)(nil)).Elem()
	deviceType       = reflect.TypeOf((*nvml.Device)(nil)).Elem()
	vgpuInstanceType = reflect.TypeOf((*nvml.VgpuInstance)(nil)).Elem()
	vgpuTypeIdType   = reflect.TypeOf((*nvml.VgpuTypeId)(nil)).Elem()
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

// versions are the NVML functions go-nvml binds to the newest of several
// versioned symbols, with the suffixes of the newer ones; such a function is
// missing only when every version is.
var versions = map[string][]string{
	"nvmlDeviceGetComputeRunningProcesses":    {"_v2", "_v3"},
	"nvmlDeviceGetGraphicsRunningProcesses":   {"_v2", "_v3"},
	"nvmlDeviceGetMPSComputeRunningProcesses": {"_v2", "_v3"},
	"nvmlVgpuInstanceGetLicenseInfo":          {"_v2"},
}

// scope says whose function a site is: it names the function and picks the
// faults that apply to it.
type scope struct {
	prefix    string // of counted names: "", "Device.", "VgpuInstance.", "VgpuTypeId."
	symPrefix string // of NVML symbols: "nvml", "nvmlDevice", "nvmlVgpuInstance", "nvmlVgpuType"
	gpu       *GPU   // a device handle's GPU (a MIG device's parent)
	mig       *MIG   // a MIG device handle's device
	vgpu      *Vgpu  // a vGPU instance handle's instance
	vgpuType  bool   // a vGPU type handle: no faults but the library's
}

// libraryScope is that of the fleet's own nvml.Interface methods.
var libraryScope = scope{symPrefix: "nvml"}

// site is one function of the fake: where a call goes and how it is checked.
type site struct {
	name     string   // counted name: "DeviceGetCount", "Device.GetName"
	method   string   // bare method name, the key of injected faults
	symbols  []string // NVML symbols; missing only when all are
	initFree bool
	scope
	outs     []reflect.Type
	variadic bool
}

func newSite(sc scope, method string, ft reflect.Type) *site {
	symbol := sc.symPrefix + method
	s := &site{name: sc.prefix + method, method: method, scope: sc, variadic: ft.IsVariadic()}
	if sc == libraryScope {
		s.initFree = initFree[method]
	}
	s.symbols = []string{symbol}
	for _, v := range versions[symbol] {
		s.symbols = append(s.symbols, symbol+v)
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

// wiredSite is a function of the fake with the implementation its
// interceptor calls: what peek needs to call it without the interceptor.
type wiredSite struct {
	*site
	impl reflect.Value
}

// sites are the wired functions of one handle (or of the fleet), by method
// name.
type sites map[string]wiredSite

// wireInterface wires the fleet's nvml.Interface and ExtendedInterface
// mocks. A nil "DeviceX(dev, …)", "VgpuInstanceX(vgpu, …)" or
// "VgpuTypeX(vgpuType, …)" method forwards to the handle's X, as the real
// library does; other nil methods are stubs.
func (f *Fleet) wireInterface() {
	f.sites = sites{}
	for _, mockValue := range []reflect.Value{
		reflect.ValueOf(&f.Interface).Elem(),
		reflect.ValueOf(&f.ExtendedInterface).Elem(),
	} {
		f.wire(mockValue, libraryScope, f.forwarder, f.sites)
	}
}

// wireDevice wires a device handle's mock, a GPU's or a MIG device's; nil
// methods are stubs.
func (f *Fleet) wireDevice(d *device) {
	d.sites = sites{}
	f.wire(reflect.ValueOf(&d.Device).Elem(), scope{prefix: "Device.", symPrefix: "nvmlDevice", gpu: d.g, mig: d.m}, nil, d.sites)
}

// wire wraps every …Func field of the addressable struct v (a moq mock, or
// a handle with …Func fields of its own) and records each in into.
func (f *Fleet) wire(v reflect.Value, sc scope, fallback func(method string, ft reflect.Type) (reflect.Value, bool), into sites) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		method, ok := strings.CutSuffix(sf.Name, "Func")
		if !ok || !sf.IsExported() || sf.Type.Kind() != reflect.Func {
			continue
		}
		s := newSite(sc, method, sf.Type)
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
		into[method] = wiredSite{site: s, impl: impl}
	}
}

// stub answers ERROR_NOT_SUPPORTED with zero values, as a GPU without the
// feature would.
func stub(s *site, ft reflect.Type) reflect.Value {
	return reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
		return s.results(nvml.ERROR_NOT_SUPPORTED)
	})
}

// twinKinds are the handle types whose methods have library-level twins:
// "<prefix>X(handle, args…)" forwards to the handle's X if the handle is
// one of this fleet's.
var twinKinds = []struct {
	prefix string
	handle reflect.Type // the nvml interface of the first parameter
	impl   reflect.Type // the fake's handle type
	ours   func(f *Fleet, h any) (reflect.Value, bool)
}{
	{"Device", deviceType, reflect.TypeOf((*device)(nil)), func(f *Fleet, h any) (reflect.Value, bool) {
		d, ok := h.(*device)
		return reflect.ValueOf(d), ok && d != nil && d.g.f == f
	}},
	{"VgpuInstance", vgpuInstanceType, reflect.TypeOf((*vgpuHandle)(nil)), func(f *Fleet, h any) (reflect.Value, bool) {
		v, ok := h.(*vgpuHandle)
		return reflect.ValueOf(v), ok && v != nil && v.v.g.f == f
	}},
	{"VgpuType", vgpuTypeIdType, reflect.TypeOf((*vgpuType)(nil)), func(f *Fleet, h any) (reflect.Value, bool) {
		t, ok := h.(*vgpuType)
		return reflect.ValueOf(t), ok && t != nil && t.f == f
	}},
}

// forwarder implements a library-level "DeviceX(dev, args…)" method by
// calling dev.X(args…) on one of this fleet's handles, if the signatures
// match; likewise "VgpuInstanceX(vgpu, args…)" and "VgpuTypeX(vgpuType,
// args…)". Another fleet's handle, or nil, is ERROR_INVALID_ARGUMENT.
func (f *Fleet) forwarder(method string, ft reflect.Type) (reflect.Value, bool) {
	for _, k := range twinKinds {
		name, ok := strings.CutPrefix(method, k.prefix)
		if !ok || ft.NumIn() == 0 || ft.In(0) != k.handle || ft.IsVariadic() {
			continue
		}
		m, ok := k.impl.MethodByName(name)
		if !ok || !sameSignature(m.Type, ft) {
			return reflect.Value{}, false
		}
		s := newSite(libraryScope, method, ft)
		return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
			h, ok := k.ours(f, args[0].Interface())
			if !ok {
				return s.results(nvml.ERROR_INVALID_ARGUMENT)
			}
			return h.Method(m.Index).Call(args[1:])
		}), true
	}
	return reflect.Value{}, false
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
	if v := s.vgpu; v != nil {
		v.destroyOnCallLocked(s.method)
	}
	return f.faultLocked(s)
}

// faultLocked is the code a call of s answers because of the fleet's
// state and injected faults (SUCCESS when it may proceed): a lost GPU, a
// removed MIG device, a destroyed vGPU instance, Fail and Unsupported.
func (f *Fleet) faultLocked(s *site) nvml.Return {
	if s.vgpuType {
		return nvml.SUCCESS // types are fixed: nothing to inject
	}
	if v := s.vgpu; v != nil {
		return v.faultLocked(s.method)
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

// peek calls method of a handle (or of the fleet) as the interceptor would
// let a client call it, for the C door's exporter: the call is not
// counted, needs no Init and is not refused for a missing symbol, while
// the fleet's state and injected faults apply as to any call
// (DestroyOnCall does not fire). Each arg is converted to its parameter's
// type. A method the handle does not have answers NOT_SUPPORTED.
func (f *Fleet) peek(on sites, method string, args ...any) []reflect.Value {
	w, ok := on[method]
	if !ok {
		return []reflect.Value{reflect.ValueOf(nvml.ERROR_NOT_SUPPORTED)}
	}
	f.mu.Lock()
	ret := f.faultLocked(w.site)
	f.mu.Unlock()
	if ret != nvml.SUCCESS {
		return w.results(ret)
	}
	ft := w.impl.Type()
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a).Convert(ft.In(i))
	}
	return w.impl.Call(in)
}

// peekFault is what a call of method would answer before reaching its
// implementation: SUCCESS, or the fault that stops it (see peek).
func (f *Fleet) peekFault(on sites, method string) nvml.Return {
	w, ok := on[method]
	if !ok {
		return nvml.ERROR_NOT_SUPPORTED
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.faultLocked(w.site)
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
