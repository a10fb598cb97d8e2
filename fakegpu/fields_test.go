//go:build cgo

package fakegpu_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// u64 decodes a field value by its ValueType, as a caller must.
func u64(v nvml.FieldValue) uint64 {
	switch nvml.ValueType(v.ValueType) {
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return uint64(binary.LittleEndian.Uint32(v.Value[:4]))
	case nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		return binary.LittleEndian.Uint64(v.Value[:])
	}
	panic("unexpected value type")
}

func TestFieldValues(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"})
	initFleet(t, f)
	g := f.GPU(0)
	g.SetPower(312_000, 650_000)
	g.SetECCErrors(2)
	g.SetNVLink(18, 18_000_005, 36_000)
	f.Advance(time.Second)

	const u32, u64t = nvml.VALUE_TYPE_UNSIGNED_INT, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG
	tests := []struct {
		name   string
		gpu    int
		id     uint32
		scope  uint32
		ret    nvml.Return
		vtype  nvml.ValueType
		value  uint64
		before func(*fakegpu.GPU)
	}{
		{name: "average power", id: nvml.FI_DEV_POWER_AVERAGE, vtype: u32, value: 312_000},
		{name: "instant power", id: nvml.FI_DEV_POWER_INSTANT, vtype: u32, value: 312_000},
		{name: "module power scope", id: nvml.FI_DEV_POWER_INSTANT, scope: nvml.POWER_SCOPE_MODULE, ret: nvml.ERROR_NOT_SUPPORTED},
		{name: "average power on an A100", gpu: 1, id: nvml.FI_DEV_POWER_AVERAGE, ret: nvml.ERROR_NOT_SUPPORTED},
		{name: "current power limit", id: nvml.FI_DEV_POWER_CURRENT_LIMIT, vtype: u32, value: 650_000},
		{name: "default power limit", id: nvml.FI_DEV_POWER_DEFAULT_LIMIT, vtype: u32, value: 700_000},
		{name: "volatile DBE total", id: nvml.FI_DEV_ECC_DBE_VOL_TOTAL, vtype: u64t, value: 2},
		{name: "NVLink link count", id: nvml.FI_DEV_NVLINK_LINK_COUNT, vtype: u32, value: 18},
		{name: "NVLink TX, all links", id: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, scope: 0xFFFFFFFF, vtype: u64t, value: 18_000_005},
		{name: "NVLink TX, link 0 takes the remainder", id: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, scope: 0, vtype: u64t, value: 1_000_005},
		{name: "NVLink TX, link 17", id: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, scope: 17, vtype: u64t, value: 1_000_000},
		{name: "NVLink RX, link 1", id: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, scope: 1, vtype: u64t, value: 2_000},
		{name: "NVLink link past the end", id: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_RX, scope: 18, ret: nvml.ERROR_INVALID_ARGUMENT},
		{name: "energy", id: nvml.FI_DEV_TOTAL_ENERGY_CONSUMPTION, vtype: u64t, value: 312_000},
		{name: "PCIe RX bytes", id: nvml.FI_DEV_PCIE_COUNT_RX_BYTES, vtype: u64t, value: 0},
		{name: "unknown field", id: nvml.FI_DEV_IS_RESETLESS_MIG_SUPPORTED, ret: nvml.ERROR_NOT_SUPPORTED},
		{name: "field of an unsupported metric", id: nvml.FI_DEV_POWER_INSTANT, ret: nvml.ERROR_NOT_SUPPORTED,
			before: func(g *fakegpu.GPU) { g.Unsupported("power") }},
		{name: "field of a failing metric", id: nvml.FI_DEV_ECC_DBE_VOL_TOTAL, ret: nvml.ERROR_NO_PERMISSION,
			before: func(g *fakegpu.GPU) { g.Fail("ecc", nvml.ERROR_NO_PERMISSION) }},
		{name: "NVLink without links", id: nvml.FI_DEV_NVLINK_LINK_COUNT, ret: nvml.ERROR_NOT_SUPPORTED,
			before: func(g *fakegpu.GPU) { g.SetNVLink(0, 0, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				h := fakegpu.New(fakegpu.GPUSpec{})
				initFleet(t, h)
				tt.before(h.GPU(0))
				f, tt.gpu = h, 0
			}
			values := []nvml.FieldValue{{FieldId: tt.id, ScopeId: tt.scope, Value: [8]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}}
			if ret := handle(t, f, tt.gpu).GetFieldValues(values); ret != nvml.SUCCESS {
				t.Fatalf("GetFieldValues = %v, want SUCCESS as a whole", ret)
			}
			v := values[0]
			if nvml.Return(v.NvmlReturn) != tt.ret {
				t.Fatalf("NvmlReturn = %v, want %v", nvml.Return(v.NvmlReturn), tt.ret)
			}
			if v.Timestamp != f.Now().UnixMicro() {
				t.Errorf("Timestamp = %d, want %d", v.Timestamp, f.Now().UnixMicro())
			}
			if tt.ret != nvml.SUCCESS {
				return
			}
			if nvml.ValueType(v.ValueType) != tt.vtype {
				t.Fatalf("ValueType = %d, want %d", v.ValueType, tt.vtype)
			}
			if tt.vtype == u32 && binary.LittleEndian.Uint32(v.Value[4:]) != 0 {
				t.Errorf("upper bytes of a 32-bit value not cleared: %x", v.Value)
			}
			if got := u64(v); got != tt.value {
				t.Errorf("value = %d, want %d", got, tt.value)
			}
		})
	}
}

func TestFieldValuesBatchAndEmpty(t *testing.T) {
	f := fakegpu.New(fakegpu.GPUSpec{})
	initFleet(t, f)
	d := handle(t, f, 0)
	if ret := d.GetFieldValues(nil); ret != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("empty slice: %v, want INVALID_ARGUMENT", ret)
	}
	batch := []nvml.FieldValue{
		{FieldId: nvml.FI_DEV_POWER_INSTANT},
		{FieldId: 9999},
		{FieldId: nvml.FI_DEV_NVLINK_LINK_COUNT},
	}
	if ret := d.GetFieldValues(batch); ret != nvml.SUCCESS {
		t.Fatalf("batch: %v", ret)
	}
	want := []nvml.Return{nvml.SUCCESS, nvml.ERROR_NOT_SUPPORTED, nvml.SUCCESS}
	for i, v := range batch {
		if nvml.Return(v.NvmlReturn) != want[i] {
			t.Errorf("field %d: %v, want %v", i, nvml.Return(v.NvmlReturn), want[i])
		}
	}
}
