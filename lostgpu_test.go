//go:build cgo

package nvgo_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
			logged := captureDefaultLog(t)
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

			// What was left out is in the result, and nothing is logged.
			got, err := lib.SelectDevices(ctx, nvgo.WithCount(1))
			if len(got) != 1 || got[0].Index() != 6 || errors.Is(err, nvgo.ErrTooFewDevices) ||
				unread != nil && (!errors.As(err, &unread) || unread[0].Index != 7) {
				t.Errorf("SelectDevices(1) = %v, %v; want GPU 6, with GPU 7 named if it was left out", indices(got), err)
			}
			r, err := lib.ReserveDevices(ctx, nvgo.WithCount(2), nvgo.WithLockDir(t.TempDir()))
			if err != nil {
				t.Fatalf("ReserveDevices(2): %v", err)
			}
			defer r.Release()
			if want := fleet.GPU(6).UUID() + "," + fleet.GPU(5).UUID(); r.CUDAVisibleDevices() != want {
				t.Errorf("reserved %s; want GPUs 6 and 5", r.CUDAVisibleDevices())
			}
			if left := r.LeftOut(); len(left) != len(unread) || unread != nil && (left[0].Index != 7 || !errors.Is(left[0].Err, nvgo.ErrGPULost)) {
				t.Errorf("Reservation.LeftOut() = %v; want %v", left, unread)
			}
			if logged.Len() > 0 {
				t.Errorf("the library wrote to slog.Default, unasked:\n%s", logged)
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

// captureDefaultLog points slog.Default at a buffer until the test ends.
func captureDefaultLog(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// A library logs only to the logger it was given: given one, the GPU left
// out of a selection is a debug message there.
func TestSelectLogsOnlyWhereTold(t *testing.T) {
	var buf bytes.Buffer
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	fleet.GPU(1).Lose()
	lib := openOn(t, fleet, nvgo.WithLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	got, err := lib.SelectDevices(context.Background(), nvgo.WithCount(1))
	var unread nvgo.DeviceErrors
	if !slices.Equal(indices(got), []int{0}) || !errors.As(err, &unread) || len(unread) != 1 || unread[0].Index != 1 {
		t.Fatalf("SelectDevices(1) = %v, %v; want GPU 0 and a DeviceErrors naming GPU 1", indices(got), err)
	}
	if !strings.Contains(buf.String(), "level=DEBUG") || !strings.Contains(buf.String(), "GPU 1 left out") {
		t.Errorf("the logger given got %q; want a debug message naming GPU 1", buf.String())
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
	if !slices.Equal(indices(got), []int{1, 0}) || errors.Is(err, nvgo.ErrTooFewDevices) {
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
