package nvgo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v3/mem"
	"github.com/shirou/gopsutil/v3/process"
)

// HostProcess is a process on the host, as the operating system sees it (the
// Go counterpart of nvitop's HostProcess). It is identified by its PID and its
// start time together: once the process exits, every method reports it gone,
// even if the PID is reused by another process, so a HostProcess never shows
// another process's data nor signals it.
//
// Each value method reads /proc afresh and returns an N/A Value whose Reason
// says why when it cannot be read: ProcessGone when the process exited or its
// PID was reused, NoPermission when the data belongs to another user,
// Zombie when the process exited but was not yet reaped (its command line,
// memory, working directory and environment are gone), and OtherPIDNamespace
// for a PID from NVML that this process cannot see (see GpuProcess).
//
// Create one with NewHostProcess; the zero HostProcess reports every field
// as gone. A HostProcess is safe for concurrent use.
type HostProcess struct {
	pid int32
	// startTicks is the start time in clock ticks after boot, as
	// /proc/<pid>/stat gives it; with pid it is the process's identity. It
	// is exact where gopsutil's create time is rounded down to the second
	// and recomputed from a boot time that drifts with /proc/uptime.
	startTicks uint64
	createTime Value[time.Time]

	// unreadable is not Available for a PID that was never readable (not
	// visible from this PID namespace, or gone when it was looked up);
	// every method then reports unreadableErr.
	unreadable    Reason
	unreadableErr error

	// gone is set once the PID is seen to no longer hold this process; a
	// process does not come back.
	gone atomic.Bool

	mu       sync.Mutex       // guards the fields below; gopsutil's Process is not safe for concurrent use
	proc     *process.Process // kept for gopsutil's own caches
	name     string           // "" until read while the identity check passed
	username string           // likewise
	cpu      processCPUSample // the previous CPUPercent reading
}

// processCPUSample is a reading of a process's CPU time for CPUPercent.
type processCPUSample struct {
	at      time.Time
	seconds float64 // user + system
	percent Percent // the value returned with this reading
}

// clockTicksPerSecond is USER_HZ, the unit of the times in /proc/<pid>/stat.
// It is part of the kernel ABI and is 100 on every architecture Go supports.
const clockTicksPerSecond = 100

// NewHostProcess returns the process that holds pid now. It returns an error
// wrapping ErrProcessGone when there is no such process.
//
// The PID is read in this process's PID namespace; NewHostProcess makes no
// PID-namespace check, since the caller chose the PID.
func NewHostProcess(pid int) (*HostProcess, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
	}
	st, err := readProcStat(int32(pid))
	if err != nil {
		if isNoSuchProcess(err) {
			return nil, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
		}
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	return newHostProcessFromStat(int32(pid), st), nil
}

// newHostProcessFromStat returns the process with the identity st records.
func newHostProcessFromStat(pid int32, st procStat) *HostProcess {
	p := &HostProcess{pid: pid, startTicks: st.startTicks, proc: &process.Process{Pid: pid}}
	if boot, err := hostBootTime(); err != nil {
		p.createTime = NA[time.Time](ReasonOf(err), err)
	} else {
		p.createTime = Some(boot.Add(time.Duration(st.startTicks) * (time.Second / clockTicksPerSecond)))
	}
	return p
}

// newHostProcessAt returns a HostProcess for pid with the given start time,
// whether or not that is the process holding the PID (tests use it to fake a
// reused PID).
func newHostProcessAt(pid int32, startTicks uint64) *HostProcess {
	return newHostProcessFromStat(pid, procStat{startTicks: startTicks})
}

// newUnreadableHostProcess returns a HostProcess whose every host field is
// N/A with the given reason and error.
func newUnreadableHostProcess(pid int32, reason Reason, err error) *HostProcess {
	return &HostProcess{
		pid:           pid,
		createTime:    NA[time.Time](reason, err),
		unreadable:    reason,
		unreadableErr: err,
		proc:          &process.Process{Pid: pid},
	}
}

// PID returns the process ID (for a process from NVML, the host's PID).
func (p *HostProcess) PID() int { return int(p.pid) }

// String returns "pid 123 (python)", or "pid 123" when the name is unknown.
func (p *HostProcess) String() string {
	p.mu.Lock()
	name := p.name
	p.mu.Unlock()
	if name == "" {
		name = p.Name().Or("")
	}
	if name == "" {
		return fmt.Sprintf("pid %d", p.pid)
	}
	return fmt.Sprintf("pid %d (%s)", p.pid, name)
}

// goneErr is the error for a process that exited or whose PID was reused.
func (p *HostProcess) goneErr() error { return fmt.Errorf("pid %d: %w", p.pid, ErrProcessGone) }

// check reads the process's state and returns an error wrapping
// ErrProcessGone unless the PID still holds this process (a zombie still
// does). It is called after a read, so that what was read is known to be
// this process's: a PID cannot go back to an exited process.
func (p *HostProcess) check() (procStat, error) {
	if p.unreadable != Available {
		return procStat{}, p.unreadableErr
	}
	if p.gone.Load() || p.proc == nil { // the zero HostProcess holds no process
		return procStat{}, p.goneErr()
	}
	st, err := readProcStat(p.pid)
	if err != nil {
		if isNoSuchProcess(err) {
			p.gone.Store(true)
			return st, p.goneErr()
		}
		return st, p.wrapErr(err)
	}
	if st.startTicks != p.startTicks {
		p.gone.Store(true)
		return st, p.goneErr()
	}
	return st, nil
}

// wrapErr gives err the pid and, for a permission error, ErrNoPermission, so
// that ReasonOf says NoPermission.
func (p *HostProcess) wrapErr(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("pid %d: %w: %w", p.pid, ErrNoPermission, err)
	}
	return fmt.Errorf("pid %d: %w", p.pid, err)
}

// readHostValue reads one value with read (under p.mu, since gopsutil's Process
// caches as it reads) and then checks the identity. zombieEmpty reports
// whether a value read from a zombie means the data is gone (a zombie's
// command line, environment and memory read as empty); nil means only an
// error does.
func readHostValue[T any](p *HostProcess, read func(proc *process.Process, ctx context.Context) (T, error), zombieEmpty func(T) bool) Value[T] {
	if p.unreadable != Available {
		return NA[T](p.unreadable, p.unreadableErr)
	}
	if p.gone.Load() || p.proc == nil {
		return NA[T](ProcessGone, p.goneErr())
	}
	p.mu.Lock()
	v, err := read(p.proc, context.Background())
	p.mu.Unlock()
	st, cerr := p.check()
	if cerr != nil {
		return NA[T](ReasonOf(cerr), cerr)
	}
	if st.isZombie() && (err != nil || (zombieEmpty != nil && zombieEmpty(v))) {
		err := fmt.Errorf("pid %d: %w", p.pid, ErrZombie)
		return NA[T](Zombie, err)
	}
	if err != nil {
		if isNoSuchProcess(err) {
			// Exiting, but not yet a zombie when checked.
			return NA[T](ProcessGone, fmt.Errorf("pid %d: %w: %w", p.pid, ErrProcessGone, err))
		}
		err = p.wrapErr(err)
		return NA[T](ReasonOf(err), err)
	}
	return Some(v)
}

// CreateTime returns when the process started: the boot time from
// /proc/stat (whole seconds, as psutil reads it) plus the start time after
// boot (to 10ms).
func (p *HostProcess) CreateTime() Value[time.Time] {
	if _, err := p.check(); err != nil {
		return NA[time.Time](ReasonOf(err), err)
	}
	return p.createTime
}

// RunningTime returns how long the process has been running.
func (p *HostProcess) RunningTime() Value[time.Duration] {
	return Map(p.CreateTime(), func(t time.Time) time.Duration { return max(time.Since(t), 0) })
}

// IsRunning reports whether the PID still holds this process: false once it
// has exited or the PID was reused, and true for a zombie (which still
// exists, as psutil's is_running says). It is false for a PID this process
// cannot see.
func (p *HostProcess) IsRunning() bool {
	_, err := p.check()
	return err == nil
}

// Name returns the process name: the kernel's (up to 15 bytes), extended
// from the command line when truncated, as psutil does. It is read once.
func (p *HostProcess) Name() Value[string] {
	p.mu.Lock()
	name := p.name
	p.mu.Unlock()
	if name != "" {
		if _, err := p.check(); err != nil {
			return NA[string](ReasonOf(err), err)
		}
		return Some(name)
	}
	v := readHostValue(p, (*process.Process).NameWithContext, nil)
	if name, ok := v.Get(); ok && name != "" {
		p.mu.Lock()
		p.name = name
		p.mu.Unlock()
	}
	return v
}

// Username returns the name of the user who owns the process (its real user
// ID), or the user ID in decimal when it has no name on this host (e.g. a
// user from a container). It is read once.
func (p *HostProcess) Username() Value[string] {
	p.mu.Lock()
	name := p.username
	p.mu.Unlock()
	if name != "" {
		if _, err := p.check(); err != nil {
			return NA[string](ReasonOf(err), err)
		}
		return Some(name)
	}
	v := readHostValue(p, func(proc *process.Process, ctx context.Context) (string, error) {
		uids, err := proc.UidsWithContext(ctx)
		if err != nil {
			return "", err
		}
		if len(uids) == 0 {
			return "", errors.New("no user ID in /proc/<pid>/status")
		}
		uid := strconv.FormatInt(int64(uids[0]), 10)
		if u, err := user.LookupId(uid); err == nil {
			return u.Username, nil
		}
		return uid, nil
	}, nil)
	if name, ok := v.Get(); ok {
		p.mu.Lock()
		p.username = name
		p.mu.Unlock()
	}
	return v
}

// Cmdline returns the command line, without the trailing empty arguments
// that programs which rewrite their title (setproctitle) leave behind. It is
// empty for a kernel thread and N/A (Zombie) for a zombie. It is read afresh
// each time, since such programs change it after they start.
func (p *HostProcess) Cmdline() Value[[]string] {
	return readHostValue(p, func(proc *process.Process, ctx context.Context) ([]string, error) {
		args, err := proc.CmdlineSliceWithContext(ctx)
		for len(args) > 0 && args[len(args)-1] == "" {
			args = args[:len(args)-1]
		}
		if args == nil {
			args = []string{} // JSON [] rather than null, which means N/A
		}
		return args, err
	}, func(args []string) bool { return len(args) == 0 })
}

// Command returns the command line as one line a shell user can read (see
// CommandJoin).
func (p *HostProcess) Command() Value[string] { return Map(p.Cmdline(), CommandJoin) }

// Cwd returns the process's working directory.
func (p *HostProcess) Cwd() Value[string] {
	return readHostValue(p, (*process.Process).CwdWithContext, nil)
}

// Environ returns the process's environment as "KEY=value" strings. It is
// N/A (NoPermission) for another user's process unless we are root.
func (p *HostProcess) Environ() Value[[]string] {
	return readHostValue(p, func(proc *process.Process, ctx context.Context) ([]string, error) {
		env, err := proc.EnvironWithContext(ctx)
		return slices.DeleteFunc(env, func(s string) bool { return s == "" }), err
	}, func(env []string) bool { return len(env) == 0 })
}

// Status returns the process state in psutil's words: "running",
// "sleeping", "disk-sleep", "stopped", "tracing-stop", "zombie", "dead",
// "wake-kill", "waking", "parked" or "idle".
func (p *HostProcess) Status() Value[string] {
	st, err := p.check()
	if err != nil {
		return NA[string](ReasonOf(err), err)
	}
	return Some(st.status())
}

// CPUPercent returns the share of one CPU the process used, in percent; a
// process busy on several CPUs shows more than 100. It is measured from the
// previous call on this HostProcess to this one. The first call returns the
// average since the process started (and starts the next interval), so keep
// the same HostProcess between calls for the current use.
func (p *HostProcess) CPUPercent() Value[Percent] {
	now := time.Now()
	v := readHostValue(p, func(proc *process.Process, ctx context.Context) (float64, error) {
		t, err := proc.TimesWithContext(ctx)
		if err != nil {
			return 0, err
		}
		return t.User + t.System, nil
	}, nil)
	seconds, ok := v.Get()
	if !ok {
		return Map(v, func(float64) Percent { return 0 })
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.cpu
	var pct Percent
	switch {
	case prev.at.IsZero():
		// The boot time is known only to the second, so measure the
		// process's age from the uptime, in clock ticks like its start.
		if up, err := readUptime(); err == nil {
			if age := up - float64(p.startTicks)/clockTicksPerSecond; age > 0 {
				pct = Percent(seconds / age * 100)
			}
		}
	case now.Sub(prev.at) < time.Millisecond:
		return Some(prev.percent) // too short an interval to measure
	default:
		pct = Percent(max(seconds-prev.seconds, 0) / now.Sub(prev.at).Seconds() * 100)
	}
	p.cpu = processCPUSample{at: now, seconds: seconds, percent: pct}
	return Some(pct)
}

// RSS returns the process's resident memory (resident set size).
func (p *HostProcess) RSS() Value[Bytes] {
	return readHostValue(p, func(proc *process.Process, ctx context.Context) (Bytes, error) {
		m, err := proc.MemoryInfoWithContext(ctx)
		if err != nil {
			return 0, err
		}
		return Bytes(m.RSS), nil
	}, func(b Bytes) bool { return b == 0 })
}

// MemoryPercent returns the process's resident memory as a percentage of
// the host's physical memory.
func (p *HostProcess) MemoryPercent() Value[Percent] {
	rss := p.RSS()
	b, ok := rss.Get()
	if !ok {
		return Map(rss, func(Bytes) Percent { return 0 })
	}
	vm, err := mem.VirtualMemoryWithContext(context.Background())
	if err != nil {
		return NA[Percent](ReasonOf(err), err)
	}
	if vm.Total == 0 {
		return NA[Percent](NotReported, errors.New("host memory total is 0"))
	}
	return Some(Percent(float64(b) / float64(vm.Total) * 100))
}

// Parent returns the process's parent, or nil and no error when it has none
// that we can see (PID 1, or a parent outside this PID namespace). It returns
// an error wrapping ErrProcessGone when this process, or the parent, is gone.
func (p *HostProcess) Parent() (*HostProcess, error) {
	st, err := p.check()
	if err != nil {
		return nil, err
	}
	if st.ppid <= 0 {
		return nil, nil
	}
	parent, err := NewHostProcess(int(st.ppid))
	if err != nil {
		return nil, err
	}
	// A parent cannot start after its child; if it seems to, the parent
	// exited and its PID was reused after we read it.
	if parent.startTicks > p.startTicks {
		return nil, fmt.Errorf("parent of pid %d: %w", p.pid, ErrProcessGone)
	}
	return parent, nil
}

// Children returns the process's children, by PID.
func (p *HostProcess) Children() ([]*HostProcess, error) {
	if _, err := p.check(); err != nil {
		return nil, err
	}
	pids, err := process.PidsWithContext(context.Background())
	if err != nil {
		return nil, p.wrapErr(err)
	}
	var children []*HostProcess
	for _, pid := range pids {
		st, err := readProcStat(pid)
		// A child cannot start before its parent; one that seems to has
		// been reparented to a successor of ours (and check below fails).
		if err == nil && st.ppid == p.pid && st.startTicks >= p.startTicks {
			children = append(children, newHostProcessFromStat(pid, st))
		}
	}
	// Had we exited during the scan, our children would have been
	// reparented, and any with our PID as parent would be a successor's.
	if _, err := p.check(); err != nil {
		return nil, err
	}
	return children, nil
}

// Signal sends sig to the process. It first checks that the PID still holds
// this process and returns an error wrapping ErrProcessGone when it does not,
// so a signal never reaches a process that took over the PID. Where the
// kernel has pidfds (Linux 5.3 and later) the signal goes through one opened
// before the check, which closes the race between the check and the kill.
// A permission error wraps ErrNoPermission.
func (p *HostProcess) Signal(sig syscall.Signal) error {
	if p.unreadable != Available {
		return fmt.Errorf("signal %v: %w", sig, p.unreadableErr)
	}
	proc, err := os.FindProcess(int(p.pid))
	if err != nil {
		return fmt.Errorf("signal %v: pid %d: %w", sig, p.pid, err)
	}
	defer proc.Release()
	if _, err := p.check(); err != nil {
		return fmt.Errorf("signal %v: %w", sig, err)
	}
	switch err := proc.Signal(sig); {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrProcessDone), errors.Is(err, syscall.ESRCH):
		p.gone.Store(true)
		return fmt.Errorf("signal %v: %w", sig, p.goneErr())
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("signal %v: pid %d: %w: %w", sig, p.pid, ErrNoPermission, err)
	default:
		return fmt.Errorf("signal %v: pid %d: %w", sig, p.pid, err)
	}
}

// Interrupt sends SIGINT (see Signal).
func (p *HostProcess) Interrupt() error { return p.Signal(syscall.SIGINT) }

// Terminate sends SIGTERM (see Signal).
func (p *HostProcess) Terminate() error { return p.Signal(syscall.SIGTERM) }

// Kill sends SIGKILL (see Signal).
func (p *HostProcess) Kill() error { return p.Signal(syscall.SIGKILL) }

// hostProcessTable hands out one HostProcess per live process, so that
// callers that list processes over and over (the GPU-process code) keep the
// same object, and with it CPU-percent intervals, while the process lives. It
// is safe for concurrent use.
type hostProcessTable struct {
	mu    sync.Mutex
	byPID map[int32]*HostProcess
}

func newHostProcessTable() *hostProcessTable {
	return &hostProcessTable{byPID: make(map[int32]*HostProcess)}
}

// lookup returns the HostProcess for a PID that NVML reported. It is the
// object returned before for the same process, a new one when the PID now
// holds another process, and one whose every field is N/A with reason
// ProcessGone when no process holds the PID, or OtherPIDNamespace when we do
// not share the host's PID namespace (the PID would name an unrelated
// process here).
func (t *hostProcessTable) lookup(pid int) *HostProcess {
	if pid <= 0 || pid > math.MaxInt32 {
		return newUnreadableHostProcess(int32(min(max(pid, 0), math.MaxInt32)), ProcessGone, fmt.Errorf("pid %d: %w", pid, ErrProcessGone))
	}
	id := int32(pid)
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.byPID[id]
	var fresh *HostProcess
	if !inHostPIDNamespace() {
		if old != nil && old.unreadable == OtherPIDNamespace {
			return old
		}
		fresh = newUnreadableHostProcess(id, OtherPIDNamespace, fmt.Errorf("pid %d: %w", pid, ErrOtherPIDNamespace))
	} else {
		st, err := readProcStat(id)
		switch {
		case err == nil && old != nil && old.unreadable == Available && !old.gone.Load() && old.startTicks == st.startTicks:
			return old
		case err == nil:
			fresh = newHostProcessFromStat(id, st)
		case isNoSuchProcess(err):
			if old != nil && old.unreadable == ProcessGone {
				return old
			}
			fresh = newUnreadableHostProcess(id, ProcessGone, fmt.Errorf("pid %d: %w", pid, ErrProcessGone))
		default:
			// Perhaps passing (e.g. out of file descriptors): do not remember it.
			err = fmt.Errorf("pid %d: %w", pid, err)
			return newUnreadableHostProcess(id, ReasonOf(err), err)
		}
	}
	t.byPID[id] = fresh
	return fresh
}

// prune forgets the processes whose PIDs are not in alive (the PIDs the
// driver still reports), so the table stays as small as the process list.
func (t *hostProcessTable) prune(alive map[int]struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid := range t.byPID {
		if _, ok := alive[int(pid)]; !ok {
			delete(t.byPID, pid)
		}
	}
}

// len returns how many processes the table holds.
func (t *hostProcessTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byPID)
}

// procStat is what nvgo reads from /proc/<pid>/stat.
type procStat struct {
	state      byte   // R, S, D, Z, T, ...
	ppid       int32  // 0 when the parent is outside our PID namespace
	startTicks uint64 // start time in clock ticks after boot
}

func (s procStat) isZombie() bool { return s.state == 'Z' || s.state == 'X' || s.state == 'x' }

// procStates maps the state letters of /proc/<pid>/stat to psutil's words.
var procStates = map[byte]string{
	'R': "running",
	'S': "sleeping",
	'D': "disk-sleep",
	'T': "stopped",
	't': "tracing-stop",
	'Z': "zombie",
	'X': "dead",
	'x': "dead",
	'K': "wake-kill",
	'W': "waking",
	'P': "parked",
	'I': "idle",
}

func (s procStat) status() string {
	if w, ok := procStates[s.state]; ok {
		return w
	}
	return "unknown (" + string(s.state) + ")"
}

// procPath returns a path under procfs. Like gopsutil, nvgo reads procfs at
// $HOST_PROC when it is set, so both read the same processes.
func procPath(elem ...string) string {
	root := os.Getenv("HOST_PROC")
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// readProcStat reads /proc/<pid>/stat.
func readProcStat(pid int32) (procStat, error) {
	b, err := os.ReadFile(procPath(strconv.Itoa(int(pid)), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// parseProcStat parses the contents of /proc/<pid>/stat (see proc(5)). The
// command name in parentheses may itself hold spaces and parentheses, so the
// fields are counted from the last ')'.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: no ')' in %q", b)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: too few fields in %q", b)
	}
	ppid, err := strconv.ParseInt(string(f[1]), 10, 32)
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: ppid: %w", err)
	}
	start, err := strconv.ParseUint(string(f[19]), 10, 64) // field 22
	if err != nil {
		return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: starttime: %w", err)
	}
	return procStat{state: f[0][0], ppid: int32(ppid), startTicks: start}, nil
}

// isNoSuchProcess reports whether err from reading /proc means the process
// is not there (its directory is gone, or it exited while we read).
func isNoSuchProcess(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) ||
		errors.Is(err, process.ErrorProcessNotRunning)
}

// readUptime returns the seconds since boot from /proc/uptime, to the
// hundredth of a second.
func readUptime() (float64, error) {
	b, err := os.ReadFile(procPath("uptime"))
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0, fmt.Errorf("parse /proc/uptime: %q", b)
	}
	return strconv.ParseFloat(string(f[0]), 64)
}

// bootTimeCache holds the host's boot time once read. It comes from the btime
// line of /proc/stat, which does not drift as now − uptime does.
var bootTimeCache struct {
	sync.Mutex
	t time.Time
}

func hostBootTime() (time.Time, error) {
	bootTimeCache.Lock()
	defer bootTimeCache.Unlock()
	if !bootTimeCache.t.IsZero() {
		return bootTimeCache.t, nil
	}
	b, err := os.ReadFile(procPath("stat"))
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			secs, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("read boot time: %w", err)
			}
			bootTimeCache.t = time.Unix(secs, 0)
			return bootTimeCache.t, nil
		}
	}
	return time.Time{}, errors.New("read boot time: no btime line in /proc/stat")
}
