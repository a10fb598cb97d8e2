//go:build cgo

package nvgo_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

func migIndices(migs []*nvgo.MigDevice) []int {
	out := make([]int, len(migs))
	for i, m := range migs {
		out[i] = m.MIGIndex()
	}
	return out
}

// The preset's GPU 0 has MIG devices in slots 0, 1 and 3: enumeration must
// not stop at the empty slot 2.
func TestMIGDevicesSkipGaps(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	gpu0, err := lib.DeviceByIndex(0)
	must(t, err)
	migs, err := gpu0.MIGDevices()
	must(t, err)
	if got := migIndices(migs); !slices.Equal(got, []int{0, 1, 3}) {
		t.Fatalf("MIG indices %v, want [0 1 3]", got)
	}
	for _, m := range migs {
		f := fleet.GPU(0).MIGDevice(m.MIGIndex())
		if m.UUID().Or("") != f.UUID() || m.GPUInstanceID().Or(-1) != f.GI() || m.ComputeInstanceID().Or(-1) != f.CI() {
			t.Errorf("%v: UUID %v GI %v CI %v, want %s %d %d", m, m.UUID(), m.GPUInstanceID(), m.ComputeInstanceID(), f.UUID(), f.GI(), f.CI())
		}
		if m.Profile().Or("") != f.Profile() {
			t.Errorf("%v: profile %v, want %s", m, m.Profile(), f.Profile())
		}
		if m.MemoryTotal().Or(0) != nvgo.Bytes(f.MemoryTotal()) {
			t.Errorf("%v: memory %v, want %d", m, m.MemoryTotal(), f.MemoryTotal())
		}
		if m.Parent() != gpu0 || m.Index() != 0 || m.BusID() != gpu0.BusID() {
			t.Errorf("%v: parent %v index %d bus %v", m, m.Parent(), m.Index(), m.BusID())
		}
	}
	again, err := gpu0.MIGDevices()
	must(t, err)
	if again[2] != migs[2] {
		t.Errorf("a second enumeration built new objects for unchanged MIG devices")
	}
	// GPU 1 has MIG on and no instance; GPU 2 has MIG off.
	for _, i := range []int{1, 2} {
		d, _ := lib.DeviceByIndex(i)
		if migs, err := d.MIGDevices(); err != nil || len(migs) != 0 {
			t.Errorf("GPU %d: MIGDevices = %v, %v; want none", i, migs, err)
		}
	}
	leaves, err := lib.LeafDevices()
	must(t, err)
	if len(leaves) != 3+6 {
		t.Errorf("%d leaf devices, want 3 MIG devices and 6 whole GPUs", len(leaves))
	}
}

// What NVML keeps only per GPU is N/A on a MIG device, never 0, and costs
// no NVML call.
func TestMIGMetricsNotKeptPerInstanceAreNA(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	m, err := lib.MIGDeviceByUUID(fleet.GPU(0).MIGDevice(0).UUID())
	must(t, err)
	m.Snapshot(0) // read the static values once
	fleet.ResetCalls()
	for name, v := range map[string]interface {
		IsNA() bool
		Reason() nvgo.Reason
	}{
		"GPUUtilization": m.GPUUtilization(), "Temperature": m.Temperature(), "PowerUsage": m.PowerUsage(),
		"SMClock": m.SMClock(), "FanSpeed": m.FanSpeed(), "PerformanceState": m.PerformanceState(),
		"MaxSMClock": m.MaxSMClock(), "NVLinkCount": m.NVLinkCount(),
	} {
		if !v.IsNA() || v.Reason() != nvgo.NotSupported {
			t.Errorf("%s = %v, want N/A (not supported)", name, v)
		}
	}
	if n := fleet.TotalCalls(); n != 0 {
		t.Errorf("%d NVML calls for metrics a MIG device does not have: %v", n, fleet.Calls())
	}
	if _, ok := m.MemoryUsed().Get(); !ok {
		t.Errorf("MemoryUsed = %v, want a value", m.MemoryUsed())
	}
}

// A MIG device lists its own processes; their SM utilization is N/A (NVML
// keeps no per-process samples on MIG), never 0%.
func TestMIGProcesses(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	gpu0, _ := lib.DeviceByIndex(0)
	migs, err := gpu0.MIGDevices()
	must(t, err)
	procs, err := migs[0].Processes(context.Background())
	must(t, err)
	want := fleet.GPU(0).MIGDevice(0).Processes()
	if len(procs) != len(want) || len(procs) == 0 {
		t.Fatalf("%d processes on %v, want %d", len(procs), migs[0], len(want))
	}
	p := procs[0]
	if p.GPUInstanceID().Or(-1) != migs[0].GPUInstanceID().Or(-2) || p.ComputeInstanceID().Or(-1) != 0 {
		t.Errorf("process GI/CI %v/%v, want %v/0", p.GPUInstanceID(), p.ComputeInstanceID(), migs[0].GPUInstanceID())
	}
	if v := p.GPUSMUtilization(); !v.IsNA() || v.Reason() != nvgo.NotSupported {
		t.Errorf("SM utilization on MIG = %v, want N/A (not supported)", v)
	}
	if !strings.Contains(p.String(), "MIG 0/0") {
		t.Errorf("String() = %q, want it to name MIG 0/0", p.String())
	}
	if others, _ := migs[1].Processes(context.Background()); len(others) != 0 {
		t.Errorf("MIG device 1 lists %d processes, want none", len(others))
	}
}

func TestMIGSnapshot(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	snap, err := lib.Snapshot(context.Background())
	must(t, err)
	fleet.ResetCalls()
	_, err = lib.Snapshot(context.Background())
	must(t, err)
	if n := fleet.CallCount("Device.GetMigMode"); n != fleet.Count() {
		t.Errorf("a snapshot read the MIG mode %d times, want once per GPU (%d)", n, fleet.Count())
	}
	g := snap.Devices[0]
	if len(g.MIGDevices) != 3 {
		t.Fatalf("GPU 0 snapshot has %d MIG devices, want 3", len(g.MIGDevices))
	}
	if g.Processes != nil {
		t.Errorf("GPU 0 lists %d processes itself; with MIG they belong to its MIG devices", len(g.Processes))
	}
	m := g.MIGDevices[2]
	if m.MIGIndex.Or(-1) != 3 || m.ParentUUID != g.UUID || m.MIGProfile.Or("") != "1g.10gb" || m.UUID.Or("") != fleet.GPU(0).MIGDevice(3).UUID() {
		t.Errorf("MIG snapshot identity: index %v parent %q profile %q uuid %q", m.MIGIndex, m.ParentUUID, m.MIGProfile, m.UUID)
	}
	if !m.Temperature.IsNA() || m.Temperature.Reason() != nvgo.NotSupported {
		t.Errorf("MIG temperature %v, want N/A", m.Temperature)
	}
	if len(g.MIGDevices[0].Processes) != 1 {
		t.Errorf("MIG device 0 snapshot lists %d processes, want 1", len(g.MIGDevices[0].Processes))
	}
	b, err := json.Marshal(snap)
	must(t, err)
	if !strings.Contains(string(b), `"mig_index":3`) || !strings.Contains(string(b), `"mig_profile":"1g.10gb"`) {
		t.Errorf("JSON lacks the MIG identity: %.300s", b)
	}
	if snap.Devices[2].MIGDevices != nil || !snap.Devices[2].MIGIndex.IsNA() || !snap.Devices[2].MIGProfile.IsNA() {
		t.Errorf("GPU 2 (MIG off) snapshot carries MIG data")
	}
}

func TestMIGLookupByUUID(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	f := fleet.GPU(0).MIGDevice(1)
	tests := []struct {
		name, id string
		err      error
	}{
		{"full UUID", f.UUID(), nil},
		{"prefix", f.UUID()[:10], nil},
		{"legacy form", "MIG-" + fleet.GPU(0).UUID() + "/3/0", nil},
		{"legacy form with a GPU prefix", "MIG-" + fleet.GPU(0).UUID()[:12] + "/3/0", nil},
		{"legacy form, no such instance", "MIG-" + fleet.GPU(0).UUID() + "/4/0", nvgo.ErrNotFound},
		{"malformed legacy form", "MIG-GPU-x/y", nvgo.ErrNotFound},
		{"unknown", "MIG-ffffffff", nvgo.ErrNotFound},
		{"tag only", "MIG-", nvgo.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := lib.DeviceByUUID(tt.id)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("DeviceByUUID(%q) = %v, %v; want %v", tt.id, d, err, tt.err)
				}
				return
			}
			must(t, err)
			if d.MIG() == nil || d.UUID().Or("") != f.UUID() {
				t.Errorf("DeviceByUUID(%q) = %v, want MIG device %s", tt.id, d, f.UUID())
			}
		})
	}
}

// A reconfigured GPU gives new MIG devices; a lost one an error.
func TestMIGReconfigurationAndLoss(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	gpu0, _ := lib.DeviceByIndex(0)
	old, err := gpu0.MIGDevices()
	must(t, err)
	fleet.GPU(0).RemoveMIGDevice(1)
	_, err = fleet.GPU(0).AddMIGDevice(fakegpu.MIGSpec{Index: 2, GI: 5, CI: 0, Profile: "1g.10gb", MemoryTotalMiB: 9984})
	must(t, err)
	migs, err := gpu0.MIGDevices()
	must(t, err)
	if got := migIndices(migs); !slices.Equal(got, []int{0, 2, 3}) {
		t.Errorf("after reconfiguration: MIG indices %v, want [0 2 3]", got)
	}
	if v := old[1].MemoryUsed(); !v.IsNA() {
		t.Errorf("removed MIG device: MemoryUsed = %v, want N/A", v)
	}
	fleet.GPU(0).Lose()
	if _, err := gpu0.MIGDevices(); !errors.Is(err, nvgo.ErrGPULost) {
		t.Errorf("lost GPU: MIGDevices error %v, want ErrGPULost", err)
	}
	if v := migs[0].MemoryUsed(); v.Reason() != nvgo.GPULost {
		t.Errorf("MIG device of a lost GPU: MemoryUsed = %v (reason %v), want GPULost", v, v.Reason())
	}
}

func TestProfileFromAttributes(t *testing.T) {
	// The driver names MIG devices "<GPU> MIG <profile>"; a fake name
	// without it makes nvgo derive the profile from the attributes.
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "a100", MIGEnabled: true, MIGDevices: []fakegpu.MIGSpec{
		{GI: 1, Profile: "3g.40gb", MemoryTotalMiB: 39424},
		{GI: 2, Profile: "1c.3g.40gb", MemoryTotalMiB: 39424},
	}})
	lib := openOn(t, fleet)
	for i := range 2 {
		fleet.GPU(0).MIGDevices()[i].Fail("GetName", nvml.ERROR_NOT_SUPPORTED)
	}
	migs, err := lib.MIGDevices()
	must(t, err)
	for i, want := range []string{"3g.40gb", "1c.3g.40gb"} {
		if got := migs[i].Profile().Or(""); got != want {
			t.Errorf("profile of %d = %q, want %q", i, got, want)
		}
	}
}
