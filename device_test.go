//go:build cgo

package nvgo_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

func TestDeviceLookup(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	uuid3 := fleet.GPU(3).UUID()
	bus5 := fleet.GPU(5).BusID() // "00000000:9A:00.0"
	tests := []struct {
		name    string
		find    func() (*nvgo.Device, error)
		want    int
		wantErr error
	}{
		{"index 0 is the first GPU", func() (*nvgo.Device, error) { return lib.DeviceByIndex(0) }, 0, nil},
		{"index 7 is the last GPU", func() (*nvgo.Device, error) { return lib.DeviceByIndex(7) }, 7, nil},
		{"index 8 does not exist", func() (*nvgo.Device, error) { return lib.DeviceByIndex(8) }, 0, nvgo.ErrNotFound},
		{"negative index does not exist", func() (*nvgo.Device, error) { return lib.DeviceByIndex(-1) }, 0, nvgo.ErrNotFound},
		{"full UUID", func() (*nvgo.Device, error) { return lib.DeviceByUUID(uuid3) }, 3, nil},
		{"unique UUID prefix", func() (*nvgo.Device, error) { return lib.DeviceByUUID(uniquePrefix(fleet, 3)) }, 3, nil},
		{"ambiguous prefix GPU-", func() (*nvgo.Device, error) { return lib.DeviceByUUID("GPU-") }, 0, nvgo.ErrNotFound},
		{"UUID without GPU- prefix", func() (*nvgo.Device, error) { return lib.DeviceByUUID(strings.TrimPrefix(uuid3, "GPU-")) }, 0, nvgo.ErrNotFound},
		{"upper-case UUID is not CUDA's form", func() (*nvgo.Device, error) { return lib.DeviceByUUID("GPU-" + strings.ToUpper(uuid3[4:])) }, 0, nvgo.ErrNotFound},
		{"unknown UUID", func() (*nvgo.Device, error) { return lib.DeviceByUUID("GPU-ffffffff-ffff-ffff-ffff-ffffffffffff") }, 0, nvgo.ErrNotFound},
		{"bus ID as NVML prints it", func() (*nvgo.Device, error) { return lib.DeviceByBusID(bus5) }, 5, nil},
		{"bus ID lower case", func() (*nvgo.Device, error) { return lib.DeviceByBusID(strings.ToLower(bus5)) }, 5, nil},
		{"bus ID with a 4-digit domain", func() (*nvgo.Device, error) { return lib.DeviceByBusID("0000" + bus5[8:]) }, 5, nil},
		{"bus ID without domain", func() (*nvgo.Device, error) { return lib.DeviceByBusID(bus5[9:]) }, 5, nil},
		{"bus ID of no GPU", func() (*nvgo.Device, error) { return lib.DeviceByBusID("0000:01:00.0") }, 0, nvgo.ErrNotFound},
		{"garbage bus ID", func() (*nvgo.Device, error) { return lib.DeviceByBusID("nope") }, 0, nvgo.ErrBadBusID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := tt.find()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Index() != tt.want {
				t.Fatalf("found GPU %d, want %d", d.Index(), tt.want)
			}
		})
	}
}

// uniquePrefix returns the shortest prefix of GPU i's UUID that no other GPU shares.
func uniquePrefix(fleet *fakegpu.Fleet, i int) string {
	u := fleet.GPU(i).UUID()
	for n := 5; n <= len(u); n++ {
		unique := true
		for j := 0; j < fleet.Count(); j++ {
			if j != i && strings.HasPrefix(fleet.GPU(j).UUID(), u[:n]) {
				unique = false
			}
		}
		if unique {
			return u[:n]
		}
	}
	return u
}

func TestAmbiguousUUIDPrefix(t *testing.T) {
	fleet := fakegpu.New(
		fakegpu.GPUSpec{UUID: "GPU-aaaa0000-0000-0000-0000-000000000001"},
		fakegpu.GPUSpec{UUID: "GPU-aaaa0000-0000-0000-0000-000000000002"},
	)
	lib := openOn(t, fleet)
	if _, err := lib.DeviceByUUID("GPU-aaaa"); !errors.Is(err, nvgo.ErrAmbiguous) {
		t.Fatalf("err = %v, want ErrAmbiguous", err)
	}
	d, err := lib.DeviceByUUID("GPU-aaaa0000-0000-0000-0000-000000000002")
	if err != nil || d.Index() != 1 {
		t.Fatalf("got %v, %v; want GPU 1", d, err)
	}
}

func TestDeviceMetricsMatchTheFleet(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	g := fleet.GPU(2)
	g.SetUtilization(37, 12)
	g.SetTemperature(41)
	g.SetPower(72000, 700000)
	g.SetClocks(1980, 1980, 2619, 1545)
	g.SetPState(0)
	g.SetECCErrors(3)
	g.SetComputeMode(nvml.COMPUTEMODE_EXCLUSIVE_PROCESS)
	g.SetPersistence(true)
	d, err := lib.DeviceByIndex(2)
	if err != nil {
		t.Fatal(err)
	}
	s := d.Snapshot(nvgo.FieldsAll)
	checks := []struct {
		name      string
		got, want string
	}{
		{"name", s.Name.String(), g.Name()},
		{"uuid", s.UUID.String(), g.UUID()},
		{"bus id", s.BusID.String(), g.BusID()},
		{"serial", s.Serial.String(), g.Serial()},
		{"gpu utilization", s.GPUUtilization.String(), "37%"},
		{"memory utilization", s.MemoryUtilization.String(), "12%"},
		{"temperature", s.Temperature.String(), "41C"},
		{"power", nvgo.PowerStatus(s.PowerUsage, s.PowerLimit), "72W / 700W"},
		{"sm clock", s.SMClock.String(), "1980MHz"},
		{"video clock", s.VideoClock.String(), "1545MHz"},
		{"performance state", s.PerformanceState.String(), "P0"},
		{"ecc", s.TotalVolatileUncorrectedECCErrors.String(), "3"},
		{"compute mode", s.ComputeMode.String(), "Exclusive Process"},
		{"persistence", s.PersistenceMode.String(), "On"},
		{"fan of an SXM board", s.FanSpeed.String(), "N/A"},
		{"compute capability", s.CUDAComputeCapability.String(), "9.0"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %q, want %q", c.got, c.want)
			}
		})
	}
	if s.FanSpeed.Reason() != nvgo.NotSupported {
		t.Errorf("fan reason = %v, want not supported", s.FanSpeed.Reason())
	}
	total, _ := s.MemoryTotal.Get()
	used, _ := s.MemoryUsed.Get()
	free, _ := s.MemoryFree.Get()
	reserved, _ := s.MemoryReserved.Get()
	if total == 0 || reserved == 0 || used+free+reserved != total {
		t.Errorf("memory used %d + free %d + reserved %d != total %d", used, free, reserved, total)
	}
	// Per-metric methods agree with the snapshot (served from the cache it refreshed).
	if got := d.GPUUtilization(); got != s.GPUUtilization {
		t.Errorf("GPUUtilization() = %v, snapshot %v", got, s.GPUUtilization)
	}
	if got := d.MemoryUsed(); got != s.MemoryUsed {
		t.Errorf("MemoryUsed() = %v, snapshot %v", got, s.MemoryUsed)
	}
}

func TestVersions(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100")
	tests := []struct {
		name string
		get  func() (string, error)
		want string
	}{
		{"driver", lib.DriverVersion, "580.95.05"},
		{"cuda driver", lib.CUDADriverVersion, "13.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.get()
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFormatCUDAVersion(t *testing.T) {
	for in, want := range map[int]string{12040: "12.4", 13000: "13.0", 12041: "12.4.1", 11080: "11.8"} {
		if got := nvgo.FormatCUDAVersion(in); got != want {
			t.Errorf("FormatCUDAVersion(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestUnifiedMemoryIsSaidExplicitly(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	fleet.GPU(0).Unsupported("memory")
	d, _ := lib.DeviceByIndex(0)
	s := d.Snapshot(nvgo.FieldMemory)
	if !s.UnifiedMemory.Or(false) {
		t.Fatalf("UnifiedMemory = %v for a GPU whose memory info is not supported", s.UnifiedMemory)
	}
	if !s.MemoryUsed.IsNA() || !errors.Is(s.MemoryUsed.Err(), nvgo.ErrUnifiedMemory) {
		t.Fatalf("MemoryUsed = %v (%v), want N/A because of unified memory", s.MemoryUsed, s.MemoryUsed.Err())
	}
}

// After Close a reading is N/A with ErrClosed at once, even one the cache
// still holds; static values read before stay.
func TestCloseEndsCachedReadings(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet))
	if err != nil {
		t.Fatal(err)
	}
	d, err := lib.DeviceByIndex(0)
	if err != nil {
		t.Fatal(err)
	}
	name := d.Name()
	if v := d.MemoryUsed(); v.IsNA() {
		t.Fatalf("MemoryUsed before Close = %v", v)
	}
	lib.Close()
	if v := d.MemoryUsed(); !v.IsNA() || !errors.Is(v.Err(), nvgo.ErrClosed) {
		t.Errorf("MemoryUsed after Close = %v (%v); want N/A with ErrClosed", v, v.Err())
	}
	if s := d.Snapshot(nvgo.FieldMemory); !errors.Is(s.Err, nvgo.ErrClosed) {
		t.Errorf("Snapshot after Close: Err %v; want ErrClosed", s.Err)
	}
	if d.Name() != name {
		t.Errorf("Name after Close = %v; want %v, read before", d.Name(), name)
	}
}

// The energy counter comes from the power batch and grows by power × time.
func TestTotalEnergyConsumptionIsACounter(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	g := fleet.GPU(2)
	g.SetPower(72000, 700000)
	d, err := lib.DeviceByIndex(2)
	if err != nil {
		t.Fatal(err)
	}
	before, ok := d.Snapshot(nvgo.FieldPower).TotalEnergyConsumption.Get()
	if !ok {
		t.Fatal("no energy reading")
	}
	fleet.Advance(10 * time.Second)
	after := d.Snapshot(nvgo.FieldPower).TotalEnergyConsumption
	if got := after.Or(0) - before; got != 720_000 {
		t.Errorf("energy over 10 s at 72 W = %v mJ; want 720000", uint64(got))
	}
	if s := nvgo.MilliJoules(720_000).String(); s != "720J" {
		t.Errorf("MilliJoules(720000) = %q; want 720J", s)
	}
	d0, err := lib.DeviceByIndex(0)
	if err != nil {
		t.Fatal(err)
	}
	fleet.GPU(0).Lose()
	if v := d0.Snapshot(nvgo.FieldPower).TotalEnergyConsumption; !v.IsNA() || v.Reason() != nvgo.GPULost {
		t.Errorf("a lost GPU's energy = %v (%v); want N/A (GPU lost)", v, v.Reason())
	}
}
