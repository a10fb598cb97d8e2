//go:build cgo

package nvgo_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

// notMetrics are the Value fields of DeviceSnapshot that identify a device
// rather than read it: they have no DeviceMetric.
var notMetrics = map[string]bool{
	"uuid": true, "name": true, "bus_id": true, "serial": true, "minor_number": true,
	"cuda_compute_capability": true, "mig_index": true, "gpu_instance_id": true,
	"compute_instance_id": true, "mig_profile": true, "parent_uuid": true,
	"virtualization_mode": true,
}

// snapshotFields returns DeviceSnapshot's Value fields by JSON key.
func snapshotFields(t *testing.T) map[string]reflect.StructField {
	t.Helper()
	out := map[string]reflect.StructField{}
	typ := reflect.TypeOf(nvgo.DeviceSnapshot{})
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if strings.HasPrefix(f.Type.Name(), "Value[") {
			out[key] = f
		}
	}
	return out
}

// Every reading is one DeviceMetric, one DeviceSnapshot field whose JSON key
// is the metric's name, and one Device method of the field's Go name that
// returns what a snapshot read.
func TestEveryMetricIsAFieldAJSONKeyAndAMethod(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	fleet.GPU(1).SetTemperature(52)
	d, err := lib.DeviceByIndex(1)
	must(t, err)
	s := d.Snapshot(nvgo.FieldsAll)
	fields := snapshotFields(t)
	seen := map[string]bool{}
	for _, m := range nvgo.DeviceMetrics() {
		t.Run(m.Name, func(t *testing.T) {
			if seen[m.Name] {
				t.Fatalf("two metrics are called %s", m.Name)
			}
			seen[m.Name] = true
			if m.Help == "" || !strings.HasSuffix(m.Help, ".") || m.Group == 0 || m.Group&(m.Group-1) != 0 {
				t.Errorf("help %q, group %v: want a sentence and one group", m.Help, m.Group)
			}
			f, ok := fields[m.Name]
			if !ok {
				t.Fatalf("DeviceSnapshot has no field with JSON key %q", m.Name)
			}
			method := reflect.ValueOf(d).MethodByName(f.Name)
			if !method.IsValid() {
				t.Fatalf("Device has no method %s", f.Name)
			}
			live := method.Call(nil)[0].Interface()
			snap := reflect.ValueOf(s).FieldByName(f.Name).Interface()
			if got, want := live.(interface{ String() string }).String(), snap.(interface{ String() string }).String(); got != want {
				t.Errorf("Device.%s() = %s; the snapshot read %s", f.Name, got, want)
			}
			if got, ok := nvgo.LookupDeviceMetric(m.Name); !ok || got.Name != m.Name {
				t.Errorf("LookupDeviceMetric(%q) = %v, %v", m.Name, got.Name, ok)
			}
		})
	}
	for key := range fields {
		if !seen[key] && !notMetrics[key] {
			t.Errorf("DeviceSnapshot field %q has no DeviceMetric", key)
		}
	}
	if _, ok := nvgo.LookupDeviceMetric("no_such_metric"); ok {
		t.Error("LookupDeviceMetric found a metric that does not exist")
	}
}

func TestMetricValuesAreNumbersInTheirUnit(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	g := fleet.GPU(0)
	g.SetTemperature(61)
	g.SetPower(412_500, 700_000)
	g.SetMemoryUsed(3 << 30)
	d, err := lib.DeviceByIndex(0)
	must(t, err)
	s := d.Snapshot(nvgo.FieldsAll)
	tests := []struct {
		name string
		want float64 // NaN: N/A
	}{
		{"temperature", 61},
		{"memory_temperature", 64}, // the fake's HBM: the core plus 3
		{"memory_used", 3 << 30},
		{"power_limit", 700_000},
		{"persistence_mode", 1},
		{"mig_mode", 0},
		{"unified_memory", 0},
		{"fan_speed", math.NaN()}, // an SXM board
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, ok := nvgo.LookupDeviceMetric(tt.name)
			if !ok {
				t.Fatal("no such metric")
			}
			v := m.Value(&s)
			if x, ok := v.Get(); ok != !math.IsNaN(tt.want) || ok && x != tt.want {
				t.Errorf("Value = %v; want %v", v, tt.want)
			}
		})
	}
	if m, _ := nvgo.LookupDeviceMetric("temperature"); !m.Value(nil).IsNA() || !(nvgo.DeviceMetric{}).Value(&s).IsNA() {
		t.Error("Value of no snapshot, or of the zero DeviceMetric, is not N/A")
	}
}

func TestMetricsOfMIGDevicesAndStaticOnes(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100-mig")
	gpu, err := lib.DeviceByIndex(0)
	must(t, err)
	migs, err := gpu.MIGDevices()
	must(t, err)
	s := migs[0].Snapshot(nvgo.FieldsAll)
	for _, m := range nvgo.DeviceMetrics() {
		v := m.Value(&s)
		if !m.MIG && (!v.IsNA() || v.Reason() != nvgo.NotSupported) {
			t.Errorf("%s on a MIG device = %v (%v); want N/A, not supported (the parent has it)", m.Name, v, v.Reason())
		}
	}
	if m, _ := nvgo.LookupDeviceMetric("memory_used"); !m.MIG || m.Value(&s).IsNA() {
		t.Error("memory_used is not a MIG device's own reading")
	}
	if m, _ := nvgo.LookupDeviceMetric("max_sm_clock"); !m.Static || m.Kind != nvgo.KindGauge {
		t.Errorf("max_sm_clock: static %v kind %v; want a static gauge", m.Static, m.Kind)
	}
	if m, _ := nvgo.LookupDeviceMetric("default_power_limit"); !m.Static {
		t.Error("default_power_limit is not static")
	}
	if m, _ := nvgo.LookupDeviceMetric("total_energy_consumption"); m.Kind != nvgo.KindCounter || m.Kind.String() != "counter" {
		t.Errorf("total_energy_consumption kind %v; want counter", m.Kind)
	}
}

func TestDeviceMetricsIsTheCallersCopy(t *testing.T) {
	a := nvgo.DeviceMetrics()
	a[0].Name = "changed"
	if b := nvgo.DeviceMetrics(); b[0].Name == "changed" {
		t.Error("changing the slice DeviceMetrics returned changed the table")
	}
}

// The snapshot's JSON carries every metric under its name.
func TestSnapshotJSONHasEveryMetric(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100")
	snap, err := lib.Snapshot(context.Background())
	must(t, err)
	b, err := json.Marshal(snap.Devices[0])
	must(t, err)
	var doc map[string]json.RawMessage
	must(t, json.Unmarshal(b, &doc))
	for _, m := range nvgo.DeviceMetrics() {
		if _, ok := doc[m.Name]; !ok {
			t.Errorf("JSON lacks %q", m.Name)
		}
	}
	if got, want := string(doc["memory_temperature"]), strconv.Itoa(atoi(t, string(doc["temperature"]))+3); got != want {
		t.Errorf("memory_temperature %s with temperature %s; want the fake's HBM, 3 above the core", doc["memory_temperature"], doc["temperature"])
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	must(t, err)
	return n
}

// A static reading is read once per Device, whatever reads it.
func TestStaticReadingsAreReadOnce(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	d, err := lib.DeviceByIndex(0)
	must(t, err)
	fleet.Init()
	want, _ := fleet.GPU(0).Device().GetPowerManagementDefaultLimit()
	fleet.Shutdown()
	before := fleet.CallCount("Device.GetPowerManagementDefaultLimit")
	for range 3 {
		if got := d.Snapshot(nvgo.FieldPower).DefaultPowerLimit; got != nvgo.Some(nvgo.MilliWatts(want)) {
			t.Fatalf("DefaultPowerLimit %v; want %d mW", got, want)
		}
	}
	if got := d.DefaultPowerLimit(); got != nvgo.Some(nvgo.MilliWatts(want)) {
		t.Errorf("Device.DefaultPowerLimit() = %v; want %d mW", got, want)
	}
	if n := fleet.CallCount("Device.GetPowerManagementDefaultLimit") - before; n != 1 {
		t.Errorf("GetPowerManagementDefaultLimit called %d times for three snapshots and a method; want once", n)
	}
}
