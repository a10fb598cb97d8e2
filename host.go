package nvgo

import (
	"context"
	"os"
	"runtime"
	"time"
)

// ReadHost reads the host's CPU, memory, swap, load and uptime. It never
// fails as a whole: each metric that cannot be read is N/A with the reason.
//
// CPUPercent is measured from the previous ReadHost call in this process to
// this one (the first call gives the average since boot), so call ReadHost
// at the interval you want to measure over. ReadHost is safe for concurrent
// use, but concurrent callers share, and so shorten, each other's intervals.
func ReadHost(ctx context.Context) HostStats {
	s := HostStats{Timestamp: time.Now()}
	s.Hostname = hostNAOr(HostName())
	readHostCPU(ctx, &s)
	if s.CPUCount <= 0 {
		s.CPUCount = runtime.NumCPU()
	}
	readHostLoad(ctx, &s)
	readHostMemory(ctx, &s)
	readHostSwapAndUptime(ctx, &s)
	return s
}

// HostCPUCount returns the number of logical CPUs on the host. Unlike
// runtime.NumCPU it counts CPUs this process may not run on; it falls back
// to runtime.NumCPU when the host's count cannot be read.
func HostCPUCount() int {
	if n, err := hostCPUCount(); err == nil && n > 0 {
		return n
	}
	return runtime.NumCPU()
}

// HostName returns the host's name.
func HostName() (string, error) { return os.Hostname() }
