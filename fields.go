package nvgo

import (
	"fmt"
	"math/bits"
	"strings"
)

// Fields selects groups of device metrics for a snapshot or a read. A caller
// pays (in NVML calls) only for the groups it asks for; static values (name,
// UUID, bus ID, serial, minor number, compute capability, maximum clocks,
// NVLink link count) are read once per Device whatever the mask.
type Fields uint32

// Field groups. Power, power limit, ECC and NVLink counters are read together
// in one batched nvmlDeviceGetFieldValues call.
const (
	FieldMemory           Fields = 1 << iota // memory used/free/reserved/percent
	FieldBAR1                                // BAR1 used/free
	FieldUtilization                         // GPU and memory utilization
	FieldCodec                               // encoder and decoder utilization
	FieldClocks                              // current graphics, SM, memory, video clocks
	FieldFan                                 // fan speed
	FieldTemperature                         // GPU temperature
	FieldPower                               // power usage and limit
	FieldPCIe                                // PCIe TX/RX throughput
	FieldNVLink                              // NVLink TX/RX throughput
	FieldECC                                 // volatile uncorrected ECC errors
	FieldPerformanceState                    // P-state
	FieldDisplay                             // display active and display mode
	FieldPersistenceMode                     // persistence mode
	FieldComputeMode                         // compute mode
	FieldMIGMode                             // MIG mode, current and pending
	FieldProcesses                           // the processes on the GPU, with host info
	FieldMIGDevices                          // the MIG devices of a GPU with MIG on, each read with the same groups
	FieldVgpuInstances                       // virtualization mode, and the vGPU instances of a vGPU host
	fieldEnd
)

// FieldsAll selects every group.
const FieldsAll = fieldEnd - 1

// FieldsStatus selects what an nvidia-smi-like status table shows: memory,
// utilization, fan, temperature, power, P-state, ECC, display, persistence,
// compute and MIG modes, processes, MIG devices and vGPU instances.
const FieldsStatus = FieldMemory | FieldUtilization | FieldFan | FieldTemperature | FieldPower |
	FieldPerformanceState | FieldECC | FieldDisplay | FieldPersistenceMode | FieldComputeMode |
	FieldMIGMode | FieldProcesses | FieldMIGDevices | FieldVgpuInstances

var fieldNames = [...]string{
	"memory", "bar1", "utilization", "codec", "clocks", "fan", "temperature", "power", "pcie",
	"nvlink", "ecc", "performance_state", "display", "persistence_mode", "compute_mode", "mig_mode",
	"processes", "mig_devices", "vgpu_instances",
}

// String lists the groups, e.g. "memory|power".
func (f Fields) String() string {
	if f == 0 {
		return "none"
	}
	var names []string
	for b := f & FieldsAll; b != 0; b &= b - 1 {
		names = append(names, fieldNames[bits.TrailingZeros32(uint32(b))])
	}
	if f&^FieldsAll != 0 {
		names = append(names, fmt.Sprintf("0x%x", uint32(f&^FieldsAll)))
	}
	return strings.Join(names, "|")
}

// ParseFields parses a comma- or pipe-separated list of group names as
// String prints them, plus "all" and "status".
func ParseFields(s string) (Fields, error) {
	var f Fields
	for _, name := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ' ' }) {
		switch name = strings.ToLower(name); name {
		case "all":
			f |= FieldsAll
			continue
		case "status":
			f |= FieldsStatus
			continue
		}
		found := false
		for i, n := range fieldNames {
			if n == name {
				f |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return 0, fmt.Errorf("nvgo: unknown field group %q (want one of %s, all, status)", name, strings.Join(fieldNames[:], ", "))
		}
	}
	return f, nil
}
