//go:build cgo

package fakegpu

import (
	"encoding/binary"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// allLinks is the NVLink ScopeId that asks for the sum over all links.
const allLinks = 0xFFFFFFFF

// field is one supported field ID: the Device method whose support and
// injected errors it shares, and how to read it with the fleet locked.
type field struct {
	owner string
	read  func(g *GPU, scope uint32) (nvml.ValueType, uint64, nvml.Return)
}

var fields = map[uint32]field{
	nvml.FI_DEV_POWER_AVERAGE:             {"GetPowerUsage", averagePower},
	nvml.FI_DEV_POWER_INSTANT:             {"GetPowerUsage", gpuScope(func(g *GPU) uint32 { return g.power })},
	nvml.FI_DEV_POWER_CURRENT_LIMIT:       {"GetPowerManagementLimit", gpuScope(func(g *GPU) uint32 { return g.limit })},
	nvml.FI_DEV_POWER_DEFAULT_LIMIT:       {"GetPowerManagementDefaultLimit", gpuScope(func(g *GPU) uint32 { return g.spec.PowerLimit })},
	nvml.FI_DEV_TOTAL_ENERGY_CONSUMPTION:  {"GetTotalEnergyConsumption", counter(func(g *GPU) uint64 { return g.energy })},
	nvml.FI_DEV_MEMORY_TEMP:               {"GetTemperature", memoryTemperature},
	nvml.FI_DEV_ECC_DBE_VOL_TOTAL:         {"GetTotalEccErrors", counter(func(g *GPU) uint64 { return g.ecc })},
	nvml.FI_DEV_PCIE_COUNT_TX_BYTES:       {"GetPcieThroughput", counter(func(g *GPU) uint64 { return g.pcieTxB })},
	nvml.FI_DEV_PCIE_COUNT_RX_BYTES:       {"GetPcieThroughput", counter(func(g *GPU) uint64 { return g.pcieRxB })},
	nvml.FI_DEV_NVLINK_LINK_COUNT:         {"GetNvLinkState", linkCount},
	nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX: {"GetNvLinkState", linkCounter(func(g *GPU) uint64 { return g.nvTx })},
	nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX: {"GetNvLinkState", linkCounter(func(g *GPU) uint64 { return g.nvRx })},
}

// gpuScope reads a 32-bit power value; only POWER_SCOPE_GPU is supported.
func gpuScope(get func(*GPU) uint32) func(*GPU, uint32) (nvml.ValueType, uint64, nvml.Return) {
	return func(g *GPU, scope uint32) (nvml.ValueType, uint64, nvml.Return) {
		if scope != nvml.POWER_SCOPE_GPU {
			return 0, 0, nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.VALUE_TYPE_UNSIGNED_INT, uint64(get(g)), nvml.SUCCESS
	}
}

// averagePower is FI_DEV_POWER_AVERAGE, which NVML supports on Ampere and
// later except GA100 (the A100).
func averagePower(g *GPU, scope uint32) (nvml.ValueType, uint64, nvml.Return) {
	if g.spec.Model == "a100" {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	return gpuScope(func(g *GPU) uint32 { return g.power })(g, scope)
}

// counter reads a 64-bit counter that ignores ScopeId.
func counter(get func(*GPU) uint64) func(*GPU, uint32) (nvml.ValueType, uint64, nvml.Return) {
	return func(g *GPU, _ uint32) (nvml.ValueType, uint64, nvml.Return) {
		return nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, get(g), nvml.SUCCESS
	}
}

func linkCount(g *GPU, _ uint32) (nvml.ValueType, uint64, nvml.Return) {
	if g.nvLinks == 0 {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.VALUE_TYPE_UNSIGNED_INT, uint64(g.nvLinks), nvml.SUCCESS
}

// linkCounter reads an NVLink counter in KiB: ScopeId is the link, or
// allLinks for the sum. The total is shared equally; link 0 takes the rest.
func linkCounter(total func(*GPU) uint64) func(*GPU, uint32) (nvml.ValueType, uint64, nvml.Return) {
	return func(g *GPU, scope uint32) (nvml.ValueType, uint64, nvml.Return) {
		n := uint64(g.nvLinks)
		switch {
		case n == 0:
			return 0, 0, nvml.ERROR_NOT_SUPPORTED
		case scope == allLinks:
			return nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, total(g), nvml.SUCCESS
		case uint64(scope) >= n:
			return 0, 0, nvml.ERROR_INVALID_ARGUMENT
		}
		t := total(g)
		v := t / n
		if scope == 0 {
			v += t % n
		}
		return nvml.VALUE_TYPE_UNSIGNED_LONG_LONG, v, nvml.SUCCESS
	}
}

// getFieldValues fills each value's NvmlReturn, ValueType, Value and
// Timestamp. Like NVML, it succeeds as a whole even when single fields
// fail; unknown field IDs get ERROR_NOT_SUPPORTED. An empty slice is
// ERROR_INVALID_ARGUMENT (go-nvml would panic on it with the real library).
func (d *device) getFieldValues(values []nvml.FieldValue) nvml.Return {
	if len(values) == 0 {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	g, unlock := d.lock()
	defer unlock()
	now := int64(g.f.nowMicrosLocked())
	for i := range values {
		v := &values[i]
		v.Timestamp, v.LatencyUsec, v.ValueType, v.Value = now, 0, 0, [8]byte{}
		vt, x, ret := g.readFieldLocked(v.FieldId, v.ScopeId)
		v.NvmlReturn = uint32(ret)
		if ret != nvml.SUCCESS {
			continue
		}
		v.ValueType = uint32(vt)
		switch vt {
		case nvml.VALUE_TYPE_UNSIGNED_INT:
			binary.LittleEndian.PutUint32(v.Value[:], uint32(x))
		default:
			binary.LittleEndian.PutUint64(v.Value[:], x)
		}
	}
	return nvml.SUCCESS
}

// readFieldLocked reads one field, honouring the support and injected
// errors of its owner method.
func (g *GPU) readFieldLocked(id, scope uint32) (nvml.ValueType, uint64, nvml.Return) {
	fd, ok := fields[id]
	if !ok {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	if r, failed := g.fails[fd.owner]; failed {
		return 0, 0, r
	}
	if g.unsupported[fd.owner] {
		return 0, 0, nvml.ERROR_NOT_SUPPORTED
	}
	return fd.read(g, scope)
}

// memoryTemperature is FI_DEV_MEMORY_TEMP: the HBM stacks beside the die
// run a few degrees above the core.
func memoryTemperature(g *GPU, _ uint32) (nvml.ValueType, uint64, nvml.Return) {
	return nvml.VALUE_TYPE_UNSIGNED_INT, uint64(g.temp + 3), nvml.SUCCESS
}
