package nvgo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// On Linux, ReadHost reads the CPUs, the load, the swap and the uptime
// through nvgo's procfs reader and sysinfo(2): /proc/stat once for both the
// CPU times and the CPU count, /proc/loadavg, and one system call for swap
// and uptime. (gopsutil, which it used before, read /proc/cpuinfo for the
// count alone, a file the kernel builds from every CPU's state and that
// grows with the CPUs, and /proc/vmstat for swap figures nvgo does not
// show.) Memory still comes from gopsutil's reading of /proc/meminfo, whose
// "used" nvgo reports.

// maxProcStatSize bounds the buffer /proc/stat is read into; it grows with
// the CPUs and interrupts (a few hundred KiB on the largest hosts).
const maxProcStatSize = 4 << 20

// procStatBuf is the buffer /proc/stat is read into, kept between
// readings.
var procStatBuf struct {
	sync.Mutex
	b []byte
}

// readHostProcStat reads the aggregate CPU times and the CPU count from
// /proc/stat.
func readHostProcStat() (hostCPUTimes, error) {
	procStatBuf.Lock()
	defer procStatBuf.Unlock()
	if procStatBuf.b == nil {
		procStatBuf.b = make([]byte, 16<<10)
	}
	for {
		b, err := readProcFile(procStatBuf.b, 0, "stat")
		if errors.Is(err, syscall.EFBIG) && len(procStatBuf.b) < maxProcStatSize {
			procStatBuf.b = make([]byte, 2*len(procStatBuf.b))
			continue
		}
		if err != nil {
			return hostCPUTimes{}, err
		}
		return parseProcStatCPU(b)
	}
}

// parseProcStatCPU reads /proc/stat's aggregate "cpu" line and counts its
// "cpuN" lines, one per online CPU.
func parseProcStatCPU(b []byte) (hostCPUTimes, error) {
	var t hostCPUTimes
	seen := false
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		rest, ok := bytes.CutPrefix(line, []byte("cpu"))
		if !ok {
			continue
		}
		if len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
			t.cpus++
			continue
		}
		if len(rest) == 0 || rest[0] != ' ' || seen {
			continue
		}
		// user nice system idle iowait irq softirq steal (guest and
		// guest_nice are counted in user and nice already), in clock ticks.
		var v [8]uint64
		f := bytes.Fields(rest)
		if len(f) < 4 {
			return hostCPUTimes{}, fmt.Errorf("parse /proc/stat: %d CPU times in %q, want at least 4", len(f), line)
		}
		for i := 0; i < len(v) && i < len(f); i++ {
			n, err := parseUDec(f[i])
			if err != nil {
				return hostCPUTimes{}, fmt.Errorf("parse /proc/stat: %q: %w", line, err)
			}
			v[i] = n
		}
		for _, n := range v {
			t.total += float64(n)
		}
		t.busy = max(t.total-float64(v[3])-float64(v[4]), 0)
		seen = true
	}
	if !seen {
		return hostCPUTimes{}, errors.New("parse /proc/stat: no aggregate cpu line")
	}
	return t, nil
}

// hostCPUCount is the number of online CPUs from /proc/stat.
func hostCPUCount() (int, error) {
	t, err := readHostProcStat()
	return t.cpus, err
}

// readHostCPU fills the CPU count and the CPU percent since the previous
// call.
func readHostCPU(_ context.Context, s *HostStats) {
	t, err := readHostProcStat()
	s.CPUCount = t.cpus
	if err != nil {
		s.CPUPercent = hostNA[Percent](err)
		return
	}
	s.CPUPercent = hostCPUPercent(t)
}

// readHostLoad fills the load averages from /proc/loadavg.
func readHostLoad(_ context.Context, s *HostStats) {
	var buf [128]byte
	b, err := readProcFile(buf[:], 0, "loadavg")
	var l [3]float64
	if err == nil {
		l, err = parseLoadAvg(b)
	}
	if err != nil {
		s.Load1, s.Load5, s.Load15 = hostNA[float64](err), hostNA[float64](err), hostNA[float64](err)
		return
	}
	s.Load1, s.Load5, s.Load15 = Some(l[0]), Some(l[1]), Some(l[2])
}

// parseLoadAvg reads the three load averages at the start of
// /proc/loadavg ("0.52 0.58 0.59 1/234 5678").
func parseLoadAvg(b []byte) ([3]float64, error) {
	var l [3]float64
	f := bytes.Fields(b)
	if len(f) < 3 {
		return l, fmt.Errorf("parse /proc/loadavg: %q", b)
	}
	for i := range l {
		v, err := strconv.ParseFloat(string(f[i]), 64)
		if err != nil || v < 0 || v != v || v > 1e9 {
			return [3]float64{}, fmt.Errorf("parse /proc/loadavg: %q", b)
		}
		l[i] = v
	}
	return l, nil
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
