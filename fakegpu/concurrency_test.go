//go:build cgo

package fakegpu_test

import (
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo/fakegpu"
)

// TestConcurrentReadersAndWriters is meant for -race: goroutines poll every
// GPU the way a monitor does while others change the fleet.
func TestConcurrentReadersAndWriters(t *testing.T) {
	f := preset(t, "dgx-h100")
	const rounds = 200
	var readers, writers sync.WaitGroup
	stop := make(chan struct{})

	for r := 0; r < 4; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			var cursor [8]uint64
			fields := []nvml.FieldValue{{FieldId: nvml.FI_DEV_POWER_INSTANT}, {FieldId: nvml.FI_DEV_NVLINK_THROUGHPUT_DATA_TX, ScopeId: 0xFFFFFFFF}}
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, _ := f.DeviceGetCount()
				for i := 0; i < n; i++ {
					d, _ := f.DeviceGetHandleByIndex(i)
					d.GetUtilizationRates()
					d.GetMemoryInfo_v2()
					d.GetComputeRunningProcesses()
					d.GetGraphicsRunningProcesses()
					d.GetFieldValues(fields)
					if s, ret := d.GetProcessUtilization(cursor[i]); ret == nvml.SUCCESS {
						for _, x := range s {
							cursor[i] = max(cursor[i], x.TimeStamp)
						}
					}
					f.DeviceGetTemperature(d, nvml.TEMPERATURE_GPU)
				}
				f.Calls()
			}
		}()
	}
	for w := 0; w < 4; w++ {
		writers.Add(1)
		go func(w int) {
			defer writers.Done()
			for i := 0; i < rounds; i++ {
				g := f.GPU((w + i) % 8)
				g.SetUtilization(uint32(i%100), uint32(w))
				g.SetTemperature(uint32(40 + i%30))
				g.SetPower(uint32(100_000+i), 0)
				pid := uint32(10_000 + w*rounds + i)
				g.StartProcess(fakegpu.Process{PID: pid, UsedMemory: fakegpu.MiB, SM: 10})
				g.SetProcessUtilization(pid, 20, 5, 0, 0)
				g.Fail("temperature", nvml.ERROR_TIMEOUT)
				g.ClearFail("temperature")
				f.Advance(time.Millisecond)
				g.StopProcess(pid)
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
