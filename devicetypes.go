package nvgo

import (
	"fmt"
	"strconv"
	"strings"
)

// ComputeMode is a GPU's compute mode (nvmlComputeMode_t).
type ComputeMode int

// Compute modes.
const (
	ComputeDefault          ComputeMode = 0 // many contexts per device
	ComputeExclusiveThread  ComputeMode = 1 // deprecated by NVIDIA; reported as is
	ComputeProhibited       ComputeMode = 2 // no compute contexts
	ComputeExclusiveProcess ComputeMode = 3 // one process at a time
)

// String returns nvitop's names: "Default", "Exclusive Thread", "Prohibited", "Exclusive Process".
func (m ComputeMode) String() string {
	switch m {
	case ComputeDefault:
		return "Default"
	case ComputeExclusiveThread:
		return "Exclusive Thread"
	case ComputeProhibited:
		return "Prohibited"
	case ComputeExclusiveProcess:
		return "Exclusive Process"
	}
	return fmt.Sprintf("ComputeMode(%d)", int(m))
}

// MarshalText encodes the mode by name.
func (m ComputeMode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText decodes a name as String prints it.
func (m *ComputeMode) UnmarshalText(b []byte) error {
	for c := ComputeDefault; c <= ComputeExclusiveProcess; c++ {
		if strings.EqualFold(c.String(), string(b)) {
			*m = c
			return nil
		}
	}
	return fmt.Errorf("nvgo: unknown compute mode %q", b)
}

// PState is a performance state: 0 (P0, fastest) to 15 (P15, slowest).
type PState int

// String returns "P0".."P15", or "P?" for a value out of that range (the
// library reports NVML's "unknown" as N/A, never as a PState).
func (p PState) String() string {
	if p < 0 || p > 15 {
		return "P?"
	}
	return "P" + strconv.Itoa(int(p))
}

// MarshalText encodes the state as String prints it.
func (p PState) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText decodes "P0".."P15".
func (p *PState) UnmarshalText(b []byte) error {
	s := strings.TrimPrefix(strings.ToUpper(string(b)), "P")
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 15 {
		return fmt.Errorf("nvgo: bad performance state %q", b)
	}
	*p = PState(n)
	return nil
}

// ComputeCapability is a CUDA compute capability, e.g. 9.0 for Hopper.
type ComputeCapability struct {
	Major, Minor int
}

// String returns "9.0".
func (c ComputeCapability) String() string { return fmt.Sprintf("%d.%d", c.Major, c.Minor) }

// MarshalText encodes the capability as "9.0".
func (c ComputeCapability) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText decodes "9.0".
func (c *ComputeCapability) UnmarshalText(b []byte) error {
	maj, min, ok := strings.Cut(string(b), ".")
	x, err1 := strconv.Atoi(maj)
	y, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("nvgo: bad compute capability %q", b)
	}
	*c = ComputeCapability{x, y}
	return nil
}

// OnOff is an NVML enable state (persistence mode, display, MIG mode…).
type OnOff bool

// String returns "On" or "Off".
func (o OnOff) String() string {
	if o {
		return "On"
	}
	return "Off"
}

// ProcessType says how a process uses a GPU: compute (C), graphics (G) or both (C+G).
type ProcessType uint8

// Process types; a C+G process is ProcessCompute|ProcessGraphics.
const (
	ProcessCompute ProcessType = 1 << iota
	ProcessGraphics
)

// String returns "C", "G", "C+G", or "N/A" for none.
func (t ProcessType) String() string {
	switch t {
	case ProcessCompute:
		return "C"
	case ProcessGraphics:
		return "G"
	case ProcessCompute | ProcessGraphics:
		return "C+G"
	}
	return "N/A"
}

// MarshalText encodes the type as String prints it.
func (t ProcessType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes "C", "G" or "C+G".
func (t *ProcessType) UnmarshalText(b []byte) error {
	switch string(b) {
	case "C":
		*t = ProcessCompute
	case "G":
		*t = ProcessGraphics
	case "C+G":
		*t = ProcessCompute | ProcessGraphics
	default:
		return fmt.Errorf("nvgo: bad process type %q (want C, G or C+G)", b)
	}
	return nil
}
