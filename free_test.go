//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// One definition of free, for every tool: a GPU with MIG on and no MIG
// device is not free (nothing can run there); N/A says why it cannot be
// told.
func TestDeviceSnapshotFree(t *testing.T) {
	me := os.Getpid()
	proc := fmt.Sprintf(`"processes": [{"pid": %d}]`, me)
	for _, tt := range []struct {
		name     string
		gpu      string // one GPU of a scenario
		fields   nvgo.Fields
		want     string // Free().String() of the GPU
		wantMIGs []string
	}{
		{"idle", `{"model": "h100"}`, nvgo.FieldsAll, "true", nil},
		{"in use", `{"model": "h100", ` + proc + `}`, nvgo.FieldsAll, "false", nil},
		{"MIG on, no MIG device", `{"model": "h100", "mig_mode": 1}`, nvgo.FieldsAll, "false", nil},
		{"MIG on, idle MIG devices", `{"model": "h100", "mig_mode": 1, "mig_devices": [{"gi": 1, "profile": "3g.40gb"}, {"gi": 2, "profile": "1g.10gb"}]}`,
			nvgo.FieldsAll, "true", []string{"true", "true"}},
		{"MIG on, one MIG device in use", `{"model": "h100", "mig_mode": 1, "mig_devices": [{"gi": 1, "profile": "3g.40gb"}, {"gi": 2, "profile": "1g.10gb", ` + proc + `}]}`,
			nvgo.FieldsAll, "false", []string{"true", "false"}},
		{"process lists fail", `{"model": "h100", "errors": {"processes": "UNKNOWN"}}`, nvgo.FieldsAll, "N/A", nil},
		{"lost", `{"model": "h100", "lost": true}`, nvgo.FieldsAll, "N/A", nil},
		{"processes not read", `{"model": "h100"}`, nvgo.FieldsAll &^ nvgo.FieldProcesses, "N/A", nil},
		{"MIG mode not read", `{"model": "h100"}`, nvgo.FieldProcesses, "N/A", nil},
		{"MIG off, MIG devices not asked", `{"model": "h100"}`, nvgo.FieldProcesses | nvgo.FieldMIGMode, "N/A", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fleet, err := fakegpu.ParseScenario([]byte(`{"gpus": [` + tt.gpu + `]}`))
			if err != nil {
				t.Fatal(err)
			}
			lib := openOn(t, fleet)
			snap, err := lib.Snapshot(context.Background(), nvgo.WithFields(tt.fields))
			if err != nil {
				t.Fatal(err)
			}
			s := &snap.Devices[0]
			if got := s.Free(); got.String() != tt.want || got.IsNA() && got.Err() == nil {
				t.Errorf("Free() = %v (%v); want %s", got, got.Err(), tt.want)
			}
			var migs []string
			for i := range s.MIGDevices {
				migs = append(migs, s.MIGDevices[i].Free().String())
			}
			if fmt.Sprint(migs) != fmt.Sprint(tt.wantMIGs) {
				t.Errorf("MIG devices free %v; want %v", migs, tt.wantMIGs)
			}
		})
	}
}
