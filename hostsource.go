package nvgo

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/jellydator/ttlcache/v3"
)

// HostSource is where nvgo reads the host's processes: their procfs files
// and the names of their users. The default, HostProcFS, is the host's own
// procfs. A simulation hands nvgo another with WithHostSource, such as a
// fake fleet's (fakegpu.Fleet.HostSource), whose simulated processes carry
// believable owners, command lines, start times and CPU and memory use
// while every other PID reads the real procfs.
//
// Implementations must be safe for concurrent use.
type HostSource interface {
	// ReadFile returns the contents of file name of process pid, or of the
	// machine for pid 0, as procfs names them: for a process "stat",
	// "status", "cmdline" and "environ"; for the machine "stat", "meminfo"
	// and "uptime". It may use buf when the file fits. A process that does
	// not exist gives an error matching fs.ErrNotExist; data that belongs to
	// another user one matching fs.ErrPermission.
	ReadFile(pid int, name string, buf []byte) ([]byte, error)
	// ReadLink returns the target of link name of process pid ("cwd").
	ReadLink(pid int, name string) (string, error)
	// PIDs lists the processes.
	PIDs() ([]int, error)
	// Username returns the name of a user ID, or an error when it has none.
	Username(uid uint32) (string, error)
	// HostPIDs reports whether the PIDs NVML reports (the host's) name this
	// source's processes: false in a container without the host's PID
	// namespace, where they would name unrelated processes.
	HostPIDs() bool
}

// HostProcFS returns the HostSource of this machine: procfs at $HOST_PROC
// when that is set (as gopsutil reads it), else /proc, and the system's
// user database.
func HostProcFS() HostSource { return procfsSource{} }

// procfsSource reads the real procfs.
type procfsSource struct{}

func (procfsSource) ReadFile(pid int, name string, buf []byte) ([]byte, error) {
	if len(buf) > 0 {
		b, err := readProcFile(buf, int32(pid), name)
		if !errors.Is(err, syscall.EFBIG) {
			return b, err
		}
	}
	if pid == 0 {
		return os.ReadFile(procPath(name))
	}
	return os.ReadFile(procPath(strconv.Itoa(pid), name))
}

func (procfsSource) ReadLink(pid int, name string) (string, error) {
	return os.Readlink(procPath(strconv.Itoa(pid), name))
}

func (procfsSource) PIDs() ([]int, error) {
	ents, err := os.ReadDir(procRoot())
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.ParseInt(e.Name(), 10, 32); err == nil && pid > 0 {
			pids = append(pids, int(pid))
		}
	}
	return pids, nil
}

func (procfsSource) Username(uid uint32) (string, error) {
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return "", err
	}
	return u.Username, nil
}

func (procfsSource) HostPIDs() bool { return inHostPIDNamespace() }

// hostFS is nvgo's reader over a HostSource, with what it remembers of the
// machine: the boot time, the physical memory and user names.
type hostFS struct {
	src HostSource

	bootMu sync.Mutex
	boot   time.Time

	memMu  sync.Mutex
	mem    uint64
	memAt  time.Time
	byUser *ttlcache.Cache[uint32, string]
}

func newHostFS(src HostSource) *hostFS {
	return &hostFS{src: src, byUser: ttlcache.New(
		ttlcache.WithTTL[uint32, string](5*time.Minute),
		ttlcache.WithDisableTouchOnHit[uint32, string](),
		ttlcache.WithCapacity[uint32, string](4096),
	)}
}

// HostProcess returns the process that holds pid now, read from the
// Library's host source (WithHostSource), as NewHostProcess reads the
// host's procfs. It returns an error wrapping ErrProcessGone when there is
// no such process. To act on a process seen earlier (a signal, say), compare
// its CreateTime with the one seen: the PID may hold another process now.
func (l *Library) HostProcess(pid int) (*HostProcess, error) {
	if pid <= 0 || pid > math.MaxInt32 {
		return nil, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)
	}
	return l.hosts.fs.process(pid)
}

// hostProcFS is the reader of the host's own procfs, for what no Library
// names a source for (NewHostProcess).
var hostProcFS = newHostFS(HostProcFS())
