//go:build !linux

package nvgo

import (
	"context"
	"errors"
	"time"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/host"
	"github.com/shirou/gopsutil/v3/load"
	"github.com/shirou/gopsutil/v3/mem"
)

// Elsewhere than Linux, ReadHost reads the CPUs, the load, the swap and the
// uptime through gopsutil.

// hostCPUCount is the number of logical CPUs.
func hostCPUCount() (int, error) { return cpu.Counts(true) }

// readHostCPU fills the CPU count and the CPU percent since the previous
// call.
func readHostCPU(ctx context.Context, s *HostStats) {
	s.CPUCount, _ = cpu.CountsWithContext(ctx, true)
	ts, err := cpu.TimesWithContext(ctx, false)
	switch {
	case err != nil:
		s.CPUPercent = hostNA[Percent](err)
	case len(ts) == 0:
		s.CPUPercent = NA[Percent](NotReported, errors.New("no CPU times"))
	default:
		t := ts[0]
		total := t.User + t.Nice + t.System + t.Idle + t.Iowait + t.Irq + t.Softirq + t.Steal
		s.CPUPercent = hostCPUPercent(total-t.Idle-t.Iowait, total)
	}
}

// readHostLoad fills the load averages.
func readHostLoad(ctx context.Context, s *HostStats) {
	avg, err := load.AvgWithContext(ctx)
	if err != nil {
		s.Load1, s.Load5, s.Load15 = hostNA[float64](err), hostNA[float64](err), hostNA[float64](err)
		return
	}
	s.Load1, s.Load5, s.Load15 = Some(avg.Load1), Some(avg.Load5), Some(avg.Load15)
}

// readHostMemory fills the memory figures.
func readHostMemory(ctx context.Context, s *HostStats) {
	vm, err := mem.VirtualMemoryWithContext(ctx)
	if err != nil {
		setMemory(s, 0, 0, 0, err)
		return
	}
	setMemory(s, vm.Total, vm.Used, vm.Available, nil)
}

// readHostSwapAndUptime fills swap and uptime.
func readHostSwapAndUptime(ctx context.Context, s *HostStats) {
	if sw, err := mem.SwapMemoryWithContext(ctx); err != nil {
		s.SwapTotal, s.SwapUsed, s.SwapPercent = hostNA[Bytes](err), hostNA[Bytes](err), hostNA[Percent](err)
	} else {
		setSwap(s, sw.Total, sw.Used)
	}
	if up, err := host.UptimeWithContext(ctx); err != nil {
		s.Uptime = hostNA[time.Duration](err)
	} else {
		s.Uptime = Some(time.Duration(up) * time.Second)
	}
}
