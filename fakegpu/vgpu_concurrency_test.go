//go:build cgo

package fakegpu_test

import (
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// TestConcurrentVgpuReadersAndWriters is meant for -race: goroutines poll
// the vGPU instances the way a monitor does while others create, change
// and destroy them.
func TestConcurrentVgpuReadersAndWriters(t *testing.T) {
	f := preset(t, "vgpu-h100")
	const rounds = 200
	var readers, writers sync.WaitGroup
	stop := make(chan struct{})

	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var cursor, pcursor [8]uint64
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < f.Count(); i++ {
					d, _ := f.DeviceGetHandleByIndex(i)
					d.GetVirtualizationMode()
					list, _ := d.GetActiveVgpus()
					for _, h := range list {
						h.GetFbUsage()
						h.GetLicenseInfo()
						h.GetVmID()
						h.GetAccountingPids()
						h.GetAccountingStats(4120)
						h.(placementIDer).GetPlacementId()
						if typ, ret := h.GetType(); ret == nvml.SUCCESS {
							typ.GetName()
							typ.GetMaxInstances(d)
						}
					}
					if _, s, ret := d.GetVgpuUtilization(cursor[i]); ret == nvml.SUCCESS {
						for _, x := range s {
							cursor[i] = max(cursor[i], x.TimeStamp)
						}
					}
					if s, ret := d.GetVgpuProcessUtilization(pcursor[i]); ret == nvml.SUCCESS {
						for _, x := range s {
							pcursor[i] = max(pcursor[i], x.TimeStamp)
						}
					}
				}
				f.Calls()
			}
		}()
	}
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			g := f.GPU(2 + w) // a host without instances of its own
			for i := 0; i < rounds; i++ {
				v, err := g.AddVgpu(fakegpu.VgpuSpec{Type: "NVIDIA H100-10C", Accounting: i%2 == 0})
				if err != nil {
					t.Error(err)
					return
				}
				pid := uint32(100 + i)
				v.StartProcess(fakegpu.VgpuProcess{PID: pid, SM: 10})
				v.SetUtilization(uint32(i%100), 5, 0, 0)
				v.SetProcessUtilization(pid, 20, 5, 0, 0)
				v.SetFBUsed(uint64(i) * fakegpu.MiB)
				v.SetLicense(i%3 == 0, time.Time{})
				v.Fail("GetFbUsage", nvml.ERROR_TIMEOUT)
				v.ClearFail("GetFbUsage")
				v.SetAccountingMode(i%2 == 1)
				shared := f.GPU(w % 2).Vgpus()
				shared[0].SetUtilization(uint32(i%100), 1, 0, 0)
				f.Advance(time.Millisecond)
				v.StopProcess(pid)
				if i%2 == 0 {
					v.DestroyOnCall("GetFbUsage")
				}
				if len(g.Vgpus()) > 4 {
					g.Vgpus()[0].Destroy()
				}
			}
		}(w)
	}
	writers.Wait()
	close(stop)
	readers.Wait()
	if v := f.Violations(); len(v) > 0 {
		t.Errorf("violations: %q", v)
	}
}
