package nvgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestReadHost(t *testing.T) {
	before := time.Now()
	s := ReadHost(context.Background())

	if s.Timestamp.Before(before) || s.Timestamp.After(time.Now()) {
		t.Errorf("Timestamp = %v, want the time of the call", s.Timestamp)
	}
	if s.CPUCount <= 0 {
		t.Errorf("CPUCount = %d, want > 0", s.CPUCount)
	}
	if s.Hostname.Or("") == "" {
		t.Errorf("Hostname = %v", s.Hostname)
	}
	total, ok := s.MemoryTotal.Get()
	if !ok || total < 16<<20 {
		t.Fatalf("MemoryTotal = %v, want a real amount", s.MemoryTotal)
	}
	for name, v := range map[string]Value[Bytes]{"MemoryUsed": s.MemoryUsed, "MemoryAvailable": s.MemoryAvailable} {
		if b, ok := v.Get(); !ok || b > total {
			t.Errorf("%s = %v, want at most MemoryTotal %v", name, v, total)
		}
	}
	for name, v := range map[string]Value[Percent]{"CPUPercent": s.CPUPercent, "MemoryPercent": s.MemoryPercent, "SwapPercent": s.SwapPercent} {
		if p, ok := v.Get(); !ok || p < 0 || p > 100 {
			t.Errorf("%s = %v (%v), want in [0, 100]", name, v, v.Err())
		}
	}
	if l, ok := s.Load1.Get(); !ok || l < 0 {
		t.Errorf("Load1 = %v (%v), want >= 0", s.Load1, s.Load1.Err())
	}
	if up, ok := s.Uptime.Get(); !ok || up <= 0 {
		t.Errorf("Uptime = %v (%v), want > 0", s.Uptime, s.Uptime.Err())
	}

	b, err := json.Marshal(s)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	for _, key := range []string{`"timestamp":`, `"hostname":`, `"cpu_count":`, `"cpu_percent":`, `"load1":`, `"memory_total":`, `"swap_percent":`, `"uptime":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
	var back HostStats
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("json.Unmarshal: %v", err)
	}
	if back.MemoryTotal != s.MemoryTotal || back.CPUCount != s.CPUCount {
		t.Errorf("JSON round trip gave %+v, want %+v", back, s)
	}
}

func TestReadHostCPUPercentIsSinceThePreviousCall(t *testing.T) {
	ReadHost(context.Background())
	time.Sleep(100 * time.Millisecond)
	s := ReadHost(context.Background())
	if p, ok := s.CPUPercent.Get(); !ok || p < 0 || p > 100 {
		t.Errorf("CPUPercent = %v (%v), want in [0, 100]", s.CPUPercent, s.CPUPercent.Err())
	}
}

func TestHostCPUCountAndName(t *testing.T) {
	if n := HostCPUCount(); n <= 0 {
		t.Errorf("HostCPUCount() = %d, want > 0", n)
	}
	if name, err := HostName(); err != nil || name == "" {
		t.Errorf("HostName() = %q, %v; want a name", name, err)
	}
}

// A HostStats prints labelled, with N/A where a figure is missing (it
// printed as an unlabelled struct).
func TestHostStatsString(t *testing.T) {
	gib := Bytes(1 << 30)
	full := HostStats{
		Hostname: Some("gpu01"), CPUCount: 64, CPUPercent: Some(Percent(12.5)),
		Load1: Some(3.1), Load5: Some(2.8), Load15: Some(2.5),
		MemoryTotal: Some(512 * gib), MemoryUsed: Some(120 * gib), MemoryPercent: Some(Percent(23.4)),
		SwapTotal: Some(Bytes(0)), SwapUsed: Some(Bytes(0)), SwapPercent: Some(Percent(0)),
		Uptime: Some(12*24*time.Hour + 3*time.Hour + 4*time.Minute + 500*time.Millisecond),
	}
	na := NA[Bytes](Failed, errors.New("no /proc"))
	missing := full
	missing.Hostname = NA[string](Failed, errors.New("no name"))
	missing.MemoryUsed, missing.MemoryTotal = na, na
	missing.Load5 = NA[float64](Failed, errors.New("no loadavg"))
	missing.Uptime = NA[time.Duration](Failed, errors.New("no uptime"))
	for _, tt := range []struct {
		name string
		s    HostStats
		want string
	}{
		{"full", full, "host gpu01: 64 CPUs 12.5%, load 3.10 2.80 2.50, memory 120.0GiB / 512.0GiB (23.4%), swap 0B / 0B (0%), up 291h4m0s"},
		{"N/A", missing, "host N/A: 64 CPUs 12.5%, load 3.10 N/A 2.50, memory N/A / N/A (23.4%), swap 0B / 0B (0%), up N/A"},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		if got := fmt.Sprint(tt.s); got != tt.want {
			t.Errorf("%s: fmt.Sprint gives %s", tt.name, got)
		}
	}
}
