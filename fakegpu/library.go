//go:build cgo

package fakegpu

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// errNotLoaded is what LookupSymbol answers before Init, as go-nvml does.
var errNotLoaded = errors.New("library not loaded")

// wireLibrary sets the implemented library-level methods, then lets the
// interceptor stub the rest and route all of them through it.
func (f *Fleet) wireLibrary() {
	f.InitFunc = f.init
	f.InitWithFlagsFunc = func(uint32) nvml.Return { return f.init() }
	f.ShutdownFunc = f.shutdown
	f.ExtensionsFunc = func() nvml.ExtendedInterface { return f }
	f.LookupSymbolFunc = f.lookupSymbol
	f.ErrorStringFunc = func(r nvml.Return) string { return r.Error() }
	f.SystemGetDriverVersionFunc = f.driverVersion
	f.SystemGetNVMLVersionFunc = f.nvmlVersionString
	f.SystemGetCudaDriverVersionFunc = f.cudaDriverVersion
	f.SystemGetCudaDriverVersion_v2Func = f.cudaDriverVersion
	f.SystemGetProcessNameFunc = f.processName
	f.DeviceGetCountFunc = func() (int, nvml.Return) { return len(f.gpus), nvml.SUCCESS }
	f.DeviceGetHandleByIndexFunc = f.handleByIndex
	f.DeviceGetHandleByUUIDFunc = f.handleByUUID
	f.DeviceGetHandleBySerialFunc = func(serial string) (nvml.Device, nvml.Return) {
		return f.handleBy(func(g *GPU) bool { return g.spec.Serial == serial })
	}
	f.DeviceGetHandleByPciBusIdFunc = func(id string) (nvml.Device, nvml.Return) {
		b, err := parseBusID(id)
		if err != nil {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		return f.handleBy(func(g *GPU) bool { return g.bus == b })
	}
	f.wireInterface()
}

// init is Init: NVML counts Init/Shutdown pairs.
func (f *Fleet) init() nvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failInit != nvml.SUCCESS {
		if f.refcount == 0 {
			f.initFailed = true
		}
		return f.failInit
	}
	f.refcount++
	f.initFailed = false
	return nvml.SUCCESS
}

// shutdown is Shutdown; the interceptor has already refused it when no
// Init is held.
func (f *Fleet) shutdown() nvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refcount > 0 {
		f.refcount--
	}
	if f.refcount == 0 {
		f.shutDown = true
	}
	return nvml.SUCCESS
}

// lookupSymbol is ExtendedInterface.LookupSymbol: every symbol exists
// except those declared missing, and none before Init.
func (f *Fleet) lookupSymbol(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refcount == 0 {
		return fmt.Errorf("error looking up %s: %w", name, errNotLoaded)
	}
	if f.missing[name] {
		return fmt.Errorf("undefined symbol: %s", name)
	}
	return nil
}

func (f *Fleet) driverVersion() (string, nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.driver, nvml.SUCCESS
}

func (f *Fleet) nvmlVersionString() (string, nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.nvmlVersion != "" {
		return f.nvmlVersion, nvml.SUCCESS
	}
	return fmt.Sprintf("%d.%s", f.cuda/1000, f.driver), nvml.SUCCESS
}

func (f *Fleet) cudaDriverVersion() (int, nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cuda, nvml.SUCCESS
}

// processName is SystemGetProcessName: the name of a process running on
// any GPU, ERROR_NOT_FOUND for another PID.
func (f *Fleet) processName(pid int) (string, nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pid > 0 && uint64(pid) <= math.MaxUint32 {
		for _, g := range f.gpus {
			if p := g.procLocked(uint32(pid)); p != nil {
				return p.name(), nvml.SUCCESS
			}
		}
	}
	return "", nvml.ERROR_NOT_FOUND
}

func (f *Fleet) handleByIndex(i int) (nvml.Device, nvml.Return) {
	if i < 0 || i >= len(f.gpus) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return f.handleOf(f.gpus[i])
}

func (f *Fleet) handleBy(match func(*GPU) bool) (nvml.Device, nvml.Return) {
	for _, g := range f.gpus {
		if match(g) {
			return f.handleOf(g)
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// handleByUUID is DeviceGetHandleByUUID: a GPU's UUID gives its handle, a
// MIG device's UUID ("MIG-…", or the legacy "MIG-GPU-<GPU UUID>/<GI>/<CI>")
// the MIG device's handle.
func (f *Fleet) handleByUUID(uuid string) (nvml.Device, nvml.Return) {
	if !strings.HasPrefix(uuid, "MIG-") {
		return f.handleBy(func(g *GPU) bool { return g.spec.UUID == uuid })
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	match := func(m *MIG) bool { return m.uuid == uuid }
	if gpu, gi, ci, ok := parseLegacyMIGUUID(uuid); ok {
		match = func(m *MIG) bool { return m.g.spec.UUID == gpu && m.gi == gi && m.ci == ci }
	}
	for _, g := range f.gpus {
		for _, m := range g.migs {
			if m == nil || !match(m) {
				continue
			}
			if g.lost {
				return m.dev, nvml.ERROR_GPU_IS_LOST
			}
			return m.dev, nvml.SUCCESS
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

// parseLegacyMIGUUID parses the MIG device UUID of drivers before R470,
// "MIG-GPU-<GPU UUID>/<GI>/<CI>".
func parseLegacyMIGUUID(s string) (gpu string, gi, ci int, ok bool) {
	rest, _ := strings.CutPrefix(s, "MIG-")
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || !validUUID(parts[0]) {
		return "", 0, 0, false
	}
	gi, err1 := strconv.Atoi(parts[1])
	ci, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || gi < 0 || ci < 0 {
		return "", 0, 0, false
	}
	return parts[0], gi, ci, true
}

// handleOf returns g's handle; for a lost GPU NVML answers GPU_IS_LOST.
// The handle comes with it so that a caller that keeps it sees
// GPU_IS_LOST from every method too.
func (f *Fleet) handleOf(g *GPU) (nvml.Device, nvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g.lost {
		return g.dev, nvml.ERROR_GPU_IS_LOST
	}
	return g.dev, nvml.SUCCESS
}
