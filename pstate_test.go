//go:build cgo

package nvgo_test

import (
	"errors"
	"testing"

	"github.com/nvgo/nvgo"
)

// A driver that reports its performance state as unknown (NVML's 32) gives
// N/A, never a PState that prints "P?" and cannot be parsed back.
func TestUnknownPerformanceStateIsNA(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	fleet.GPU(0).SetPState(-1) // the driver answers NVML_PSTATE_UNKNOWN
	fleet.GPU(1).SetPState(8)
	for _, tt := range []struct {
		gpu  int
		want string
		na   bool
	}{{0, "N/A", true}, {1, "P8", false}} {
		d, err := lib.DeviceByIndex(tt.gpu)
		must(t, err)
		p := d.PerformanceState()
		if p.String() != tt.want || tt.na && (p.Reason() != nvgo.NotReported || !errors.Is(p.Err(), nvgo.ErrNotReported)) {
			t.Errorf("GPU %d: PerformanceState() = %v (%v, %v); want %s", tt.gpu, p, p.Reason(), p.Err(), tt.want)
		}
		if v, ok := p.Get(); ok {
			text, err := v.MarshalText()
			var back nvgo.PState
			if err != nil || back.UnmarshalText(text) != nil || back != v {
				t.Errorf("GPU %d: %v does not round-trip through its text %q", tt.gpu, v, text)
			}
		}
	}
}
