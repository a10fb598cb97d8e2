package nvgo

import (
	"testing"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// NVML's "value not available" in an accounting record is N/A, never a
// percentage of 4294967295.
func TestAccountingUtilizationNotAvailableIsNA(t *testing.T) {
	a := accountingOf(42, nvmlx.AccountingStats{GPUUtilization: ^uint32(0), MemoryUtilization: 7, MaxMemoryUsage: nvmlx.NotAvailable, IsRunning: true})
	if !a.GPUUtilization.IsNA() || a.GPUUtilization.Reason() != NotReported {
		t.Errorf("GPUUtilization = %v (%v); want N/A, not reported", a.GPUUtilization, a.GPUUtilization.Reason())
	}
	if a.MemoryUtilization != Some(Percent(7)) || !a.MaxMemory.IsNA() || !a.RunningTime.IsNA() {
		t.Errorf("record %+v: want 7%% memory, N/A maximum memory and running time", a)
	}
}
