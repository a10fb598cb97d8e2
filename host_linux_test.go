package nvgo

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/mem"
)

// The figures read through procfs and sysinfo are those gopsutil reads
// (which ReadHost used before): the same CPU count, the same swap total.
func TestReadHostAgreesWithGopsutil(t *testing.T) {
	n, err := cpu.Counts(true)
	if err != nil {
		t.Skipf("gopsutil cannot count the CPUs here: %v", err)
	}
	if got := HostCPUCount(); got != n || got < runtime.NumCPU() {
		t.Errorf("HostCPUCount() = %d; gopsutil counts %d, and this process may run on %d", got, n, runtime.NumCPU())
	}
	s := ReadHost(context.Background())
	sw, err := mem.SwapMemory()
	if err != nil {
		t.Skipf("gopsutil cannot read swap here: %v", err)
	}
	if total, ok := s.SwapTotal.Get(); !ok || uint64(total) != sw.Total {
		t.Errorf("SwapTotal = %v (%v); gopsutil reads %d", s.SwapTotal, s.SwapTotal.Err(), sw.Total)
	}
	vm, err := mem.VirtualMemory()
	if err != nil {
		t.Skipf("gopsutil cannot read memory here: %v", err)
	}
	if total, ok := s.MemoryTotal.Get(); !ok || uint64(total) != vm.Total {
		t.Errorf("MemoryTotal = %v (%v); gopsutil reads %d", s.MemoryTotal, s.MemoryTotal.Err(), vm.Total)
	}
	// Used moves between the two readings; within 64 MiB they agree.
	if used, ok := s.MemoryUsed.Get(); !ok || math.Abs(float64(used)-float64(vm.Used)) > 64<<20 {
		t.Errorf("MemoryUsed = %v (%v); gopsutil reads %d", s.MemoryUsed, s.MemoryUsed.Err(), vm.Used)
	}
}
