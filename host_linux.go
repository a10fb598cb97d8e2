package nvgo

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/nvgo/nvgo/internal/procfs"
)

// On Linux, ReadHost reads the CPUs, the load and the memory through
// nvgo's procfs reader (internal/procfs: /proc/stat once for both the CPU
// times and the CPU count, /proc/loadavg, /proc/meminfo), and swap and
// uptime with one sysinfo(2) call.

// procStatBuf is the buffer /proc/stat is read into, kept between
// readings (the file grows with the CPUs and interrupts).
var procStatBuf struct {
	sync.Mutex
	b []byte
}

// readHostProcStat reads the aggregate CPU times and the CPU count.
func readHostProcStat() (procfs.CPUTimes, error) {
	procStatBuf.Lock()
	defer procStatBuf.Unlock()
	return procfs.FS{}.CPUTimes(&procStatBuf.b)
}

// hostCPUCount is the number of online CPUs from /proc/stat.
func hostCPUCount() (int, error) {
	t, err := readHostProcStat()
	return t.CPUs, err
}

// readHostCPU fills the CPU count and the CPU percent since the previous
// call.
func readHostCPU(_ context.Context, s *HostStats) {
	t, err := readHostProcStat()
	s.CPUCount = t.CPUs
	if err != nil {
		s.CPUPercent = hostNA[Percent](err)
		return
	}
	s.CPUPercent = hostCPUPercent(t.Busy, t.Total)
}

// readHostLoad fills the load averages.
func readHostLoad(_ context.Context, s *HostStats) {
	l, err := procfs.FS{}.LoadAvg()
	if err != nil {
		s.Load1, s.Load5, s.Load15 = hostNA[float64](err), hostNA[float64](err), hostNA[float64](err)
		return
	}
	s.Load1, s.Load5, s.Load15 = Some(l[0]), Some(l[1]), Some(l[2])
}

// readHostMemory fills the memory figures from /proc/meminfo.
func readHostMemory(_ context.Context, s *HostStats) {
	m, err := procfs.FS{}.MemInfo()
	setMemory(s, m.Total, m.Used(), m.Available, err)
}

// readHostSwapAndUptime fills swap and uptime from sysinfo(2).
func readHostSwapAndUptime(_ context.Context, s *HostStats) {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		err = fmt.Errorf("sysinfo: %w", err)
		s.SwapTotal, s.SwapUsed, s.SwapPercent = hostNA[Bytes](err), hostNA[Bytes](err), hostNA[Percent](err)
		s.Uptime = hostNA[time.Duration](err)
		return
	}
	unit := max(uint64(si.Unit), 1)
	total, free := uint64(si.Totalswap)*unit, uint64(si.Freeswap)*unit
	setSwap(s, total, total-min(free, total))
	s.Uptime = Some(time.Duration(si.Uptime) * time.Second)
}
