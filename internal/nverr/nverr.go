// Package nverr turns NVML return codes into typed Go errors.
//
// It is pure Go (no cgo) so that the public nvgo package, which re-exports
// these sentinels, compiles with CGO_ENABLED=0. The numeric values of Code are
// those of nvmlReturn_t in nvml.h; they are part of NVML's ABI and never change.
package nverr

import (
	"errors"
	"fmt"
)

// Code is a raw NVML return code (nvmlReturn_t).
type Code int32

// NVML return codes, with the values nvml.h gives them.
const (
	Success                 Code = 0
	Uninitialized           Code = 1
	InvalidArgument         Code = 2
	NotSupported            Code = 3
	NoPermission            Code = 4
	AlreadyInitialized      Code = 5
	NotFound                Code = 6
	InsufficientSize        Code = 7
	InsufficientPower       Code = 8
	DriverNotLoaded         Code = 9
	Timeout                 Code = 10
	IRQIssue                Code = 11
	LibraryNotFound         Code = 12
	FunctionNotFound        Code = 13
	CorruptedInforom        Code = 14
	GPUIsLost               Code = 15
	ResetRequired           Code = 16
	OperatingSystem         Code = 17
	LibRMVersionMismatch    Code = 18
	InUse                   Code = 19
	Memory                  Code = 20
	NoData                  Code = 21
	VGPUECCNotSupported     Code = 22
	InsufficientResources   Code = 23
	FreqNotSupported        Code = 24
	ArgumentVersionMismatch Code = 25
	Deprecated              Code = 26
	NotReady                Code = 27
	GPUNotFound             Code = 28
	InvalidState            Code = 29
	Unknown                 Code = 999
)

var codeText = map[Code]string{
	Success:                 "success",
	Uninitialized:           "NVML was not initialized",
	InvalidArgument:         "invalid argument",
	NotSupported:            "not supported",
	NoPermission:            "insufficient permissions",
	AlreadyInitialized:      "already initialized",
	NotFound:                "not found",
	InsufficientSize:        "insufficient size",
	InsufficientPower:       "insufficient external power",
	DriverNotLoaded:         "NVIDIA driver is not loaded",
	Timeout:                 "timeout",
	IRQIssue:                "interrupt request issue",
	LibraryNotFound:         "NVML shared library not found",
	FunctionNotFound:        "function not found in the installed driver",
	CorruptedInforom:        "corrupted infoROM",
	GPUIsLost:               "GPU is lost",
	ResetRequired:           "GPU requires a reset",
	OperatingSystem:         "blocked by the operating system",
	LibRMVersionMismatch:    "driver/library version mismatch",
	InUse:                   "in use",
	Memory:                  "insufficient memory",
	NoData:                  "no data",
	VGPUECCNotSupported:     "vGPU ECC not supported",
	InsufficientResources:   "insufficient resources",
	FreqNotSupported:        "frequency not supported",
	ArgumentVersionMismatch: "argument version mismatch",
	Deprecated:              "deprecated",
	NotReady:                "not ready",
	GPUNotFound:             "GPU not found",
	InvalidState:            "invalid state",
	Unknown:                 "unknown error",
}

// String returns NVML's meaning of the code in words.
func (c Code) String() string {
	if s, ok := codeText[c]; ok {
		return s
	}
	return fmt.Sprintf("NVML error %d", int32(c))
}

// Sentinel errors. An *Error matches the sentinel of its code with errors.Is.
var (
	ErrLibraryNotFound  = errors.New("NVML library not found (is the NVIDIA driver installed? libnvidia-ml.so.1)")
	ErrDriverNotLoaded  = errors.New("NVIDIA driver is not loaded")
	ErrDriverMismatch   = errors.New("NVIDIA driver and NVML library versions do not match (reboot or reload the driver)")
	ErrNotSupported     = errors.New("not supported")
	ErrNoPermission     = errors.New("insufficient permissions")
	ErrNotFound         = errors.New("not found")
	ErrGPULost          = errors.New("GPU is lost (fell off the bus)")
	ErrFunctionMissing  = errors.New("function missing from the installed NVIDIA driver")
	ErrUninitialized    = errors.New("NVML is not initialized")
	ErrInvalidArgument  = errors.New("invalid argument")
	ErrBuiltWithoutCGO  = errors.New("nvgo was built without cgo (CGO_ENABLED=0): NVML cannot be used; rebuild with CGO_ENABLED=1 and a C compiler")
	ErrClosed           = errors.New("library is closed")
	ErrNoData           = errors.New("no data")
	ErrInsufficientSize = errors.New("insufficient size")
)

var codeSentinel = map[Code]error{
	LibraryNotFound:      ErrLibraryNotFound,
	DriverNotLoaded:      ErrDriverNotLoaded,
	LibRMVersionMismatch: ErrDriverMismatch,
	NotSupported:         ErrNotSupported,
	NoPermission:         ErrNoPermission,
	NotFound:             ErrNotFound,
	GPUIsLost:            ErrGPULost,
	GPUNotFound:          ErrGPULost,
	FunctionNotFound:     ErrFunctionMissing,
	Uninitialized:        ErrUninitialized,
	InvalidArgument:      ErrInvalidArgument,
	NoData:               ErrNoData,
	InsufficientSize:     ErrInsufficientSize,
}

// Error is an NVML failure: the operation that failed and the raw return code.
// Use errors.Is with the sentinels above, or errors.As to read Code.
type Error struct {
	Op   string // the NVML operation, e.g. "nvmlDeviceGetPowerUsage"
	Code Code   // the raw nvmlReturn_t
}

// Error implements error.
func (e *Error) Error() string {
	if e.Op == "" {
		return "nvml: " + e.Code.String()
	}
	return e.Op + ": " + e.Code.String()
}

// Is reports whether target is the sentinel for e's code, or the code
// itself. A missing function also counts as not supported: callers that
// only care whether a value can be had test ErrNotSupported.
func (e *Error) Is(target error) bool {
	if c, ok := target.(Code); ok {
		return c == e.Code
	}
	if s, ok := codeSentinel[e.Code]; ok && s == target {
		return true
	}
	return e.Code == FunctionNotFound && target == ErrNotSupported
}

// Error makes a Code an error, so that it is an errors.Is target: an *Error
// matches its own code.
func (c Code) Error() string { return "NVML: " + c.String() }

// New returns the error for code c in operation op, or nil for Success.
func New(op string, c Code) error {
	if c == Success {
		return nil
	}
	return &Error{Op: op, Code: c}
}

// Missing returns the error for a symbol the installed driver lacks.
func Missing(symbol string) error {
	return &Error{Op: symbol, Code: FunctionNotFound}
}

// CodeOf returns the NVML code carried by err, Success for nil, or Unknown.
func CodeOf(err error) Code {
	if err == nil {
		return Success
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Unknown
}
