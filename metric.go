package nvgo

import (
	"math"
	"strconv"
)

// DeviceMetric describes one reading of a device: its name, unit and
// meaning, the Fields group that reads it, and whether a MIG device has it.
// It is read-only: DeviceMetrics returns every one, in a fixed order, so
// that a program that serves or shows readings (an exporter, a status page,
// a detail screen) loops over them instead of naming each, and gains every
// reading nvgo adds.
//
// Each DeviceMetric is one field of DeviceSnapshot, whose JSON key is the
// metric's Name, and one method of Device of the same Go name.
type DeviceMetric struct {
	// Name is the reading's key, in snake_case: its DeviceSnapshot JSON key
	// and its Collector key, e.g. "memory_used".
	Name string
	// Unit is the unit of the number Value returns.
	Unit Unit
	// Kind says how the number behaves: a gauge, a counter or a state.
	Kind MetricKind
	// Help says what the reading is, in a sentence.
	Help string
	// Group is the Fields group that reads it.
	Group Fields
	// MIG reports whether a MIG device reports it itself; where it does
	// not, the reading is N/A (NotSupported) on a MIG device and its
	// parent GPU has it.
	MIG bool
	// Static reports whether it is read once per Device: it cannot change
	// while the driver is loaded.
	Static bool

	slot metricSlot
}

// Value returns the reading in s as a number in the metric's Unit: a state
// as its number (On 1, Off 0; a P-state n; a compute mode as NVML numbers
// it). It is N/A, with s's reason, where s's reading is.
func (m DeviceMetric) Value(s *DeviceSnapshot) Value[float64] {
	if m.slot == nil || s == nil {
		return NA[float64](NotReported, nil)
	}
	return m.slot.float(s)
}

// Text returns the reading in s as nvgo prints it ("8862MiB", "41C", "On",
// "P0"), or "N/A".
func (m DeviceMetric) Text(s *DeviceSnapshot) string {
	if m.slot == nil || s == nil {
		return "N/A"
	}
	return m.slot.text(s)
}

// Unit is the unit of a DeviceMetric's number.
type Unit string

// Units of DeviceMetric numbers.
const (
	UnitNone         Unit = ""      // a count, or a state
	UnitBytes        Unit = "B"     // bytes
	UnitPercent      Unit = "%"     // percent
	UnitMHz          Unit = "MHz"   // megahertz
	UnitCelsius      Unit = "C"     // degrees Celsius
	UnitMilliWatts   Unit = "mW"    // milliwatts
	UnitMilliJoules  Unit = "mJ"    // millijoules
	UnitKiBPerSecond Unit = "KiB/s" // kibibytes per second
)

// MetricKind says how a DeviceMetric's number behaves.
type MetricKind uint8

// Kinds of DeviceMetric.
const (
	// KindGauge is a reading that goes up and down.
	KindGauge MetricKind = iota
	// KindCounter only grows while the driver is loaded: difference two
	// readings for what happened between them.
	KindCounter
	// KindState is a mode or an enumeration, not a quantity.
	KindState
)

var kindNames = [...]string{KindGauge: "gauge", KindCounter: "counter", KindState: "state"}

// String returns "gauge", "counter" or "state".
func (k MetricKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "MetricKind(" + strconv.Itoa(int(k)) + ")"
}

// metricSlot is one Value field of a DeviceSnapshot, whatever its type.
type metricSlot interface {
	setNA(s *DeviceSnapshot, r Reason, err error)
	copy(dst, src *DeviceSnapshot)
	float(s *DeviceSnapshot) Value[float64]
	text(s *DeviceSnapshot) string
}

// snapshotField names a Value field of a DeviceSnapshot.
type snapshotField[T any] func(*DeviceSnapshot) *Value[T]

func (f snapshotField[T]) setNA(s *DeviceSnapshot, r Reason, err error) { *f(s) = NA[T](r, err) }
func (f snapshotField[T]) copy(dst, src *DeviceSnapshot)                { *f(dst) = *f(src) }
func (f snapshotField[T]) float(s *DeviceSnapshot) Value[float64]       { return Map(*f(s), metricNumber[T]) }
func (f snapshotField[T]) text(s *DeviceSnapshot) string                { return f(s).String() }

// metricNumber is a reading as a float64 in its unit.
func metricNumber[T any](v T) float64 {
	switch x := any(v).(type) {
	case Bytes:
		return float64(x)
	case Percent:
		return float64(x)
	case MHz:
		return float64(x)
	case Celsius:
		return float64(x)
	case MilliWatts:
		return float64(x)
	case MilliJoules:
		return float64(x)
	case KiBPerSecond:
		return float64(x)
	case PState:
		return float64(x)
	case ComputeMode:
		return float64(x)
	case OnOff:
		return boolNumber(bool(x))
	case bool:
		return boolNumber(x)
	case int:
		return float64(x)
	case uint64:
		return float64(x)
	}
	return math.NaN()
}

func boolNumber(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
