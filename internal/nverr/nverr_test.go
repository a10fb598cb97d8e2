package nverr

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodesMatchTheirSentinels(t *testing.T) {
	tests := []struct {
		code Code
		want error
	}{
		{LibraryNotFound, ErrLibraryNotFound},
		{DriverNotLoaded, ErrDriverNotLoaded},
		{LibRMVersionMismatch, ErrDriverMismatch},
		{NotSupported, ErrNotSupported},
		{NoPermission, ErrNoPermission},
		{NotFound, ErrNotFound},
		{GPUIsLost, ErrGPULost},
		{GPUNotFound, ErrGPULost},
		{FunctionNotFound, ErrFunctionMissing},
		{FunctionNotFound, ErrNotSupported}, // a missing function is also "not supported"
		{Uninitialized, ErrUninitialized},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			err := New("nvmlDeviceGetX", tt.code)
			if !errors.Is(err, tt.want) {
				t.Fatalf("%v does not match %v", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code || CodeOf(err) != tt.code {
				t.Fatalf("raw code lost: %#v", err)
			}
		})
	}
	if New("x", Success) != nil {
		t.Error("Success is an error")
	}
	if errors.Is(New("x", NotSupported), ErrGPULost) {
		t.Error("not supported matches GPU lost")
	}
	if got := Code(12345).String(); got != "NVML error 12345" {
		t.Errorf("unknown code prints %q", got)
	}
}

// A Code is an errors.Is target: an *Error matches its own code only.
func TestErrorMatchesItsCode(t *testing.T) {
	err := fmt.Errorf("reading power: %w", New("nvmlDeviceGetPowerUsage", InsufficientPower))
	tests := []struct {
		target error
		want   bool
	}{
		{InsufficientPower, true},
		{NotSupported, false},
		{GPUIsLost, false},
	}
	for _, tt := range tests {
		if got := errors.Is(err, tt.target); got != tt.want {
			t.Errorf("errors.Is(%v, %v) = %v; want %v", err, tt.target, got, tt.want)
		}
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != InsufficientPower {
		t.Errorf("errors.As gave %v", e)
	}
	if got := InsufficientPower.Error(); got != "NVML: insufficient external power" {
		t.Errorf("Code.Error() = %q", got)
	}
}
