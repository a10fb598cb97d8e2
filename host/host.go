// Package host is where nvgo reads the host's processes: the Source a
// Library takes with nvgo.WithHostSource, in nvgo's terms (a process's
// state, owner, command line; the machine's boot time and memory) rather
// than procfs files. ProcFS, the host's own procfs, is the default; the
// fake fleet's package fakegpu/fakehost is another, whose simulated
// processes look like real ones.
//
// A program that only reads GPUs never needs this package: it is for
// those who give nvgo a host of their own (a simulation, a recorded
// machine), as database/sql/driver is for drivers.
package host

import (
	"os"
	"os/user"
	"strconv"
	"syscall"
	"time"

	"github.com/nvgo/nvgo/internal/procfs"
)

// Source is a host's processes and the facts about the machine they are
// read against. Implementations must be safe for concurrent use.
//
// A method about a process that does not exist returns an error matching
// fs.ErrNotExist; about data that belongs to another user, one matching
// fs.ErrPermission; about data the source does not have (a simulated
// process's environment, say), one matching errors.ErrUnsupported.
type Source interface {
	// Stat returns what process pid is now.
	Stat(pid int) (ProcessStat, error)
	// Owner returns the real user ID of process pid.
	Owner(pid int) (uint32, error)
	// Cmdline returns process pid's command line: empty (not nil) for a
	// kernel thread or a zombie.
	Cmdline(pid int) ([]string, error)
	// Environ returns process pid's environment as "KEY=value" strings.
	Environ(pid int) ([]string, error)
	// Cwd returns process pid's working directory.
	Cwd(pid int) (string, error)
	// PIDs lists the processes.
	PIDs() ([]int, error)
	// Username returns the name of a user ID, or an error when it has none.
	Username(uid uint32) (string, error)
	// BootTime returns when the host booted.
	BootTime() (time.Time, error)
	// Uptime returns the time since the host booted.
	Uptime() (time.Duration, error)
	// MemoryTotal returns the host's physical memory in bytes.
	MemoryTotal() (uint64, error)
	// HostPIDs reports whether the PIDs NVML reports (the host's) name
	// this source's processes: false in a container without the host's
	// PID namespace, where they would name unrelated processes.
	HostPIDs() bool
	// Signal sends sig to process pid, through a handle on the process
	// taken before it calls same; same returns an error when the PID no
	// longer holds the process meant, and then nothing is sent and that
	// error is returned. Errors of the sending itself are the operating
	// system's (syscall.ESRCH, syscall.EPERM, os.ErrProcessDone). Signal
	// 0 checks that the process may be signalled and sends nothing.
	Signal(pid int, sig syscall.Signal, same func() error) error
}

// ProcessStat is what a process is at one moment.
type ProcessStat struct {
	// Name is the kernel's name of the process (on Linux at most 15
	// bytes; nvgo extends a cut one from the command line).
	Name string
	// State is the process state in psutil's words: "running",
	// "sleeping", "disk-sleep", "stopped", "tracing-stop", "zombie",
	// "dead", "wake-kill", "waking", "parked" or "idle".
	State string
	// PPID is the parent's PID; 0 when the parent is not visible.
	PPID int
	// Start is when the process started, after the host booted, to the
	// clock tick (10 ms): with the PID, it tells a process from a later
	// one that reuses its PID.
	Start time.Duration
	// CPUTime is the CPU time the process used, user and system.
	CPUTime time.Duration
	// RSS is its resident memory in bytes.
	RSS uint64
}

// ProcFS is the Source of this machine: Linux's procfs mounted at Root, and
// the system's user database. The zero ProcFS reads $HOST_PROC when that is
// set (as gopsutil does), else /proc.
type ProcFS struct {
	// Root is where procfs is mounted; "" means $HOST_PROC, else /proc.
	Root string
}

func (p ProcFS) fs() procfs.FS { return procfs.FS{Root: p.Root} }

// Stat implements Source.
func (p ProcFS) Stat(pid int) (ProcessStat, error) {
	var buf [procfs.StatBufSize]byte
	b, err := p.fs().ReadFile(pid, "stat", buf[:])
	if err != nil {
		return ProcessStat{}, err
	}
	st, err := procfs.ParseStat(b)
	if err != nil {
		return ProcessStat{}, err
	}
	return ProcessStat{Name: procfs.Comm(b), State: st.State, PPID: st.PPID,
		Start: st.Start, CPUTime: st.CPUTime, RSS: st.RSS}, nil
}

// Owner implements Source.
func (p ProcFS) Owner(pid int) (uint32, error) { return p.fs().UID(pid) }

// Cmdline implements Source.
func (p ProcFS) Cmdline(pid int) ([]string, error) { return p.fs().Cmdline(pid) }

// Environ implements Source.
func (p ProcFS) Environ(pid int) ([]string, error) { return p.fs().Environ(pid) }

// Cwd implements Source.
func (p ProcFS) Cwd(pid int) (string, error) { return p.fs().ReadLink(pid, "cwd") }

// PIDs implements Source.
func (p ProcFS) PIDs() ([]int, error) { return p.fs().PIDs() }

// Username implements Source through the system's user database.
func (ProcFS) Username(uid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

// BootTime implements Source.
func (p ProcFS) BootTime() (time.Time, error) { return p.fs().BootTime() }

// Uptime implements Source.
func (p ProcFS) Uptime() (time.Duration, error) { return p.fs().Uptime() }

// MemoryTotal implements Source.
func (p ProcFS) MemoryTotal() (uint64, error) {
	m, err := p.fs().MemInfo()
	return m.Total, err
}

// HostPIDs implements Source: whether this process shares the host's PID
// namespace.
func (ProcFS) HostPIDs() bool { return procfs.InHostPIDNamespace() }

// Signal implements Source with kill(2). Where the kernel has pidfds
// (Linux 5.3 and later) the handle is one, so a PID reused between same
// and the sending cannot receive the signal.
func (ProcFS) Signal(pid int, sig syscall.Signal, same func() error) error {
	proc, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer proc.Release()
	if err := same(); err != nil {
		return err
	}
	return proc.Signal(sig)
}
