package nvgo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/host"
)

// child is a real process started for a test; gopsutil and nvgo read the
// real /proc, so fakes would not do.
type child struct {
	cmd     *exec.Cmd
	once    sync.Once
	waitErr error
}

// startChild starts name with args and kills and reaps it when the test ends.
func startChild(t *testing.T, name string, args ...string) *child {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "NVGO_TEST_MARK=1")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	c := &child{cmd: cmd}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = c.wait()
	})
	// Start returns once execve has passed its point of no return, but the
	// kernel fills in the new argument area (/proc/pid/cmdline) a moment
	// later: wait for it, or a test can see an empty command line.
	eventually(t, "the child's command line", func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
		return err != nil || len(b) > 0
	})
	return c
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// wait reaps the child once; later calls return the first result.
func (c *child) wait() error {
	c.once.Do(func() { c.waitErr = c.cmd.Wait() })
	return c.waitErr
}

// eventually polls cond every 10ms for up to 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func mustHostProcess(t *testing.T, pid int) *HostProcess {
	t.Helper()
	p, err := NewHostProcess(pid)
	if err != nil {
		t.Fatalf("NewHostProcess(%d): %v", pid, err)
	}
	return p
}

// naValue is what the tests need of any Value[T].
type naValue interface {
	IsNA() bool
	Reason() Reason
	Err() error
}

type hostField struct {
	name string
	v    naValue
}

// hostFields reads every value method of p.
func hostFields(p *HostProcess) []hostField {
	return []hostField{
		{"CreateTime", p.CreateTime()},
		{"RunningTime", p.RunningTime()},
		{"Name", p.Name()},
		{"Username", p.Username()},
		{"Cmdline", p.Cmdline()},
		{"Command", p.Command()},
		{"Cwd", p.Cwd()},
		{"Environ", p.Environ()},
		{"Status", p.Status()},
		{"CPUPercent", p.CPUPercent()},
		{"HostMemory", p.HostMemory()},
		{"HostMemoryPercent", p.HostMemoryPercent()},
	}
}

// wantAllNA checks that every field of p is N/A with reason want and that
// the methods returning errors fail with wantErr.
func wantAllNA(t *testing.T, p *HostProcess, want Reason, wantErr error) {
	t.Helper()
	for _, f := range hostFields(p) {
		if !f.v.IsNA() || f.v.Reason() != want {
			t.Errorf("%s() = %v (reason %v), want N/A with reason %v", f.name, f.v, f.v.Reason(), want)
		}
		if !errors.Is(f.v.Err(), wantErr) {
			t.Errorf("%s().Err() = %v, want it to wrap %v", f.name, f.v.Err(), wantErr)
		}
	}
	if p.IsRunning() {
		t.Errorf("IsRunning() = true, want false")
	}
	if _, err := p.Parent(); !errors.Is(err, wantErr) {
		t.Errorf("Parent() error = %v, want %v", err, wantErr)
	}
	if _, err := p.Children(); !errors.Is(err, wantErr) {
		t.Errorf("Children() error = %v, want %v", err, wantErr)
	}
	if err := p.Signal(syscall.SIGKILL); !errors.Is(err, wantErr) {
		t.Errorf("Signal(SIGKILL) error = %v, want %v", err, wantErr)
	}
}

func TestHostProcessReadsALiveChild(t *testing.T) {
	before := time.Now()
	c := startChild(t, "sleep", "30")
	p := mustHostProcess(t, c.pid())

	if got := p.PID(); got != c.pid() {
		t.Errorf("PID() = %d, want %d", got, c.pid())
	}
	if got := p.Name(); got.Or("") != "sleep" {
		t.Errorf("Name() = %v, want sleep", got)
	}
	if got := p.Cmdline(); !slices.Equal(got.Or(nil), []string{"sleep", "30"}) {
		t.Errorf("Cmdline() = %q, want [sleep 30]", got.Or(nil))
	}
	if got := p.Command(); got.Or("") != "sleep 30" {
		t.Errorf("Command() = %v, want \"sleep 30\"", got)
	}
	if got := p.Status(); got.Or("") != "sleeping" && got.Or("") != "running" {
		t.Errorf("Status() = %v, want sleeping or running", got)
	}
	// The boot time is known to the second, so allow that much either side.
	if ct, ok := p.CreateTime().Get(); !ok || ct.Before(before.Add(-2*time.Second)) || ct.After(time.Now().Add(2*time.Second)) {
		t.Errorf("CreateTime() = %v, want close to %v", p.CreateTime(), before)
	}
	if rt, ok := p.RunningTime().Get(); !ok || rt < 0 || rt > time.Minute {
		t.Errorf("RunningTime() = %v, want a few seconds at most", p.RunningTime())
	}
	// Until it sleeps, a child may still be mapping itself in, and the
	// kernel's count of its resident pages may lag (split RSS counting).
	eventually(t, "the child is asleep", func() bool { return p.Status().Or("") == "sleeping" })
	if rss, ok := p.HostMemory().Get(); !ok || rss == 0 {
		t.Errorf("RSS() = %v, want > 0", p.HostMemory())
	}
	if mp, ok := p.HostMemoryPercent().Get(); !ok || mp <= 0 || mp > 100 {
		t.Errorf("HostMemoryPercent() = %v, want in (0, 100]", p.HostMemoryPercent())
	}
	if me, err := user.Current(); err == nil {
		if got := p.Username(); got.Or("") != me.Username {
			t.Errorf("Username() = %v, want %s", got, me.Username)
		}
	}
	if wd, err := os.Getwd(); err == nil {
		if got := p.Cwd(); got.Or("") != wd {
			t.Errorf("Cwd() = %v, want %s", got, wd)
		}
	}
	if env := p.Environ(); !slices.Contains(env.Or(nil), "NVGO_TEST_MARK=1") {
		t.Errorf("Environ() = %v, want it to hold NVGO_TEST_MARK=1", env)
	}
	if cpu, ok := p.CPUPercent().Get(); !ok || cpu < 0 {
		t.Errorf("CPUPercent() = %v, want >= 0", p.CPUPercent())
	}
	if !p.IsRunning() {
		t.Error("IsRunning() = false, want true")
	}
	if got, want := p.String(), "pid "+strconv.Itoa(c.pid())+" (sleep)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}

	parent, err := p.Parent()
	if err != nil || parent == nil || parent.PID() != os.Getpid() {
		t.Errorf("Parent() = %v, %v; want pid %d", parent, err, os.Getpid())
	}
	me := mustHostProcess(t, os.Getpid())
	children, err := me.Children()
	if err != nil {
		t.Fatalf("our Children(): %v", err)
	}
	if !slices.ContainsFunc(children, func(ch *HostProcess) bool { return ch.PID() == c.pid() }) {
		t.Errorf("our Children() = %v, want it to hold pid %d", children, c.pid())
	}
}

func TestHostProcessThatExitedIsGone(t *testing.T) {
	c := startChild(t, "sleep", "30")
	p := mustHostProcess(t, c.pid())
	// Read (and cache) everything while it lives.
	for _, f := range hostFields(p) {
		if f.v.IsNA() {
			t.Fatalf("%s() of a live child = N/A (%v: %v)", f.name, f.v.Reason(), f.v.Err())
		}
	}
	_ = c.cmd.Process.Kill()
	_ = c.wait()

	wantAllNA(t, p, ProcessGone, ErrProcessGone)
	if _, err := NewHostProcess(c.pid()); !errors.Is(err, ErrProcessGone) {
		t.Errorf("NewHostProcess of a reaped pid: error = %v, want ErrProcessGone", err)
	}
	if got, want := p.String(), "pid "+strconv.Itoa(c.pid())+" (sleep)"; got != want {
		t.Errorf("String() = %q, want %q (the name read while it lived)", got, want)
	}
}

func TestHostProcessZombie(t *testing.T) {
	c := startChild(t, "sleep", "30")
	p := mustHostProcess(t, c.pid())
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not reaped: the kernel keeps it as a zombie until we Wait.
	eventually(t, "the child is a zombie", func() bool { return p.Status().Or("") == "zombie" })

	for _, f := range hostFields(p) {
		t.Logf("zombie %s() = %v (reason %v, err %v)", f.name, f.v, f.v.Reason(), f.v.Err())
	}
	gone := map[string]bool{"Cmdline": true, "Command": true, "Cwd": true, "Environ": true, "HostMemory": true, "HostMemoryPercent": true}
	for _, f := range hostFields(p) {
		switch {
		case gone[f.name] && (f.v.Reason() != Zombie || !errors.Is(f.v.Err(), ErrZombie)):
			t.Errorf("zombie %s() = %v (reason %v, err %v), want N/A with reason Zombie", f.name, f.v, f.v.Reason(), f.v.Err())
		case !gone[f.name] && f.v.IsNA():
			t.Errorf("zombie %s() = N/A (%v: %v), want a value", f.name, f.v.Reason(), f.v.Err())
		}
	}
	if !p.IsRunning() {
		t.Error("IsRunning() of a zombie = false, want true (it still holds its PID)")
	}
	if err := p.Terminate(); err != nil {
		t.Errorf("Terminate() of a zombie = %v, want nil (the kernel ignores it)", err)
	}

	_ = c.wait()
	wantAllNA(t, p, ProcessGone, ErrProcessGone)
}

func TestHostProcessRefusesAReusedPID(t *testing.T) {
	c := startChild(t, "sleep", "30")
	real := mustHostProcess(t, c.pid())
	// A HostProcess for an earlier process that held the same PID.
	stale := newHostProcessAt(int32(c.pid()), real.start-10*time.Millisecond)

	for _, sig := range []func() error{stale.Interrupt, stale.Terminate, stale.Kill} {
		if err := sig(); !errors.Is(err, ErrProcessGone) {
			t.Errorf("signal to a reused PID: error = %v, want ErrProcessGone", err)
		}
	}
	wantAllNA(t, stale, ProcessGone, ErrProcessGone)

	time.Sleep(50 * time.Millisecond) // give a wrongly sent signal time to land
	if !real.IsRunning() || real.Status().Or("") == "zombie" {
		t.Fatalf("the process now holding the PID was signalled: status %v", real.Status())
	}
	if got := real.Name(); got.Or("") != "sleep" {
		t.Errorf("the live process's Name() = %v, want sleep", got)
	}
}

func TestZeroHostProcessIsGone(t *testing.T) {
	wantAllNA(t, new(HostProcess), ProcessGone, ErrProcessGone)
}

func TestNewHostProcessOfNoProcess(t *testing.T) {
	for _, pid := range []int{0, -1, unusedPID(t), math.MaxInt32 + 1} {
		if p, err := NewHostProcess(pid); !errors.Is(err, ErrProcessGone) {
			t.Errorf("NewHostProcess(%d) = %v, %v; want ErrProcessGone", pid, p, err)
		}
	}
}

// unusedPID returns a PID that no process can hold: one above pid_max.
func unusedPID(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		t.Skipf("read pid_max: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n + 1
}

func TestHostProcessTable(t *testing.T) {
	t.Run("reuses the object while the process lives", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		a, b := tab.get(c.pid()), tab.get(c.pid())
		if a != b {
			t.Errorf("two lookups of a live process gave two objects")
		}
		if got := a.Name(); got.Or("") != "sleep" {
			t.Errorf("Name() = %v, want sleep", got)
		}
	})
	t.Run("returns a new object when the PID holds a new process", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		live := tab.get(c.pid())
		stale := newHostProcessAt(int32(c.pid()), live.start-10*time.Millisecond)
		tab.byPID[int32(c.pid())] = &hostEntry{p: stale}

		got := tab.get(c.pid())
		if got == stale {
			t.Fatal("lookup kept the object of the PID's earlier process")
		}
		if got.start != live.start || !got.IsRunning() {
			t.Errorf("lookup gave start %d (running %v), want the live process's %d", got.start, got.IsRunning(), live.start)
		}
		if again := tab.get(c.pid()); again != got {
			t.Error("the new object was not kept")
		}
	})
	t.Run("a PID no process holds is gone", func(t *testing.T) {
		tab := newHostProcessTable(hostProcFS)
		for _, pid := range []int{unusedPID(t), 0, -5} {
			p := tab.get(pid)
			wantAllNA(t, p, ProcessGone, ErrProcessGone)
		}
	})
	t.Run("a reaped child is gone", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		before := tab.get(c.pid())
		_ = c.cmd.Process.Kill()
		_ = c.wait()
		after := tab.get(c.pid())
		if after == before {
			t.Error("lookup after exit gave the live object back")
		}
		wantAllNA(t, after, ProcessGone, ErrProcessGone)
		wantAllNA(t, before, ProcessGone, ErrProcessGone)
	})
	t.Run("outside the host PID namespace nothing is read, not even our own PID", func(t *testing.T) {
		tab := newHostProcessTable(newHostReader(otherPIDNamespace{host.ProcFS{}}))
		p := tab.get(os.Getpid())
		wantAllNA(t, p, OtherPIDNamespace, ErrOtherPIDNamespace)
		if tab.get(os.Getpid()) != p {
			t.Error("two lookups gave two objects")
		}
	})
	t.Run("prune forgets the PIDs not reported", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		tab.get(c.pid())
		tab.get(os.Getpid())
		tab.get(unusedPID(t))
		tab.prune(map[int]struct{}{os.Getpid(): {}})
		if n := tab.len(); n != 1 {
			t.Errorf("after prune the table holds %d processes, want 1", n)
		}
		if _, ok := tab.byPID[int32(os.Getpid())]; !ok {
			t.Error("prune dropped a PID that is still reported")
		}
	})
	t.Run("is safe for concurrent use", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		var wg sync.WaitGroup
		objs := make([]*HostProcess, 8)
		for i := range objs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					p := tab.get(c.pid())
					objs[i] = p
					_ = p.CPUPercent()
					_ = p.Name()
					_ = p.Username()
					_ = p.String()
					tab.prune(map[int]struct{}{c.pid(): {}})
				}
			}()
		}
		wg.Wait()
		for _, p := range objs[1:] {
			if p != objs[0] {
				t.Fatal("concurrent lookups of one live process gave different objects")
			}
		}
	})
}

func TestHostProcessOfAnotherUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which may read every process; run as another user to test NoPermission")
	}
	pid1 := mustHostProcess(t, 1)
	if pid1.Username().Or("") == mustHostProcess(t, os.Getpid()).Username().Or("?") {
		t.Skip("PID 1 is ours (a container run as our user)")
	}
	for _, f := range []hostField{{"Environ", pid1.Environ()}, {"Cwd", pid1.Cwd()}} {
		if f.v.Reason() != NoPermission || !errors.Is(f.v.Err(), ErrNoPermission) {
			t.Errorf("%s() of PID 1 = %v (reason %v, err %v), want N/A with reason NoPermission", f.name, f.v, f.v.Reason(), f.v.Err())
		}
	}
	if name := pid1.Name(); name.IsNA() {
		t.Errorf("Name() of PID 1 = N/A (%v), want a name: it is readable by all", name.Err())
	}
}

func TestHostProcessSignals(t *testing.T) {
	tests := []struct {
		name string
		send func(*HostProcess) error
		want syscall.Signal
	}{
		{"Interrupt", (*HostProcess).Interrupt, syscall.SIGINT},
		{"Terminate", (*HostProcess).Terminate, syscall.SIGTERM},
		{"Kill", (*HostProcess).Kill, syscall.SIGKILL},
		{"Signal(SIGHUP)", func(p *HostProcess) error { return p.Signal(syscall.SIGHUP) }, syscall.SIGHUP},
	}
	for _, tt := range tests {
		t.Run(tt.name+" ends a child", func(t *testing.T) {
			c := startChild(t, "sleep", "30")
			p := mustHostProcess(t, c.pid())
			if err := tt.send(p); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			_ = c.wait()
			ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != tt.want {
				t.Errorf("child ended with %v, want killed by %v", c.cmd.ProcessState, tt.want)
			}
			if err := tt.send(p); !errors.Is(err, ErrProcessGone) {
				t.Errorf("%s after exit: error = %v, want ErrProcessGone", tt.name, err)
			}
		})
	}
	t.Run("a process we may not signal gives ErrNoPermission", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root, which may signal every process; run as another user to test EPERM")
		}
		pid1 := mustHostProcess(t, 1)
		// Signal 0 checks permission only, so nothing is sent even if allowed.
		err := pid1.Signal(0)
		if err == nil {
			t.Skip("we may signal PID 1 (a container run as our user)")
		}
		if !errors.Is(err, ErrNoPermission) || !errors.Is(err, syscall.EPERM) {
			t.Errorf("Signal(0) to PID 1: error = %v, want ErrNoPermission wrapping EPERM", err)
		}
	})
}

func TestHostProcessCPUPercent(t *testing.T) {
	busy := startChild(t, "sh", "-c", "while :; do :; done")
	idle := startChild(t, "sleep", "30")
	pb, pi := mustHostProcess(t, busy.pid()), mustHostProcess(t, idle.pid())
	first := pb.CPUPercent() // the average since it started
	pi.CPUPercent()
	want := Percent(10)
	var got Value[Percent]
	// Each call measures since the previous one: poll until the busy
	// child has run long enough to show, or give up.
	for deadline := time.Now().Add(10 * time.Second); ; {
		time.Sleep(100 * time.Millisecond)
		if got = pb.CPUPercent(); got.Or(0) > want || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("busy child: first call %v, then %v", first, got)
	if v, ok := got.Get(); !ok || v <= want {
		t.Errorf("busy child's CPUPercent() = %v, want > %v", got, want)
	}
	if v, ok := pi.CPUPercent().Get(); !ok || v >= want {
		t.Errorf("sleeping child's CPUPercent() = %v, want < %v", pi.CPUPercent(), want)
	}
}

// get is lookup by no lister, for the tests that need only the process.
func (t *hostProcessTable) get(pid int) *HostProcess {
	p, _, _ := t.lookup(pid, nil)
	return p
}

// otherPIDNamespace is the host's procfs as a process in a container
// without the host's PID namespace sees it: NVML's PIDs are not its.
type otherPIDNamespace struct{ host.ProcFS }

func (otherPIDNamespace) HostPIDs() bool { return false }
