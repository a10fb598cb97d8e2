//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"slices"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

const giB = 1 << 30

// selectFleet is four H100 80GB: memory used 10, 70, 10, 0 GiB and GPU
// utilization 50, 0, 5, 0 %.
func selectFleet(t *testing.T) (*nvgo.Library, *fakegpu.Fleet) {
	t.Helper()
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	for i, g := range []struct{ used, util uint32 }{{10, 50}, {70, 0}, {10, 5}, {0, 0}} {
		fleet.GPU(i).SetMemoryUsed(uint64(g.used) * giB)
		fleet.GPU(i).SetUtilization(g.util, g.util/2)
	}
	return openOn(t, fleet), fleet
}

func indices(devs []*nvgo.Device) []int {
	out := make([]int, len(devs))
	for i, d := range devs {
		out[i] = d.Index()
	}
	return out
}

func TestSelectDevices(t *testing.T) {
	tests := []struct {
		name    string
		opts    []nvgo.SelectOption
		want    []int
		tooFew  bool
		badArgs bool
	}{
		{"no constraint ranks by free memory, GPU 0 last among equals", nil, []int{3, 2, 0, 1}, false, false},
		{"min free memory", []nvgo.SelectOption{nvgo.WithMinFreeMemory(60 * giB)}, []int{3, 2, 0}, false, false},
		{"max GPU utilization", []nvgo.SelectOption{nvgo.WithMaxGPUUtilization(10)}, []int{3, 2, 1}, false, false},
		{"zero utilization means idle only", []nvgo.SelectOption{nvgo.WithMaxGPUUtilization(0)}, []int{3, 1}, false, false},
		{"tolerance lets near misses in, ranked after", []nvgo.SelectOption{nvgo.WithMaxGPUUtilization(0), nvgo.WithTolerance(10)}, []int{3, 1, 2}, false, false},
		{"max count cuts the ranking", []nvgo.SelectOption{nvgo.WithMaxCount(2)}, []int{3, 2}, false, false},
		{"too few", []nvgo.SelectOption{nvgo.WithMinFreeMemory(75 * giB), nvgo.WithMinCount(2)}, []int{3}, true, false},
		{"unsorted keeps NVML order", []nvgo.SelectOption{nvgo.WithoutSorting(), nvgo.WithMaxGPUUtilization(10)}, []int{1, 2, 3}, false, false},
		{"candidates limit the choice", nil, nil, false, false},
		{"negative count", []nvgo.SelectOption{nvgo.WithMinCount(-1)}, nil, false, true},
		{"max below min", []nvgo.SelectOption{nvgo.WithMinCount(3), nvgo.WithMaxCount(2)}, nil, false, true},
		{"tolerance over 100", []nvgo.SelectOption{nvgo.WithTolerance(101)}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, _ := selectFleet(t)
			opts := tt.opts
			want := tt.want
			if tt.name == "candidates limit the choice" {
				a, _ := lib.DeviceByIndex(0)
				b, _ := lib.DeviceByIndex(1)
				opts, want = []nvgo.SelectOption{nvgo.WithCandidates(a, b)}, []int{0, 1}
			}
			got, err := lib.SelectDevices(context.Background(), opts...)
			switch {
			case tt.badArgs:
				if !errors.Is(err, nvgo.ErrInvalidArgument) {
					t.Fatalf("err = %v, want ErrInvalidArgument", err)
				}
				return
			case tt.tooFew:
				if !errors.Is(err, nvgo.ErrTooFewDevices) {
					t.Fatalf("err = %v, want ErrTooFewDevices", err)
				}
			case err != nil:
				t.Fatal(err)
			}
			if !slices.Equal(indices(got), want) {
				t.Errorf("selected %v, want %v", indices(got), want)
			}
		})
	}
}

// N/A never satisfies a constraint: a GPU whose memory cannot be read is
// not "free".
func TestSelectNeverTrustsNA(t *testing.T) {
	lib, fleet := selectFleet(t)
	fleet.GPU(3).Unsupported("memory")
	fleet.GPU(2).Unsupported("utilization")
	got, err := lib.SelectDevices(context.Background(), nvgo.WithMinFreeMemory(1*giB))
	must(t, err)
	if slices.Contains(indices(got), 3) {
		t.Errorf("selected %v: GPU 3 has N/A memory and must not pass a memory minimum", indices(got))
	}
	got, err = lib.SelectDevices(context.Background(), nvgo.WithMaxGPUUtilization(100))
	must(t, err)
	if slices.Contains(indices(got), 2) {
		t.Errorf("selected %v: GPU 2 has N/A utilization and must not pass a utilization maximum", indices(got))
	}
	got, err = lib.SelectDevices(context.Background())
	must(t, err)
	if len(got) != 4 || got[3].Index() != 3 {
		t.Errorf("without constraints got %v, want all four with N/A memory ranked last", indices(got))
	}
}

// Memory of the named users' processes counts as free.
func TestSelectFreeAccounts(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	lib := openOn(t, fleet)
	child := startSleep(t)
	me := currentUser(t)
	fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(child.Process.Pid), Name: "sleep", Type: fakegpu.Compute, UsedMemory: 60 * giB})
	fleet.GPU(1).SetMemoryUsed(30 * giB)
	got, err := lib.SelectDevices(context.Background(), nvgo.WithMinFreeMemory(70*giB))
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("selected %v, want none with 70 GiB free", indices(got))
	}
	got, err = lib.SelectDevices(context.Background(), nvgo.WithMinFreeMemory(70*giB), nvgo.WithFreeAccounts(me))
	must(t, err)
	if !slices.Equal(indices(got), []int{0}) {
		t.Errorf("selected %v, want [0] once %s's 60 GiB count as free", indices(got), me)
	}
}

func TestDeviceIndicesAndUUIDs(t *testing.T) {
	lib, fleet := selectFleet(t)
	devs, err := lib.Devices()
	must(t, err)
	ids, err := nvgo.DeviceIndices(devs[1:3])
	must(t, err)
	if !slices.Equal(ids, []int{1, 2}) {
		t.Errorf("DeviceIndices = %v", ids)
	}
	if u := nvgo.DeviceUUIDs(devs[:1]); u[0] != fleet.GPU(0).UUID() {
		t.Errorf("DeviceUUIDs = %v", u)
	}
}

// FuzzSelectOptions checks that any combination of options either fails
// with ErrInvalidArgument or returns distinct devices that satisfy every
// constraint, at most the maximum count.
func FuzzSelectOptions(f *testing.F) {
	f.Add(0, -1, uint64(0), uint64(0), -1.0, -1.0, 0.0, false)
	f.Add(2, 2, uint64(20*giB), uint64(80*giB), 10.0, 50.0, 10.0, true)
	f.Add(5, 1, uint64(1), uint64(1<<62), 0.0, 0.0, 100.0, false)
	lib, _ := func() (*nvgo.Library, *fakegpu.Fleet) {
		fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"}, fakegpu.GPUSpec{Model: "h100"})
		fleet.GPU(0).SetMemoryUsed(40 * giB)
		fleet.GPU(1).SetUtilization(30, 10)
		fleet.GPU(2).Unsupported("utilization")
		lib, err := nvgo.Open(nvgo.WithNVML(fleet))
		if err != nil {
			f.Fatal(err)
		}
		return lib, fleet
	}()
	f.Fuzz(func(t *testing.T, minCount, maxCount int, minFree, minTotal uint64, maxGPU, maxMem, tol float64, unsorted bool) {
		opts := []nvgo.SelectOption{nvgo.WithMinCount(minCount), nvgo.WithMinFreeMemory(nvgo.Bytes(minFree)),
			nvgo.WithMinTotalMemory(nvgo.Bytes(minTotal)), nvgo.WithTolerance(nvgo.Percent(tol))}
		if maxCount >= 0 {
			opts = append(opts, nvgo.WithMaxCount(maxCount))
		}
		if maxGPU >= 0 {
			opts = append(opts, nvgo.WithMaxGPUUtilization(nvgo.Percent(maxGPU)))
		}
		if maxMem >= 0 {
			opts = append(opts, nvgo.WithMaxMemoryUtilization(nvgo.Percent(maxMem)))
		}
		if unsorted {
			opts = append(opts, nvgo.WithoutSorting())
		}
		got, err := lib.SelectDevices(context.Background(), opts...)
		if errors.Is(err, nvgo.ErrInvalidArgument) {
			return
		}
		if err != nil && !errors.Is(err, nvgo.ErrTooFewDevices) {
			t.Fatalf("unexpected error %v", err)
		}
		if maxCount >= 0 && len(got) > maxCount {
			t.Fatalf("%d devices, max %d", len(got), maxCount)
		}
		seen := map[*nvgo.Device]bool{}
		loose := 1 - tol/100
		for _, d := range got {
			if seen[d] {
				t.Fatalf("%v selected twice", d)
			}
			seen[d] = true
			if free, ok := d.MemoryFree().Get(); minFree > 0 && (!ok || float64(free) < float64(minFree)*loose) {
				t.Fatalf("%v: free %v below %d", d, d.MemoryFree(), minFree)
			}
			if u, ok := d.GPUUtilization().Get(); maxGPU >= 0 && (!ok || float64(u) > maxGPU+tol) {
				t.Fatalf("%v: utilization %v above %v", d, d.GPUUtilization(), maxGPU)
			}
		}
	})
}

func ExampleLibrary_SelectDevices() {
	fleet, _ := fakegpu.Preset("dgx-h100")
	lib, _ := nvgo.Open(nvgo.WithNVML(fleet))
	defer lib.Close()

	devs, err := lib.SelectDevices(context.Background(),
		nvgo.WithCount(2),
		nvgo.WithMinFreeMemory(20*giB),
		nvgo.WithMaxGPUUtilization(30),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(nvgo.DeviceIndices(devs))
	// Output: [7 6] <nil>
}

func currentUser(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Skip("no current user:", err)
	}
	return u.Username
}

// A GPU that has just gone idle after seconds of full load is not free when
// judged over a window of the driver's samples.
func TestSelectUtilizationWindow(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	lib := openOn(t, fleet)
	fleet.GPU(0).SetUtilization(100, 50)
	fleet.GPU(1).SetUtilization(30, 10)
	for range 4 {
		fleet.Advance(time.Second)
	}
	fleet.GPU(0).SetUtilization(0, 0) // idle only at this instant
	ctx := context.Background()
	got, err := lib.SelectDevices(ctx, nvgo.WithMaxGPUUtilization(50))
	must(t, err)
	if !slices.Equal(indices(got), []int{0, 1}) {
		t.Errorf("instantaneous: selected %v, want [0 1]", indices(got))
	}
	got, err = lib.SelectDevices(ctx, nvgo.WithMaxGPUUtilization(50), nvgo.WithUtilizationWindow(5*time.Second))
	must(t, err)
	if !slices.Equal(indices(got), []int{1}) {
		t.Errorf("over 5 s: selected %v, want [1] (GPU 0 averaged 80%%)", indices(got))
	}
	got, err = lib.SelectDevices(ctx, nvgo.WithMaxGPUUtilization(50), nvgo.WithUtilizationWindow(500*time.Millisecond))
	must(t, err)
	if !slices.Equal(indices(got), []int{0, 1}) {
		t.Errorf("over 0.5 s: selected %v, want [0 1]", indices(got))
	}
}
