package nvgo

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/shirou/gopsutil/v3/cpu"
	"github.com/shirou/gopsutil/v3/mem"
)

func TestParseProcStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    hostCPUTimes
		wantErr bool
	}{
		{"a current kernel", "cpu  100 2 30 500 8 0 4 6 10 0\ncpu0 50 1 15 250 4 0 2 3 5 0\ncpu1 50 1 15 250 4 0 2 3 5 0\nintr 12345 1 2\nctxt 99\nbtime 1700000000\n",
			hostCPUTimes{busy: 142, total: 650, cpus: 2}, false},
		{"a 2.4 kernel's four times", "cpu 10 0 10 80\ncpu0 10 0 10 80\n", hostCPUTimes{busy: 20, total: 100, cpus: 1}, false},
		{"guest time is not counted twice", "cpu 100 0 0 100 0 0 0 0 100 100\n", hostCPUTimes{busy: 100, total: 200}, false},
		{"no trailing newline", "cpu 1 0 1 2 0 0 0 0\ncpu0 1 0 1 2 0 0 0 0", hostCPUTimes{busy: 2, total: 4, cpus: 1}, false},
		{"no aggregate line", "cpu0 1 2 3 4\nintr 1\n", hostCPUTimes{}, true},
		{"too few times", "cpu 1 2 3\n", hostCPUTimes{}, true},
		{"a number that is not one", "cpu 1 2 x 4\n", hostCPUTimes{}, true},
		{"empty", "", hostCPUTimes{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcStatCPU([]byte(tt.in))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseProcStatCPU = %+v, %v; want %+v (error %v)", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzParseProcStatCPU(f *testing.F) {
	f.Add([]byte("cpu  100 2 30 500 8 0 4 6 10 0\ncpu0 50 1 15 250 4 0 2 3 5 0\n"))
	f.Add([]byte("cpu 18446744073709551615 0 0 0\n"))
	f.Add([]byte("cpu\ncpu \ncpu9"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := parseProcStatCPU(b)
		if err != nil {
			return
		}
		if got.cpus < 0 || got.total < 0 || got.busy < 0 || got.busy > got.total || math.IsNaN(got.total) {
			t.Errorf("parseProcStatCPU(%q) = %+v", b, got)
		}
	})
}

func TestParseLoadAvg(t *testing.T) {
	tests := []struct {
		in      string
		want    [3]float64
		wantErr bool
	}{
		{"0.52 0.58 0.59 1/234 5678\n", [3]float64{0.52, 0.58, 0.59}, false},
		{"12.00 8.5 3", [3]float64{12, 8.5, 3}, false},
		{"0.52 0.58", [3]float64{}, true},
		{"0.52 -1 0.59 1/2 3", [3]float64{}, true},
		{"NaN 1 1 1/2 3", [3]float64{}, true},
		{"", [3]float64{}, true},
	}
	for _, tt := range tests {
		got, err := parseLoadAvg([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseLoadAvg(%q) = %v, %v; want %v (error %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseLoadAvg(f *testing.F) {
	f.Add([]byte("0.52 0.58 0.59 1/234 5678\n"))
	f.Add([]byte("1e308 Inf 0x1p3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLoadAvg(b)
		if err != nil {
			return
		}
		for _, v := range l {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("parseLoadAvg(%q) = %v", b, l)
			}
		}
	})
}

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
}
