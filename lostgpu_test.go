//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// One GPU that fell off the bus never stops the others from being chosen,
// reserved or mapped to CUDA; it is named wherever it is left out. It may
// be lost before nvgo first looks at it or after.
func TestALostGPUStopsNothing(t *testing.T) {
	for _, when := range []string{"before first use", "after first use"} {
		t.Run(when, func(t *testing.T) {
			lib, fleet := openFleet(t, "dgx-h100")
			idle(fleet) // every GPU free: ties go to the highest index, GPU 7
			if when == "after first use" {
				if _, err := lib.LeafDevices(); err != nil {
					t.Fatal(err)
				}
				if _, err := lib.CUDADevices(nvgo.CUDAEnv{}); err != nil {
					t.Fatal(err)
				}
			}
			fleet.GPU(7).Lose()
			ctx := context.Background()

			leaves, err := lib.LeafDevices()
			var unread nvgo.DeviceErrors
			switch {
			case err == nil:
				// The lost GPU was listed as a leaf of its own (its MIG mode
				// cannot be read): it must then fail every constraint below.
			case !errors.As(err, &unread) || len(unread) != 1 || unread[0].Index != 7 || !errors.Is(err, nvgo.ErrGPULost):
				t.Fatalf("LeafDevices error %v; want a DeviceErrors naming GPU 7 as lost", err)
			}
			if len(leaves) < 7 {
				t.Fatalf("LeafDevices gave %d devices; want the 7 readable GPUs", len(leaves))
			}

			got, err := lib.SelectDevices(ctx, nvgo.WithCount(1))
			if err != nil || len(got) != 1 || got[0].Index() != 6 {
				t.Errorf("SelectDevices(1) = %v, %v; want GPU 6", indices(got), err)
			}
			r, err := lib.ReserveDevices(ctx, nvgo.WithCount(2), nvgo.WithLockDir(t.TempDir()))
			if err != nil {
				t.Fatalf("ReserveDevices(2): %v", err)
			}
			defer r.Release()
			if want := fleet.GPU(6).UUID() + "," + fleet.GPU(5).UUID(); r.CUDAVisibleDevices() != want {
				t.Errorf("reserved %s; want GPUs 6 and 5", r.CUDAVisibleDevices())
			}

			// CUDA's list: undetermined while the lost GPU may count, with
			// the lost GPU named; decided for complete UUIDs of others.
			for _, env := range []nvgo.CUDAEnv{{}, nvgo.VisibleDevices("0,1")} {
				_, err := lib.CUDADevices(env)
				if !errors.Is(err, nvgo.ErrUndetermined) || !errors.Is(err, nvgo.ErrGPULost) || !strings.Contains(err.Error(), "GPU 7") {
					t.Errorf("CUDADevices(%s) error %v; want ErrUndetermined naming lost GPU 7", env, err)
				}
			}
			env := nvgo.VisibleDevices(fleet.GPU(2).UUID() + "," + fleet.GPU(0).UUID())
			cuda, err := lib.CUDADevices(env)
			if err != nil {
				t.Fatalf("CUDADevices(%s): %v", env, err)
			}
			var idx []int
			for _, c := range cuda {
				idx = append(idx, c.Index())
			}
			if !slices.Equal(idx, []int{2, 0}) {
				t.Errorf("CUDADevices(complete UUIDs of GPUs 2, 0) = %v", idx)
			}
		})
	}
}

// A scenario with a lost GPU behaves the same.
func TestALostGPUInAScenarioStopsNothing(t *testing.T) {
	fleet, err := fakegpu.ParseScenario([]byte(`{"gpus": [{"model": "h100"}, {"model": "h100"}, {"model": "h100", "lost": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	lib := openOn(t, fleet)
	got, err := lib.SelectDevices(context.Background(), nvgo.WithCount(2))
	if err != nil || !slices.Equal(indices(got), []int{1, 0}) {
		t.Errorf("SelectDevices(2) = %v, %v; want GPUs 1 and 0", indices(got), err)
	}
}

// An NVML error is an errors.Is target for its return code as well as its
// sentinel, and errors.As reads the code.
func TestReturnCodesAreErrorsIsTargets(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	fleet.GPU(3).Lose()
	d, err := lib.DeviceByIndex(3)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Processes(context.Background())
	if !errors.Is(err, nvgo.ReturnGPUIsLost) || !errors.Is(err, nvgo.ErrGPULost) || errors.Is(err, nvgo.ReturnNotSupported) {
		t.Errorf("Processes of a lost GPU: %v; want it to match ReturnGPUIsLost and ErrGPULost only", err)
	}
	var e *nvgo.NVMLError
	if !errors.As(err, &e) || e.Code != nvgo.ReturnGPUIsLost {
		t.Errorf("errors.As gave %v", e)
	}
}
