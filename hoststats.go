package nvgo

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"sync"
	"time"
)

// HostStats is a snapshot of the host machine: plain data that never reads
// the system again. Each metric that could not be read is N/A with the
// reason (JSON null).
type HostStats struct {
	// Timestamp is when ReadHost began.
	Timestamp time.Time `json:"timestamp"`
	// Hostname is the host's name.
	Hostname Value[string] `json:"hostname"`
	// CPUCount is the number of logical CPUs on the host (not only those
	// this process may run on).
	CPUCount int `json:"cpu_count"`
	// CPUPercent is how busy the host's CPUs were, over all of them (100 =
	// all busy), since the previous ReadHost call in this process; the first
	// call gives the average since boot.
	CPUPercent Value[Percent] `json:"cpu_percent"`
	// Load1, Load5 and Load15 are the load averages over 1, 5 and 15 minutes.
	Load1  Value[float64] `json:"load1"`
	Load5  Value[float64] `json:"load5"`
	Load15 Value[float64] `json:"load15"`
	// MemoryTotal is the physical memory.
	MemoryTotal Value[Bytes] `json:"memory_total"`
	// MemoryUsed is the memory in use: total − free − buffers − page cache.
	MemoryUsed Value[Bytes] `json:"memory_used"`
	// MemoryAvailable is the memory that can be given to programs without
	// swapping (MemAvailable).
	MemoryAvailable Value[Bytes] `json:"memory_available"`
	// MemoryPercent is (total − available) / total, as psutil and nvitop give it.
	MemoryPercent Value[Percent] `json:"memory_percent"`
	// SwapTotal and SwapUsed are the swap space and the part in use.
	SwapTotal Value[Bytes] `json:"swap_total"`
	SwapUsed  Value[Bytes] `json:"swap_used"`
	// SwapPercent is SwapUsed / SwapTotal, and 0 without swap.
	SwapPercent Value[Percent] `json:"swap_percent"`
	// Uptime is the time since boot (nanoseconds in JSON).
	Uptime Value[time.Duration] `json:"uptime"`
}

// String is the snapshot on one labelled line, e.g. "host gpu01: 64 CPUs
// 12.5%, load 3.10 2.80 2.50, memory 120.3GiB / 503.5GiB (23.9%), swap
// 0B / 0B (0%), up 291h4m0s"; N/A figures print N/A.
func (s HostStats) String() string {
	load := func(v Value[float64]) string {
		if l, ok := v.Get(); ok {
			return strconv.FormatFloat(l, 'f', 2, 64)
		}
		return "N/A"
	}
	up := "N/A"
	if d, ok := s.Uptime.Get(); ok {
		up = d.Truncate(time.Second).String()
	}
	return fmt.Sprintf("host %s: %d CPUs %v, load %s %s %s, memory %v / %v (%v), swap %v / %v (%v), up %s",
		s.Hostname, s.CPUCount, s.CPUPercent, load(s.Load1), load(s.Load5), load(s.Load15),
		s.MemoryUsed, s.MemoryTotal, s.MemoryPercent, s.SwapUsed, s.SwapTotal, s.SwapPercent, up)
}

// setMemory fills the memory figures, or makes them N/A because of err.
func setMemory(s *HostStats, total, used, available uint64, err error) {
	if err != nil {
		s.MemoryTotal, s.MemoryUsed, s.MemoryAvailable = hostNA[Bytes](err), hostNA[Bytes](err), hostNA[Bytes](err)
		s.MemoryPercent = hostNA[Percent](err)
		return
	}
	s.MemoryTotal, s.MemoryUsed, s.MemoryAvailable = Some(Bytes(total)), Some(Bytes(used)), Some(Bytes(available))
	s.MemoryPercent = hostPercentOf(total-min(available, total), total)
}

// setSwap fills the swap figures; a host without swap uses 0% of it.
func setSwap(s *HostStats, total, used uint64) {
	s.SwapTotal, s.SwapUsed = Some(Bytes(total)), Some(Bytes(used))
	s.SwapPercent = Some(Percent(0))
	if total > 0 {
		s.SwapPercent = hostPercentOf(used, total)
	}
}

// hostNAOr is v, or N/A because of err.
func hostNAOr[T any](v T, err error) Value[T] {
	if err != nil {
		return hostNA[T](err)
	}
	return Some(v)
}

// hostNA returns an N/A host metric for err, with reason NoPermission for a
// permission error and Failed otherwise.
func hostNA[T any](err error) Value[T] {
	if errors.Is(err, fs.ErrPermission) {
		err = fmt.Errorf("%w: %w", ErrNoPermission, err)
	}
	return NA[T](ReasonOf(err), err)
}

func hostPercentOf(part, total uint64) Value[Percent] {
	if total == 0 {
		return NA[Percent](NotReported, errors.New("total is 0"))
	}
	return Some(Percent(float64(part) / float64(total) * 100))
}

// hostCPU holds the host's CPU times at the previous ReadHost call.
var hostCPU struct {
	sync.Mutex
	busy, total float64 // zero before the first call
}

// hostCPUPercent returns the host's CPU use since the previous call, over all
// CPUs, from the busy and total CPU times (in any one unit). Busy time is
// all but idle and iowait, as psutil counts it.
func hostCPUPercent(busy, total float64) Value[Percent] {
	hostCPU.Lock()
	defer hostCPU.Unlock()
	dBusy, dTotal := busy-hostCPU.busy, total-hostCPU.total
	if dTotal <= 0 {
		// Called again within the same clock tick: nothing to measure yet;
		// keep the previous reading as the start of the interval.
		return Some(Percent(0))
	}
	hostCPU.busy, hostCPU.total = busy, total
	return Some(Percent(min(max(dBusy/dTotal*100, 0), 100)))
}
