//go:build cgo

package nvgo_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// naField is what the test needs of a Value[T] field, whatever its T.
type naField interface {
	IsNA() bool
	Reason() nvgo.Reason
	Err() error
}

// valueFields returns every field of s (a struct) whose type is a
// Value[T], by name. It goes by the field's type, not a list, so a metric
// added to the struct later is checked too.
func valueFields(s any) map[string]naField {
	out := map[string]naField{}
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if x, ok := v.Field(i).Interface().(naField); ok {
			out[f.Name] = x
		}
	}
	return out
}

// A vGPU instance that cannot be read at all has every metric N/A with the
// reason of the failure and its error (none left at the zero Value's "not
// reported"), its Err and Error set, no processes, and its identity (ID,
// GPU index and UUID, timestamp) kept.
func TestVgpuInstanceSnapshotThatCannotBeReadIsAllNA(t *testing.T) {
	tests := []struct {
		name       string
		snapshot   func(t *testing.T, lib *nvgo.Library, fleet *fakegpu.Fleet) nvgo.VgpuInstanceSnapshot
		wantReason nvgo.Reason
		wantErr    error
	}{
		{
			name: "the GPU is lost while the device snapshot polls the instances' samples",
			snapshot: func(t *testing.T, lib *nvgo.Library, fleet *fakegpu.Fleet) nvgo.VgpuInstanceSnapshot {
				d, err := lib.DeviceByIndex(0)
				must(t, err)
				fleet.GPU(0).Fail("GetVgpuUtilization", nvml.ERROR_GPU_IS_LOST)
				s := d.Snapshot(nvgo.FieldVgpuInstances)
				if len(s.VgpuInstances) != 2 {
					t.Fatalf("%d instances (instances error %v), want the 2 listed", len(s.VgpuInstances), s.VgpuInstancesErr)
				}
				if !errors.Is(s.Err, nvgo.ErrGPULost) {
					t.Errorf("the device snapshot's Err = %v, want ErrGPULost", s.Err)
				}
				return s.VgpuInstances[1]
			},
			wantReason: nvgo.GPULost,
			wantErr:    nvgo.ErrGPULost,
		},
		{
			name: "the instance's Library is closed",
			snapshot: func(t *testing.T, lib *nvgo.Library, _ *fakegpu.Fleet) nvgo.VgpuInstanceSnapshot {
				v := instancesOf(t, lib, 0)[1]
				must(t, lib.Close())
				return v.Snapshot()
			},
			wantReason: nvgo.ReasonOf(nvgo.ErrClosed),
			wantErr:    nvgo.ErrClosed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, fleet := vgpuHost(t)
			d, err := lib.DeviceByIndex(0)
			must(t, err)
			wantUUID := d.UUID().Or("")

			s := tt.snapshot(t, lib, fleet)

			fields := valueFields(s)
			if len(fields) < 20 {
				t.Fatalf("found %d Value fields in VgpuInstanceSnapshot; the reflection is broken", len(fields))
			}
			for name, f := range fields {
				switch {
				case !f.IsNA():
					t.Errorf("%s = %v, want N/A", name, f)
				case f.Reason() != tt.wantReason:
					t.Errorf("%s: reason %v, want %v (not filled?)", name, f.Reason(), tt.wantReason)
				case !errors.Is(f.Err(), tt.wantErr):
					t.Errorf("%s: error %v, want one matching %v", name, f.Err(), tt.wantErr)
				}
			}
			if !errors.Is(s.Err, tt.wantErr) || s.Error == "" || s.Error != s.Err.Error() {
				t.Errorf("Err = %v, Error = %q; want %v and its text", s.Err, s.Error, tt.wantErr)
			}
			if s.Processes != nil {
				t.Errorf("Processes = %v, want nil (not read)", s.Processes)
			}
			if s.ID != 102 || s.DeviceIndex != 0 || s.DeviceUUID != wantUUID || s.Timestamp.IsZero() {
				t.Errorf("identity: ID %d, device %d %q, at %v; want 102 on GPU 0 %q, stamped", s.ID, s.DeviceIndex, s.DeviceUUID, s.Timestamp, wantUUID)
			}
		})
	}
}
