//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/internal/testenv"
)

func cudaIndices(devs []*nvgo.CudaDevice) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		if d.CUDAIndex() != i {
			out[i] = fmt.Sprintf("bad ordinal %d", d.CUDAIndex())
			continue
		}
		if m := d.MIG(); m != nil {
			out[i] = fmt.Sprintf("%d/%d", m.Parent().Index(), m.MIGIndex())
		} else {
			out[i] = fmt.Sprint(d.Index())
		}
	}
	return out
}

func TestCudaDevicesOnAFleet(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	tests := []struct {
		env  nvgo.CUDAEnv
		want []string
	}{
		{nvgo.CUDAEnv{}, []string{"0", "1", "2", "3", "4", "5", "6", "7"}},
		{nvgo.VisibleDevices("3,1"), []string{"3", "1"}},
		{nvgo.VisibleDevices(""), []string{}},
		{nvgo.VisibleDevices("0,0"), []string{}},
		{nvgo.VisibleDevices(fleet.GPU(5).UUID()[:12] + "," + fleet.GPU(2).UUID()), []string{"5", "2"}},
		{nvgo.CUDAEnv{Visible: "7,junk,1", VisibleSet: true, Order: nvgo.OrderPCIBusID}, []string{"7"}},
	}
	for _, tt := range tests {
		t.Run(tt.env.String(), func(t *testing.T) {
			devs, err := lib.CUDADevices(tt.env)
			must(t, err)
			if got := cudaIndices(devs); !slices.Equal(got, tt.want) {
				t.Errorf("CUDADevices = %v, want %v", got, tt.want)
			}
		})
	}

	norm, err := lib.NormalizeCUDAVisibleDevices(nvgo.VisibleDevices("3,GPU-junk"))
	must(t, err)
	if norm != fleet.GPU(3).UUID() {
		t.Errorf("NormalizeCUDAVisibleDevices = %q, want GPU 3's UUID", norm)
	}
	gpu1, _ := lib.DeviceByIndex(1)
	if i, err := lib.CUDAIndex(gpu1, nvgo.VisibleDevices("3,1")); err != nil || i != 1 {
		t.Errorf("CUDAIndex(GPU 1) = %d, %v; want 1", i, err)
	}
	if _, err := lib.CUDAIndex(gpu1, nvgo.VisibleDevices("3")); !errors.Is(err, nvgo.ErrNotFound) {
		t.Errorf("CUDAIndex of a hidden GPU: %v, want ErrNotFound", err)
	}
}

func TestCudaDevicesWithMIG(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	mig := fleet.GPU(0).MIGDevice(3)
	devs, err := lib.CUDADevices(nvgo.VisibleDevices(mig.UUID()))
	must(t, err)
	if got := cudaIndices(devs); !slices.Equal(got, []string{"0/3"}) || devs[0].Physical().Index() != 0 {
		t.Errorf("CUDADevices(%s) = %v, want [0/3]", mig.UUID(), got)
	}
	if _, err := lib.CUDADevices(nvgo.CUDAEnv{}); !errors.Is(err, nvgo.ErrOrderUndetermined) {
		t.Errorf("unset with MIG on an R580 driver: %v, want ErrOrderUndetermined", err)
	}
	if _, err := lib.CUDADevices(nvgo.VisibleDevices("0")); !errors.Is(err, nvgo.ErrUndetermined) {
		t.Errorf("indices with MIG on: %v, want ErrUndetermined", err)
	}
	fleet.SetDriverVersion("535.183.01")
	lib2 := openOn(t, fleet)
	devs, err = lib2.CUDADevices(nvgo.VisibleDevices(fleet.GPU(3).UUID() + "," + mig.UUID()))
	must(t, err)
	if got := cudaIndices(devs); !slices.Equal(got, []string{"0/3"}) {
		t.Errorf("R535, a whole GPU and a MIG device: %v, want only the MIG device", got)
	}
}

// buildFakeCUDA compiles the fake libcuda the cudaprobe tests use.
func buildFakeCUDA(t *testing.T) string {
	t.Helper()
	cc := testenv.Program(t, "gcc") // builds a fake libcuda
	out := filepath.Join(t.TempDir(), "libcuda.so.1")
	if b, err := exec.Command(cc, "-shared", "-fPIC", "-o", out, "internal/cudaprobe/testdata/fakecuda.c").CombinedOutput(); err != nil {
		t.Fatalf("building fake libcuda: %v\n%s", err, b)
	}
	return out
}

func rawUUIDs(fleet *fakegpu.Fleet) string {
	var u []string
	for i := range fleet.Count() {
		u = append(u, strings.TrimPrefix(fleet.GPU(i).UUID(), "GPU-"))
	}
	return strings.Join(u, ",")
}

// The exact resolver asks a (fake) libcuda in a child process and maps its
// UUIDs back to devices; answers are remembered per question.
func TestCudaDevicesFromDriver(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	t.Setenv("NVGO_LIBCUDA", buildFakeCUDA(t))
	t.Setenv("FAKECUDA_UUIDS", rawUUIDs(fleet))
	ctx := context.Background()

	// The fake reverses PCI order under FASTEST_FIRST, as a mixed box might.
	devs, err := lib.CUDADevicesFromDriver(ctx, nvgo.VisibleDevices("0,1"))
	must(t, err)
	if got := cudaIndices(devs); !slices.Equal(got, []string{"7", "6"}) {
		t.Errorf("FASTEST_FIRST 0,1 = %v, want [7 6] from the driver", got)
	}
	devs, err = lib.CUDADevicesFromDriver(ctx, nvgo.CUDAEnv{Visible: "0,1", VisibleSet: true, Order: nvgo.OrderPCIBusID})
	must(t, err)
	if got := cudaIndices(devs); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("PCI_BUS_ID 0,1 = %v, want [0 1]", got)
	}
	// Remembered: a changed driver answer is not asked for again.
	t.Setenv("FAKECUDA_INIT", "999")
	if _, err := lib.CUDADevicesFromDriver(ctx, nvgo.VisibleDevices("0,1")); err != nil {
		t.Errorf("second identical question asked the driver again: %v", err)
	}
	if _, err := lib.CUDADevicesFromDriver(ctx, nvgo.VisibleDevices("2")); err == nil {
		t.Errorf("a new question with cuInit failing: no error")
	}
}

func TestCudaDevicesFromDriverWithoutLibCUDA(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100")
	t.Setenv("NVGO_LIBCUDA", filepath.Join(t.TempDir(), "no-such-libcuda.so"))
	_, err := lib.CUDADevicesFromDriver(context.Background(), nvgo.CUDAEnv{})
	if !errors.Is(err, nvgo.ErrNoCUDADriver) {
		t.Errorf("err = %v, want ErrNoCUDADriver", err)
	}
}

func TestProcessCUDAEnv(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES=GPU-abc,1", "CUDA_DEVICE_ORDER=PCI_BUS_ID")
	must(t, cmd.Start())
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Start returns once execve is past its point of no return; the kernel
	// fills in the new environment a moment later.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid)); err != nil || len(b) > 0 {
			break
		}
	}
	env, err := nvgo.ProcessCUDAEnv(cmd.Process.Pid)
	must(t, err)
	if env != (nvgo.CUDAEnv{Visible: "GPU-abc,1", VisibleSet: true, Order: nvgo.OrderPCIBusID}) {
		t.Errorf("ProcessCUDAEnv = %+v", env)
	}
	if _, err := nvgo.ProcessCUDAEnv(1 << 30); !errors.Is(err, nvgo.ErrProcessGone) {
		t.Errorf("no such process: %v, want ErrProcessGone", err)
	}
}

// BenchmarkCudaDevices is one resolution on a DGX H100: microseconds, where
// asking CUDA costs a process and cuInit.
func BenchmarkCudaDevices(b *testing.B) {
	lib, fleet := benchFleet(b)
	env := nvgo.VisibleDevices("3,1,6")
	env.Order = nvgo.OrderPCIBusID
	if _, err := lib.CUDADevices(env); err != nil {
		b.Fatal(err)
	}
	fleet.ResetCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := lib.CUDADevices(env); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(fleet.TotalCalls())/float64(b.N)/float64(fleet.Count()), "calls/gpu")
}

// BenchmarkSelectDevices is a selection over 8 GPUs with memory and
// utilization constraints (each device read fresh).
func BenchmarkSelectDevices(b *testing.B) {
	lib, fleet := benchFleet(b)
	ctx := context.Background()
	opts := []nvgo.SelectOption{nvgo.WithCount(2), nvgo.WithMinFreeMemory(10 << 30), nvgo.WithMaxGPUUtilization(50)}
	if _, err := lib.SelectDevices(ctx, opts...); err != nil && !errors.Is(err, nvgo.ErrTooFewDevices) {
		b.Fatal(err)
	}
	fleet.ResetCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := lib.SelectDevices(ctx, opts...); err != nil && !errors.Is(err, nvgo.ErrTooFewDevices) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(fleet.TotalCalls())/float64(b.N)/float64(fleet.Count()), "calls/gpu")
}
