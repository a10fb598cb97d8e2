//go:build cgo && linux

package nvgo_test

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/nvgotest"
)

// BenchmarkReadHost is one ReadHost, what a monitor or an exporter pays at
// every refresh for the host's figures. Beside it, in the same run, the
// floor: the files and the system call any reader needs (/proc/stat,
// /proc/loadavg, /proc/meminfo, the host name, sysinfo), read raw with
// nothing parsed.
func BenchmarkReadHost(b *testing.B) {
	ctx := context.Background()
	buf := make([]byte, 64<<10)
	read := func(path string) {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer syscall.Close(fd)
		if _, err := syscall.Read(fd, buf); err != nil {
			b.Fatal(err)
		}
	}
	floor := func() {
		read("/proc/stat")
		read("/proc/loadavg")
		read("/proc/meminfo")
		read("/proc/sys/kernel/hostname")
		var si syscall.Sysinfo_t
		if err := syscall.Sysinfo(&si); err != nil {
			b.Fatal(err)
		}
	}
	var floorCPU, cpu time.Duration
	for i := 0; i < b.N; i++ {
		c0 := nvgotest.CPUTime(b)
		floor()
		floorCPU += nvgotest.CPUTime(b) - c0
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0 := nvgotest.CPUTime(b)
		nvgo.ReadHost(ctx)
		cpu += nvgotest.CPUTime(b) - c0
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	n := float64(b.N)
	b.ReportMetric(float64(cpu.Nanoseconds())/1000/n, "cpu-us/op")
	b.ReportMetric(float64(floorCPU.Nanoseconds())/1000/n, "floor-cpu-us/op")
	nvgotest.ReportOverFloor(b, cpu, floorCPU)
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/n, "allocs/read")
}
