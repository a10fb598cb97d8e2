//go:build cgo

package nvgo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// benchFleet is a fake DGX H100 with 16 processes on each of its 8 GPUs,
// their PIDs above Linux's PID_MAX_LIMIT: no host process answers for them.
func benchFleet(b *testing.B) (*nvgo.Library, *fakegpu.Fleet) {
	lib, fleet := openFleet(b, "dgx-h100")
	idle(fleet)
	for i := 0; i < fleet.Count(); i++ {
		g := fleet.GPU(i)
		g.SetNVLink(18, 1<<30, 1<<30)
		for j := 0; j < 16; j++ {
			typ := "C"
			if j%8 == 7 {
				typ = "C+G"
			}
			must(b, g.StartProcess(fakegpu.Process{PID: uint32(4_400_000 + 100*i + j), Type: typ, UsedMemory: uint64(j+1) * 256 * miB, SM: uint32(5 * j), Mem: uint32(j)}))
		}
	}
	return lib, fleet
}

// BenchmarkSnapshot measures a fresh snapshot of every GPU and its processes:
// every dynamic value re-read, only static values cached. calls/gpu counts
// the NVML calls one snapshot makes per GPU (after a warm-up that reads the
// static values once).
func BenchmarkSnapshot(b *testing.B) {
	for _, bc := range []struct {
		name   string
		fields nvgo.Fields
	}{
		{"all-fields", nvgo.FieldsAll},
		// what nvitop's take_snapshots covers: everything but BAR1 and NVLink
		{"nvitop-fields", nvgo.FieldsAll &^ (nvgo.FieldBAR1 | nvgo.FieldNVLink)},
		{"status-fields", nvgo.FieldsStatus},
		{"devices-only", nvgo.FieldsAll &^ nvgo.FieldProcesses},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lib, fleet := benchFleet(b)
			ctx := context.Background()
			if _, err := lib.Snapshot(ctx, nvgo.WithFields(bc.fields)); err != nil {
				b.Fatal(err)
			}
			fleet.ResetCalls()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := lib.Snapshot(ctx, nvgo.WithFields(bc.fields)); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(fleet.TotalCalls())/float64(b.N)/float64(fleet.Count()), "calls/gpu")
		})
	}
}

// BenchmarkVgpuSnapshot measures a snapshot of the vGPU instances of a fake
// vGPU host (vgpu-h100: every GPU a host, 4 instances on GPU 0, 2 on GPU 1,
// none on GPUs 2-7). device-calls counts one snapshot's NVML calls on the
// GPUs (3 per host with instances: the listing and the two sample reads; 1
// per host running none), calls/instance those on each instance.
func BenchmarkVgpuSnapshot(b *testing.B) {
	lib, fleet := openFleet(b, "vgpu-h100")
	ctx := context.Background()
	opt := nvgo.WithFields(nvgo.FieldVgpuInstances)
	first, err := lib.Snapshot(ctx, opt)
	if err != nil {
		b.Fatal(err)
	}
	instances := 0
	for _, d := range first.Devices {
		instances += len(d.VgpuInstances)
	}
	if instances == 0 {
		b.Fatal("the fleet runs no vGPU instance")
	}
	fleet.ResetCalls()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := lib.Snapshot(ctx, opt); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perHost, perInstance := 0, 0
	for name, n := range fleet.Calls() {
		if strings.HasPrefix(name, "VgpuInstance.") || strings.HasPrefix(name, "VgpuTypeId.") {
			perInstance += n
		} else {
			perHost += n
		}
	}
	b.ReportMetric(float64(perHost)/float64(b.N), "device-calls")
	b.ReportMetric(float64(perInstance)/float64(b.N)/float64(instances), "calls/instance")
}
