package nvgo

import (
	"fmt"
	"sync"
	"time"

	"github.com/jellydator/ttlcache/v3"

	"github.com/nvgo/nvgo/host"
	"github.com/nvgo/nvgo/internal/procfs"
)

// hostReader is nvgo's reader over a host.Source (WithHostSource), with
// what it remembers of the machine: the boot time, the physical memory and
// user names. Over the host's own procfs (host.ProcFS) it reads the
// per-process files itself, without allocating (internal/procfs).
type hostReader struct {
	src host.Source
	// procfs is set when src is a host.ProcFS: its mount point.
	procfs   procfs.FS
	isProcFS bool

	bootMu sync.Mutex
	boot   time.Time

	memMu  sync.Mutex
	mem    uint64
	memAt  time.Time
	byUser *ttlcache.Cache[uint32, string]
}

func newHostReader(src host.Source) *hostReader {
	h := &hostReader{src: src, byUser: ttlcache.New(
		ttlcache.WithTTL[uint32, string](5*time.Minute),
		ttlcache.WithDisableTouchOnHit[uint32, string](),
		ttlcache.WithCapacity[uint32, string](4096),
	)}
	if fs, ok := src.(host.ProcFS); ok {
		h.procfs, h.isProcFS = procfs.FS{Root: fs.Root}, true
	}
	return h
}

// hostProcFS is the reader of the host's own procfs, for what no Library
// names a source for (NewHostProcess).
var hostProcFS = newHostReader(host.ProcFS{})

// statBufs are buffers for /proc/PID/stat: a buffer handed to the read
// system call would move to the heap at every read.
var statBufs = sync.Pool{New: func() any { return new([procfs.StatBufSize]byte) }}

// stat reads what process pid is now.
func (h *hostReader) stat(pid int32) (procfs.Stat, error) {
	if h.isProcFS {
		buf := statBufs.Get().(*[procfs.StatBufSize]byte)
		defer statBufs.Put(buf)
		b, err := h.procfs.ReadFile(int(pid), "stat", buf[:])
		if err != nil {
			return procfs.Stat{}, err
		}
		return procfs.ParseStat(b)
	}
	st, err := h.src.Stat(int(pid))
	return statOf(st), err
}

// statOf is a source's stat without its name.
func statOf(st host.ProcessStat) procfs.Stat {
	return procfs.Stat{State: st.State, PPID: st.PPID, Start: st.Start, CPUTime: st.CPUTime, RSS: st.RSS}
}

// comm reads the kernel's name of process pid.
func (h *hostReader) comm(pid int32) (string, error) {
	if h.isProcFS {
		buf := statBufs.Get().(*[procfs.StatBufSize]byte)
		defer statBufs.Put(buf)
		b, err := h.procfs.ReadFile(int(pid), "stat", buf[:])
		if err != nil {
			return "", err
		}
		return procfs.Comm(b), nil
	}
	st, err := h.src.Stat(int(pid))
	return st.Name, err
}

// nameFromComm extends a kernel command name cut to 15 bytes from the
// command line's first argument when that starts with it, as psutil does.
func (h *hostReader) nameFromComm(pid int32, comm string) string {
	if len(comm) < 15 {
		return comm
	}
	args, err := h.src.Cmdline(int(pid))
	if err != nil || len(args) == 0 {
		return comm
	}
	exe := args[0]
	if i := lastSlash(exe); i >= 0 {
		exe = exe[i+1:]
	}
	if len(exe) > len(comm) && exe[:len(comm)] == comm {
		return exe
	}
	return comm
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}

// bootTime returns the host's boot time, read once.
func (h *hostReader) bootTime() (time.Time, error) {
	h.bootMu.Lock()
	defer h.bootMu.Unlock()
	if !h.boot.IsZero() {
		return h.boot, nil
	}
	t, err := h.src.BootTime()
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	h.boot = t
	return t, nil
}

// memTotalTTL is how long the host's physical memory is taken as read (it
// changes only with memory hot-plug).
const memTotalTTL = 10 * time.Second

// memTotal returns the host's physical memory, in bytes.
func (h *hostReader) memTotal() (uint64, error) {
	h.memMu.Lock()
	defer h.memMu.Unlock()
	if h.mem != 0 && time.Since(h.memAt) < memTotalTTL {
		return h.mem, nil
	}
	m, err := h.src.MemoryTotal()
	if err != nil {
		return 0, fmt.Errorf("read host memory: %w", err)
	}
	if m == 0 {
		return 0, fmt.Errorf("read host memory: a total of 0: %w", ErrNotReported)
	}
	h.mem, h.memAt = m, time.Now()
	return m, nil
}

// username returns the name of a user ID, or the ID in decimal when it has
// no name on this host (e.g. a user from a container). Names are kept a
// while: looking one up can mean a round trip to a directory service, and
// every process of a user asks.
func (h *hostReader) username(uid uint32) string {
	if it := h.byUser.Get(uid); it != nil {
		return it.Value()
	}
	name, err := h.src.Username(uid)
	if err != nil || name == "" {
		name = fmt.Sprint(uid)
	}
	h.byUser.Set(uid, name, ttlcache.DefaultTTL)
	return name
}
