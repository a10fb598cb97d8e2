package nvgo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nvgo/nvgo/internal/nverr"
)

// Errors from NVML. Every error nvgo returns for an NVML failure wraps an
// *NVMLError, which matches one of these with errors.Is.
var (
	// ErrLibraryNotFound: libnvidia-ml.so.1 could not be loaded (no NVIDIA driver installed).
	ErrLibraryNotFound = nverr.ErrLibraryNotFound
	// ErrDriverNotLoaded: the library is there but the kernel driver is not loaded.
	ErrDriverNotLoaded = nverr.ErrDriverNotLoaded
	// ErrDriverMismatch: the driver was upgraded without a reboot (NVML_ERROR_LIB_RM_VERSION_MISMATCH).
	ErrDriverMismatch = nverr.ErrDriverMismatch
	// ErrNotSupported: the GPU or driver does not support the request. A
	// function missing from an older driver also matches it.
	ErrNotSupported = nverr.ErrNotSupported
	// ErrNoPermission: the caller lacks the needed privileges.
	ErrNoPermission = nverr.ErrNoPermission
	// ErrNotFound: no such device (bad index, UUID or bus ID) or no such object.
	ErrNotFound = nverr.ErrNotFound
	// ErrGPULost: the GPU fell off the bus or needs a reset.
	ErrGPULost = nverr.ErrGPULost
	// ErrFunctionMissing: the installed driver lacks an NVML function; nvgo did
	// not call it (a call would kill the process). It also matches ErrNotSupported.
	ErrFunctionMissing = nverr.ErrFunctionMissing
	// ErrBuiltWithoutCGO: this binary was built with CGO_ENABLED=0 and cannot use NVML.
	ErrBuiltWithoutCGO = nverr.ErrBuiltWithoutCGO
	// ErrClosed: the Library was closed.
	ErrClosed = nverr.ErrClosed
	// ErrInvalidArgument: an argument is out of its range (a negative count, say).
	ErrInvalidArgument = nverr.ErrInvalidArgument
)

// Errors about processes.
var (
	// ErrProcessGone: the process exited, or its PID now belongs to another process.
	ErrProcessGone = errors.New("process gone")
	// ErrZombie: the process exited and awaits its parent; it has no command line or memory.
	ErrZombie = errors.New("zombie process")
	// ErrOtherPIDNamespace: NVML reports host PIDs, which are not visible from this
	// PID namespace (a container without --pid=host).
	ErrOtherPIDNamespace = errors.New("process not visible from this PID namespace (NVML reports host PIDs; run with --pid=host)")
	// ErrNotReported: the driver has no value to report (e.g. per-process memory under WDDM).
	ErrNotReported = errors.New("value not reported by the driver")
	// ErrAmbiguous: a UUID prefix matches more than one device.
	ErrAmbiguous = errors.New("ambiguous device identifier")
)

// NVMLError is an NVML failure: the operation and its raw return code
// (nvmlReturn_t). Use errors.As to read the code.
type NVMLError = nverr.Error

// ReturnCode is a raw NVML return code (nvmlReturn_t), with the values
// nvml.h gives them. It is an error, and an errors.Is target: an error
// from an NVML call matches its code, e.g.
// errors.Is(err, ReturnInsufficientPower). Read the code of an error with
// errors.As and *NVMLError.
type ReturnCode = nverr.Code

// NVML return codes (NVML_SUCCESS, NVML_ERROR_…).
const (
	ReturnSuccess                 = nverr.Success
	ReturnUninitialized           = nverr.Uninitialized
	ReturnInvalidArgument         = nverr.InvalidArgument
	ReturnNotSupported            = nverr.NotSupported
	ReturnNoPermission            = nverr.NoPermission
	ReturnAlreadyInitialized      = nverr.AlreadyInitialized
	ReturnNotFound                = nverr.NotFound
	ReturnInsufficientSize        = nverr.InsufficientSize
	ReturnInsufficientPower       = nverr.InsufficientPower
	ReturnDriverNotLoaded         = nverr.DriverNotLoaded
	ReturnTimeout                 = nverr.Timeout
	ReturnIRQIssue                = nverr.IRQIssue
	ReturnLibraryNotFound         = nverr.LibraryNotFound
	ReturnFunctionNotFound        = nverr.FunctionNotFound
	ReturnCorruptedInfoROM        = nverr.CorruptedInforom
	ReturnGPUIsLost               = nverr.GPUIsLost
	ReturnResetRequired           = nverr.ResetRequired
	ReturnOperatingSystem         = nverr.OperatingSystem
	ReturnLibRMVersionMismatch    = nverr.LibRMVersionMismatch
	ReturnInUse                   = nverr.InUse
	ReturnMemory                  = nverr.Memory
	ReturnNoData                  = nverr.NoData
	ReturnVgpuECCNotSupported     = nverr.VGPUECCNotSupported
	ReturnInsufficientResources   = nverr.InsufficientResources
	ReturnFreqNotSupported        = nverr.FreqNotSupported
	ReturnArgumentVersionMismatch = nverr.ArgumentVersionMismatch
	ReturnDeprecated              = nverr.Deprecated
	ReturnNotReady                = nverr.NotReady
	ReturnGPUNotFound             = nverr.GPUNotFound
	ReturnInvalidState            = nverr.InvalidState
	ReturnUnknown                 = nverr.Unknown
)

// DeviceErrors is the error returned beside a partial list of devices
// (Library.LeafDevices, Library.MIGDevices): the GPUs that could not be
// read, each with its error, while the list holds every device of the
// others. errors.Is matches what any of them matches, so
// errors.Is(err, ErrGPULost) says that a GPU fell off the bus.
type DeviceErrors []DeviceError

// DeviceError is one GPU (or MIG device) that was left out, and why.
type DeviceError struct {
	Index int    // the GPU's NVML index (the parent's, for a MIG device)
	UUID  string // the device's UUID, where it is known and matters
	Err   error  // why
}

func (e DeviceErrors) Error() string {
	var b strings.Builder
	for i, d := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		label := fmt.Sprintf("GPU %d", d.Index)
		// The errors of a GPU's calls name it already: say it once.
		why := strings.TrimPrefix(d.Err.Error(), label+": ")
		if d.UUID != "" {
			label += " (" + d.UUID + ")"
		}
		fmt.Fprintf(&b, "%s left out: %s", label, why)
	}
	return b.String()
}

// Unwrap returns the errors of the GPUs, for errors.Is and errors.As.
func (e DeviceErrors) Unwrap() []error {
	out := make([]error, len(e))
	for i, d := range e {
		out[i] = d.Err
	}
	return out
}

// orNil returns e as an error, nil when it is empty.
func (e DeviceErrors) orNil() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

// ErrVgpuGone is matched by the errors of reads from a vGPU instance that
// was destroyed (its VM shut down, say) after it was listed. Values read
// from it are N/A with reason InstanceGone.
var ErrVgpuGone = errors.New("vGPU instance destroyed")

// errNotOnMIG explains a metric that NVML keeps only per physical GPU.
var errNotOnMIG = fmt.Errorf("not reported per MIG device (read the parent GPU): %w", ErrNotSupported)

// errNotMIG explains the MIG identity of a physical GPU's snapshot.
var errNotMIG = fmt.Errorf("not a MIG device: %w", ErrNotSupported)
