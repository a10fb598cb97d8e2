//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

// accountingFleet is two H100s: GPU 0 with accounting on, GPU 1 with it off.
func accountingFleet(t *testing.T) (*nvgo.Library, *fakegpu.Fleet) {
	t.Helper()
	fleet := fakegpu.New(fakegpu.GPUSpec{Accounting: true, AccountingBufferSize: 16}, fakegpu.GPUSpec{})
	return openOn(t, fleet), fleet
}

func acctDevice(t *testing.T, lib *nvgo.Library, i int) *nvgo.Device {
	t.Helper()
	d, err := lib.DeviceByIndex(i)
	must(t, err)
	return d
}

// describeAccounting prints a record with the reasons of its N/A fields, so two
// records compare as strings.
func describeAccounting(v nvgo.Value[nvgo.ProcessAccounting]) string {
	a, ok := v.Get()
	if !ok {
		return "N/A (" + v.Reason().String() + ")"
	}
	na := func(s fmt.Stringer, r nvgo.Reason) string {
		if r != nvgo.Available {
			return "N/A (" + r.String() + ")"
		}
		return s.String()
	}
	return fmt.Sprintf("pid %d gpu %v mem %v max %s time %s start %s running %t",
		a.PID, a.GPUUtilization, a.MemoryUtilization,
		na(a.MaxMemory, a.MaxMemory.Reason()), na(a.RunningTime, a.RunningTime.Reason()),
		a.StartTime.UTC().Format(time.RFC3339Nano), a.Running)
}

func TestProcessAccounting(t *testing.T) {
	lib, fleet := accountingFleet(t)
	g := fleet.GPU(0)
	t0 := fleet.Now()
	must(t, g.StartProcess(fakegpu.Process{PID: 100, SM: 60, Mem: 20, UsedMemory: 2 << 30}))
	fleet.Advance(2 * time.Second)
	g.SetProcessUtilization(100, 20, 10, 0, 0)
	g.SetProcessMemory(100, 1<<30)
	fleet.Advance(2 * time.Second)
	g.StopProcess(100)
	t1 := fleet.Now()
	must(t, g.StartProcess(fakegpu.Process{PID: 200, SM: 50, Mem: 5, UsedMemory: fakegpu.NotAvailable}))
	fleet.Advance(1500 * time.Millisecond)

	start := func(tm time.Time) string { return tm.UTC().Format(time.RFC3339Nano) }
	tests := []struct {
		name   string
		gpu    int
		pid    int
		want   string
		wantIs []error
	}{
		{"an exited process has its lifetime averages and running time", 0, 100,
			"pid 100 gpu 40% mem 15% max 2048MiB time 4s start " + start(t0) + " running false", nil},
		{"a running process has no running time yet", 0, 200,
			"pid 200 gpu 50% mem 5% max N/A (not reported) time N/A (not reported) start " + start(t1) + " running true", nil},
		{"an unknown PID is not reported", 0, 999, "N/A (not reported)", []error{nvgo.ErrNotFound}},
		{"a PID no process can have is not reported", 0, -1, "N/A (not reported)", []error{nvgo.ErrNotFound}},
		{"with accounting off it is not supported", 1, 100, "N/A (not supported)",
			[]error{nvgo.ErrAccountingOff, nvgo.ErrNotSupported}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := acctDevice(t, lib, tt.gpu).ProcessAccounting(tt.pid)
			if got := describeAccounting(v); got != tt.want {
				t.Errorf("ProcessAccounting(%d) = %s\n want %s", tt.pid, got, tt.want)
			}
			for _, target := range tt.wantIs {
				if !errors.Is(v.Err(), target) {
					t.Errorf("error %v does not match %v", v.Err(), target)
				}
			}
		})
	}
}

func TestAccountingFailures(t *testing.T) {
	tests := []struct {
		name   string
		fault  func(g *fakegpu.GPU)
		reason nvgo.Reason
		is     error
		notOff bool // the error must not claim that accounting is off
	}{
		{"no permission", func(g *fakegpu.GPU) { g.Fail("accounting", nvml.ERROR_NO_PERMISSION) }, nvgo.NoPermission, nvgo.ErrNoPermission, true},
		{"a lost GPU", func(g *fakegpu.GPU) { g.Lose() }, nvgo.GPULost, nvgo.ErrGPULost, true},
		{"a GPU without accounting", func(g *fakegpu.GPU) { g.Unsupported("accounting") }, nvgo.NotSupported, nvgo.ErrNotSupported, true},
		{"accounting turned off", func(g *fakegpu.GPU) { g.SetAccountingMode(false) }, nvgo.NotSupported, nvgo.ErrAccountingOff, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, fleet := accountingFleet(t)
			must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: 100}))
			tt.fault(fleet.GPU(0))
			d := acctDevice(t, lib, 0)

			v := d.ProcessAccounting(100)
			if v.Reason() != tt.reason || !errors.Is(v.Err(), tt.is) {
				t.Errorf("ProcessAccounting = %s, %v; want N/A (%s) matching %v", describeAccounting(v), v.Err(), tt.reason, tt.is)
			}
			if tt.notOff && errors.Is(v.Err(), nvgo.ErrAccountingOff) {
				t.Errorf("ProcessAccounting error %v claims accounting is off", v.Err())
			}
			pids, err := d.AccountedPIDs()
			if pids != nil || !errors.Is(err, tt.is) {
				t.Errorf("AccountedPIDs = %v, %v; want an error matching %v", pids, err, tt.is)
			}
			if tt.reason != nvgo.NotSupported || tt.notOff {
				if m := d.AccountingMode(); m.Reason() != tt.reason {
					t.Errorf("AccountingMode = %v (%s), want N/A (%s)", m, m.Reason(), tt.reason)
				}
				if n := d.AccountingBufferSize(); n.Reason() != tt.reason {
					t.Errorf("AccountingBufferSize = %v (%s), want N/A (%s)", n, n.Reason(), tt.reason)
				}
			}
		})
	}
}

func TestAccountingMode(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Accounting: true}, fakegpu.GPUSpec{})
	// A long cache TTL: AccountingMode must not be served from it.
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithCacheTTL(time.Hour))
	must(t, err)
	defer lib.Close()
	gpu0, gpu1 := acctDevice(t, lib, 0), acctDevice(t, lib, 1)

	tests := []struct {
		name string
		do   func()
		want [2]string // AccountingMode of GPU 0 and 1
	}{
		{"each GPU reports its own mode", func() {}, [2]string{"On", "Off"}},
		{"a change shows at once", func() { fleet.GPU(1).SetAccountingMode(true) }, [2]string{"On", "On"}},
		{"SetAccountingMode turns it off", func() { must(t, gpu0.SetAccountingMode(false)) }, [2]string{"Off", "On"}},
		{"and on again", func() { must(t, gpu0.SetAccountingMode(true)) }, [2]string{"On", "On"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.do()
			if got := [2]string{gpu0.AccountingMode().String(), gpu1.AccountingMode().String()}; got != tt.want {
				t.Errorf("AccountingMode = %v, want %v", got, tt.want)
			}
		})
	}
	if n := gpu0.AccountingBufferSize(); n.Or(0) != fakegpu.DefaultAccountingBufferSize {
		t.Errorf("AccountingBufferSize = %v, want %d", n, fakegpu.DefaultAccountingBufferSize)
	}
	if v := fleet.Violations(); len(v) > 0 {
		t.Errorf("calls that would kill a real process: %q", v)
	}
}

func TestSetAccountingModeNeedsPermission(t *testing.T) {
	lib, fleet := accountingFleet(t)
	fleet.GPU(1).Fail("SetAccountingMode", nvml.ERROR_NO_PERMISSION)
	d := acctDevice(t, lib, 1)
	err := d.SetAccountingMode(true)
	if !errors.Is(err, nvgo.ErrNoPermission) {
		t.Fatalf("SetAccountingMode(true) = %v, want ErrNoPermission", err)
	}
	var ne *nvgo.NVMLError
	if !errors.As(err, &ne) || ne.Code != nvgo.ReturnCode(nvml.ERROR_NO_PERMISSION) {
		t.Errorf("error %v carries no NVML code %d", err, nvml.ERROR_NO_PERMISSION)
	}
	if m := d.AccountingMode(); m.Or(true) {
		t.Errorf("AccountingMode = %v after a refused change, want Off", m)
	}
}

func TestAccountedPIDs(t *testing.T) {
	lib, fleet := accountingFleet(t)
	g := fleet.GPU(0)
	for _, pid := range []uint32{300, 100, 200} {
		must(t, g.StartProcess(fakegpu.Process{PID: pid}))
	}
	g.StopProcess(100)
	must(t, g.StartProcess(fakegpu.Process{PID: 100})) // a reused PID has two records
	d := acctDevice(t, lib, 0)

	pids, err := d.AccountedPIDs()
	if err != nil || !slices.Equal(pids, []int{100, 200, 300}) {
		t.Errorf("AccountedPIDs = %v, %v; want [100 200 300]", pids, err)
	}
	must(t, d.SetAccountingMode(false))
	pids, err = d.AccountedPIDs()
	if !errors.Is(err, nvgo.ErrAccountingOff) || !errors.Is(err, nvgo.ErrNotSupported) {
		t.Errorf("AccountedPIDs with accounting off = %v, %v; want ErrAccountingOff", pids, err)
	}
	must(t, d.SetAccountingMode(true))
	// Turning accounting off deleted the records; the running processes start afresh.
	pids, err = d.AccountedPIDs()
	if err != nil || !slices.Equal(pids, []int{100, 200, 300}) {
		t.Errorf("AccountedPIDs after off and on = %v, %v", pids, err)
	}
	if a := d.ProcessAccounting(100); a.IsNA() || !a.Or(nvgo.ProcessAccounting{}).StartTime.Equal(fleet.Now()) {
		t.Errorf("ProcessAccounting(100) = %s, want a record from now", describeAccounting(a))
	}
	if n := d.AccountingBufferSize(); n.Or(0) != 16 {
		t.Errorf("AccountingBufferSize = %v, want 16", n)
	}
}

// MIG devices have no accounting of their own: NVML keeps it per GPU, and
// nvgo does not even ask.
func TestAccountingOnMIG(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100-mig")
	migs, err := acctDevice(t, lib, 0).MIGDevices()
	must(t, err)
	mig := migs[0].Device
	procs, err := mig.Processes(context.Background())
	must(t, err)
	if len(procs) == 0 {
		t.Fatal("no process on MIG device 0")
	}
	fleet.ResetCalls()

	if v := mig.AccountingMode(); v.Reason() != nvgo.NotSupported {
		t.Errorf("AccountingMode = %v (%s), want N/A (not supported)", v, v.Reason())
	}
	if v := mig.AccountingBufferSize(); v.Reason() != nvgo.NotSupported {
		t.Errorf("AccountingBufferSize = %v (%s), want N/A (not supported)", v, v.Reason())
	}
	if v := mig.ProcessAccounting(procs[0].PID()); v.Reason() != nvgo.NotSupported {
		t.Errorf("ProcessAccounting = %s, want N/A (not supported)", describeAccounting(v))
	}
	if v := procs[0].Accounting(); v.Reason() != nvgo.NotSupported {
		t.Errorf("GpuProcess.Accounting = %s, want N/A (not supported)", describeAccounting(v))
	}
	if _, err := mig.AccountedPIDs(); !errors.Is(err, nvgo.ErrNotSupported) {
		t.Errorf("AccountedPIDs = %v, want ErrNotSupported", err)
	}
	if err := mig.SetAccountingMode(true); !errors.Is(err, nvgo.ErrNotSupported) {
		t.Errorf("SetAccountingMode = %v, want ErrNotSupported", err)
	}
	if n := fleet.TotalCalls(); n != 0 {
		t.Errorf("%d NVML calls (%v), want none", n, fleet.Calls())
	}
}

func TestGpuProcessAccounting(t *testing.T) {
	t.Run("a process's own record", func(t *testing.T) {
		lib, fleet := accountingFleet(t)
		must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: 4194546, SM: 30, UsedMemory: 1 << 30}))
		fleet.Advance(time.Second)
		p := acctProcess(t, acctDevice(t, lib, 0), 4194546)
		want := "pid 4194546 gpu 30% mem 0% max 1024MiB time N/A (not reported) start 2025-01-01T00:00:00Z running true"
		if got := describeAccounting(p.Accounting()); got != want {
			t.Errorf("Accounting = %s\n want %s", got, want)
		}
	})

	// A record of this test's own PID, started at the given offset from the
	// test process's start: the host create time is known for it.
	me, err := nvgo.NewHostProcess(os.Getpid())
	must(t, err)
	created, ok := me.CreateTime().Get()
	if !ok {
		t.Skipf("the create time of this process is N/A: %v", me.CreateTime().Err())
	}
	tests := []struct {
		name   string
		offset time.Duration
		reason nvgo.Reason
	}{
		{"a record that starts after the process is its own", 3 * time.Second, nvgo.Available},
		{"a record a second earlier is within the slack of the create time", -time.Second, nvgo.Available},
		{"a record from an hour before belongs to an earlier process with the PID", -time.Hour, nvgo.ProcessGone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib, fleet := accountingFleet(t)
			at := created.Add(tt.offset)
			if at.Before(fleet.Now()) {
				t.Skipf("this process started at %s, before the fake clock", created)
			}
			fleet.Advance(at.Sub(fleet.Now()))
			must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(os.Getpid()), SM: 10}))
			p := acctProcess(t, acctDevice(t, lib, 0), os.Getpid())
			if c, ok := p.Host().CreateTime().Get(); !ok || !c.Equal(created) {
				t.Skipf("NVML's PID is not visible as this process here (%v)", p.Host().CreateTime().Err())
			}
			v := p.Accounting()
			if v.Reason() != tt.reason {
				t.Fatalf("Accounting = %s (%v), want reason %s", describeAccounting(v), v.Err(), tt.reason)
			}
			if tt.reason == nvgo.ProcessGone && !errors.Is(v.Err(), nvgo.ErrProcessGone) {
				t.Errorf("error %v does not match ErrProcessGone", v.Err())
			}
			if tt.reason == nvgo.Available && !v.Or(nvgo.ProcessAccounting{}).StartTime.Equal(at.Truncate(time.Microsecond)) {
				t.Errorf("Accounting = %s, want a record from %s", describeAccounting(v), at)
			}
		})
	}
}

func acctProcess(t *testing.T, d *nvgo.Device, pid int) *nvgo.GpuProcess {
	t.Helper()
	procs, err := d.Processes(context.Background())
	must(t, err)
	for _, p := range procs {
		if p.PID() == pid {
			return p
		}
	}
	t.Fatalf("pid %d not among the processes of %v", pid, d)
	return nil
}
