package nvgo

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nvgo/nvgo/internal/procfs"
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
// for a PID from NVML that this process cannot see (see GpuProcess). What
// cannot change while the process lives, its name and its owner, is read
// once; Snapshot reads the command line once too (see Snapshot).
//
// Create one with NewHostProcess; the zero HostProcess reports every field
// as gone. A HostProcess is safe for concurrent use.
type HostProcess struct {
	pid int32
	fs  *hostReader // where it is read
	// start is the start time after boot, to the clock tick, as the host
	// source gives it; with pid it is the process's identity. It is exact
	// where a create time in seconds is rounded and recomputed from a boot
	// time that drifts with the uptime.
	start      time.Duration
	createTime Value[time.Time]

	// unreadable is not Available for a PID that was never readable (not
	// visible from this PID namespace, or gone when it was looked up);
	// every method then reports unreadableErr.
	unreadable    Reason
	unreadableErr error

	// gone is set once the PID is seen to no longer hold this process; a
	// process does not come back.
	gone atomic.Bool

	mu       sync.Mutex       // guards the fields below
	name     string           // "" until read while the identity check passed
	username string           // likewise
	cmdline  []string         // the last command line read; nil until read
	command  string           // cmdline joined by CommandJoin
	cpu      processCPUSample // the previous CPUPercent reading
}

// processCPUSample is a reading of a process's CPU time for CPUPercent.
type processCPUSample struct {
	at      time.Time
	cpu     time.Duration // user + system
	percent Percent
}

// NewHostProcess returns the process that holds pid now on this machine,
// read from its procfs (host.ProcFS), as psutil.Process(pid) does. It
// returns an error wrapping ErrProcessGone when there is no such process.
// It reads no Library's host: Library.HostProcess reads the host a Library
// was opened with (WithHostSource), a simulation's, say.
//
// The PID is read in this process's PID namespace; NewHostProcess makes no
// PID-namespace check, since the caller chose the PID.
func NewHostProcess(pid int) (*HostProcess, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
	}
	return hostProcFS.process(pid)
}

// process returns the process that holds pid now (NewHostProcess).
func (h *hostReader) process(pid int) (*HostProcess, error) {
	st, err := h.stat(int32(pid))
	if err != nil {
		if procfs.IsNotExist(err) {
			return nil, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
		}
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	return h.processFromStat(int32(pid), st), nil
}

// processFromStat returns the process with the identity st records.
func (h *hostReader) processFromStat(pid int32, st procfs.Stat) *HostProcess {
	p := &HostProcess{pid: pid, fs: h, start: st.Start}
	if boot, err := h.bootTime(); err != nil {
		p.createTime = NA[time.Time](ReasonOf(err), err)
	} else {
		p.createTime = Some(boot.Add(st.Start))
	}
	return p
}

// newHostProcessAt returns a HostProcess for pid with the given start time,
// whether or not that is the process holding the PID (tests use it to fake a
// reused PID).
func newHostProcessAt(pid int32, start time.Duration) *HostProcess {
	return hostProcFS.processFromStat(pid, procfs.Stat{Start: start})
}

// newUnreadableHostProcess returns a HostProcess whose every host field is
// N/A with the given reason and error.
func newUnreadableHostProcess(pid int32, reason Reason, err error) *HostProcess {
	return &HostProcess{
		pid:           pid,
		fs:            hostProcFS,
		createTime:    NA[time.Time](reason, err),
		unreadable:    reason,
		unreadableErr: err,
	}
}

// files returns where p is read: its source, or the host's procfs for the
// zero HostProcess.
func (p *HostProcess) files() *hostReader {
	if p.fs == nil {
		return hostProcFS
	}
	return p.fs
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

// unusable returns why p can be read no more (a PID never readable, a
// process gone, the zero HostProcess), or nil.
func (p *HostProcess) unusable() error {
	switch {
	case p.unreadable != Available:
		return p.unreadableErr
	case p.gone.Load() || p.start == 0 && p.pid == 0: // the zero HostProcess holds no process
		return p.goneErr()
	}
	return nil
}

// check reads the process's stat and returns it, or an error wrapping
// ErrProcessGone unless the PID still holds this process (a zombie still
// does). Whatever else was read before a check is known to be this
// process's once the check passes: a PID cannot go back to an exited
// process.
func (p *HostProcess) check() (procfs.Stat, error) {
	if err := p.unusable(); err != nil {
		return procfs.Stat{}, err
	}
	st, err := p.files().stat(p.pid)
	if err != nil {
		if procfs.IsNotExist(err) {
			p.gone.Store(true)
			return st, p.goneErr()
		}
		return st, p.wrapErr(err)
	}
	return st, p.verify(st)
}

// verify says whether a stat just read is this process's.
func (p *HostProcess) verify(st procfs.Stat) error {
	if st.Start != p.start {
		p.gone.Store(true)
		return p.goneErr()
	}
	return nil
}

// wrapErr gives err the pid and, for a permission error, ErrNoPermission, so
// that ReasonOf says NoPermission.
func (p *HostProcess) wrapErr(err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("pid %d: %w: %w", p.pid, ErrNoPermission, err)
	}
	return fmt.Errorf("pid %d: %w", p.pid, err)
}

// readHostValue reads one value with read, then checks the identity, so
// that what was read is known to be this process's. zombieEmpty reports
// whether a value read from a zombie means the data is gone (a zombie's
// command line, environment and working directory read as empty or fail);
// nil means only an error does.
func readHostValue[T any](p *HostProcess, read func() (T, error), zombieEmpty func(T) bool) Value[T] {
	if err := p.unusable(); err != nil {
		return NA[T](ReasonOf(err), err)
	}
	v, err := read()
	st, cerr := p.check()
	if cerr != nil {
		return NA[T](ReasonOf(cerr), cerr)
	}
	if st.IsZombie() && (err != nil || (zombieEmpty != nil && zombieEmpty(v))) {
		return NA[T](Zombie, p.zombieErr())
	}
	if err != nil {
		if procfs.IsNotExist(err) {
			// Exiting, but not yet a zombie when checked.
			return NA[T](ProcessGone, fmt.Errorf("pid %d: %w: %w", p.pid, ErrProcessGone, err))
		}
		err = p.wrapErr(err)
		return NA[T](ReasonOf(err), err)
	}
	return Some(v)
}

func (p *HostProcess) zombieErr() error { return fmt.Errorf("pid %d: %w", p.pid, ErrZombie) }

// statValue reads one value from the process's stat, which is also the
// identity check.
func statValue[T any](p *HostProcess, get func(procfs.Stat) Value[T]) Value[T] {
	st, err := p.check()
	if err != nil {
		return NA[T](ReasonOf(err), err)
	}
	return get(st)
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
	return Map(p.CreateTime(), runningSince)
}

func runningSince(t time.Time) time.Duration { return max(time.Since(t), 0) }

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
	v := readHostValue(p, func() (string, error) { return p.readName() }, nil)
	if name, ok := v.Get(); ok && name != "" {
		p.mu.Lock()
		p.name = name
		p.mu.Unlock()
	}
	return v
}

// readName reads the kernel's name of the process, and when it is cut to
// the kernel's 15 bytes, takes the whole one from the first argument of
// the command line, as psutil does.
func (p *HostProcess) readName() (string, error) {
	comm, err := p.files().comm(p.pid)
	if err != nil {
		return "", err
	}
	return p.files().nameFromComm(p.pid, comm), nil
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
	v := readHostValue(p, func() (string, error) {
		uid, err := p.files().src.Owner(int(p.pid))
		if err != nil {
			return "", err
		}
		return p.files().username(uid), nil
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
	v := readHostValue(p, func() ([]string, error) { return p.files().src.Cmdline(int(p.pid)) },
		func(args []string) bool { return len(args) == 0 })
	if args, ok := v.Get(); ok {
		command := CommandJoin(args)
		p.mu.Lock()
		p.cmdline, p.command = args, command
		p.mu.Unlock()
	}
	return v
}

// Command returns the command line as one line a shell user can read (see
// CommandJoin).
func (p *HostProcess) Command() Value[string] { return Map(p.Cmdline(), CommandJoin) }

// Cwd returns the process's working directory.
func (p *HostProcess) Cwd() Value[string] {
	return readHostValue(p, func() (string, error) { return p.files().src.Cwd(int(p.pid)) }, nil)
}

// Environ returns the process's environment as "KEY=value" strings. It is
// N/A (NoPermission) for another user's process unless we are root.
func (p *HostProcess) Environ() Value[[]string] {
	return readHostValue(p, func() ([]string, error) { return p.files().src.Environ(int(p.pid)) },
		func(env []string) bool { return len(env) == 0 })
}

// Status returns the process state in psutil's words: "running",
// "sleeping", "disk-sleep", "stopped", "tracing-stop", "zombie", "dead",
// "wake-kill", "waking", "parked" or "idle".
func (p *HostProcess) Status() Value[string] {
	return statValue(p, func(st procfs.Stat) Value[string] { return Some(st.State) })
}

// CPUPercent returns the share of one CPU the process used, in percent; a
// process busy on several CPUs shows more than 100. It is measured from the
// previous call on this HostProcess to this one. The first call returns the
// average since the process started (and starts the next interval), so keep
// the same HostProcess between calls for the current use.
func (p *HostProcess) CPUPercent() Value[Percent] {
	return statValue(p, func(st procfs.Stat) Value[Percent] { return Some(p.cpuPercent(st, time.Now())) })
}

// cpuPercent takes the CPU reading of a stat read at now.
func (p *HostProcess) cpuPercent(st procfs.Stat, now time.Time) Percent {
	cpu := st.CPUTime
	p.mu.Lock()
	defer p.mu.Unlock()
	prev := p.cpu
	var pct Percent
	switch {
	case prev.at.IsZero():
		// The boot time is known only to the second, so measure the
		// process's age from the uptime, to the clock tick like its start.
		if up, err := p.files().src.Uptime(); err == nil {
			if age := up - p.start; age > 0 {
				pct = Percent(cpu.Seconds() / age.Seconds() * 100)
			}
		}
	case now.Sub(prev.at) < time.Millisecond:
		return prev.percent // too short an interval to measure
	default:
		used := (cpu - min(prev.cpu, cpu)).Seconds()
		pct = Percent(used / now.Sub(prev.at).Seconds() * 100)
	}
	p.cpu = processCPUSample{at: now, cpu: cpu, percent: pct}
	return pct
}

// HostMemory returns the process's resident memory (resident set size).
// N/A (Zombie) for a zombie, which has none.
func (p *HostProcess) HostMemory() Value[Bytes] {
	return statValue(p, p.rss)
}

// rss is the resident memory of a stat: N/A (Zombie) for a zombie, which
// has none.
func (p *HostProcess) rss(st procfs.Stat) Value[Bytes] {
	if st.IsZombie() {
		return NA[Bytes](Zombie, p.zombieErr())
	}
	return Some(Bytes(st.RSS))
}

// HostMemoryPercent returns the process's resident memory as a percentage
// of the host's physical memory.
func (p *HostProcess) HostMemoryPercent() Value[Percent] {
	return p.files().memoryPercent(p.HostMemory())
}

// memoryPercent is rss as a percentage of the host's memory.
func (h *hostReader) memoryPercent(rss Value[Bytes]) Value[Percent] {
	b, ok := rss.Get()
	if !ok {
		return Map(rss, func(Bytes) Percent { return 0 })
	}
	total, err := h.memTotal()
	if err != nil {
		return NA[Percent](ReasonOf(err), err)
	}
	return Some(Percent(float64(b) / float64(total) * 100))
}

// ErrNoParent is wrapped by HostProcess.Parent for a process with no parent
// that can be seen: PID 1, a kernel thread, or a process whose parent is
// outside this PID namespace. It matches ErrNotFound too.
var ErrNoParent = fmt.Errorf("no visible parent: %w", ErrNotFound)

// Parent returns the process's parent. It returns an error wrapping
// ErrNoParent when the process has none that can be seen, and one wrapping
// ErrProcessGone when this process, or the parent, is gone.
func (p *HostProcess) Parent() (*HostProcess, error) {
	st, err := p.check()
	if err != nil {
		return nil, err
	}
	if st.PPID <= 0 {
		return nil, fmt.Errorf("pid %d: %w", p.pid, ErrNoParent)
	}
	parent, err := p.files().process(st.PPID)
	if err != nil {
		return nil, err
	}
	// A parent cannot start after its child; if it seems to, the parent
	// exited and its PID was reused after we read it.
	if parent.start > p.start {
		return nil, fmt.Errorf("parent of pid %d: %w", p.pid, ErrProcessGone)
	}
	return parent, nil
}

// Children returns the process's children, by PID.
func (p *HostProcess) Children() ([]*HostProcess, error) {
	if _, err := p.check(); err != nil {
		return nil, err
	}
	pids, err := p.files().src.PIDs()
	if err != nil {
		return nil, p.wrapErr(err)
	}
	var children []*HostProcess
	for _, pid := range pids {
		st, err := p.files().stat(int32(pid))
		// A child cannot start before its parent; one that seems to has
		// been reparented to a successor of ours (and check below fails).
		if err == nil && st.PPID == int(p.pid) && st.Start >= p.start {
			children = append(children, p.files().processFromStat(int32(pid), st))
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
// A permission error wraps ErrNoPermission. The signal goes through the
// Library's host source (WithHostSource): a simulated process is signalled
// in its simulation, never as the real process that has its PID.
func (p *HostProcess) Signal(sig syscall.Signal) error {
	if p.unreadable != Available {
		return fmt.Errorf("signal %v: %w", sig, p.unreadableErr)
	}
	var checkErr error
	err := p.files().src.Signal(int(p.pid), sig, func() error {
		_, checkErr = p.check()
		return checkErr
	})
	switch {
	case err == nil:
		return nil
	case checkErr != nil:
		return fmt.Errorf("signal %v: %w", sig, checkErr)
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
