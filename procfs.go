package nvgo

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// nvgo's one reader of /proc: every host-process figure comes from here.
// A snapshot reads one file per process, /proc/<pid>/stat, which holds its
// identity (start time), state, CPU times and resident memory; what cannot
// change while the process lives (its name, owner, command line) is read
// once per process (see HostProcess). Like gopsutil, it reads procfs at
// $HOST_PROC when that is set.

// procRoot is the procfs mount point: $HOST_PROC, else /proc.
func procRoot() string {
	if root := os.Getenv("HOST_PROC"); root != "" {
		return root
	}
	return "/proc"
}

// procPath returns a path under procfs.
func procPath(elem ...string) string {
	return filepath.Join(append([]string{procRoot()}, elem...)...)
}

// statBufSize holds any /proc/<pid>/stat (its command name is at most 64
// bytes, the 50 numbers at most 20 digits each).
const statBufSize = 1536

// procStat is what nvgo reads from /proc/<pid>/stat.
type procStat struct {
	state        byte   // R, S, D, Z, T, ...
	ppid         int32  // 0 when the parent is outside our PID namespace
	startTicks   uint64 // start time in clock ticks after boot
	utime, stime uint64 // CPU time in clock ticks
	rssPages     int64  // resident set size, in pages
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

// statBufs are buffers for /proc/<pid>/stat: a buffer handed to the read
// system call would move to the heap at every read.
var statBufs = sync.Pool{New: func() any { return new([statBufSize]byte) }}

// stat reads /proc/<pid>/stat.
func (h *hostFS) stat(pid int32) (procStat, error) {
	buf := statBufs.Get().(*[statBufSize]byte)
	defer statBufs.Put(buf)
	b, err := h.src.ReadFile(int(pid), "stat", buf[:])
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// parseProcStat parses the contents of /proc/<pid>/stat (see proc(5)). The
// command name in parentheses may itself hold spaces and parentheses, so the
// fields are counted from the last ')'. It allocates nothing.
func parseProcStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: no ')' in %q", b)
	}
	var st procStat
	// Fields after the name, counting the state as 0 (proc(5)'s field 3).
	const (
		fState, fPPID, fUtime, fStime, fStart, fRSS = 0, 1, 11, 12, 19, 21
	)
	rest := b[i+1:]
	for n := 0; n <= fRSS; n++ {
		for len(rest) > 0 && (rest[0] == ' ' || rest[0] == '\n') {
			rest = rest[1:]
		}
		end := 0
		for end < len(rest) && rest[end] != ' ' && rest[end] != '\n' {
			end++
		}
		field := rest[:end]
		rest = rest[end:]
		if len(field) == 0 {
			return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: too few fields in %q", b)
		}
		var err error
		switch n {
		case fState:
			if len(field) != 1 {
				return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: state %q", field)
			}
			st.state = field[0]
		case fPPID:
			var v int64
			v, err = parseDec(field)
			st.ppid = int32(v)
		case fUtime:
			st.utime, err = parseUDec(field)
		case fStime:
			st.stime, err = parseUDec(field)
		case fStart:
			st.startTicks, err = parseUDec(field)
		case fRSS:
			st.rssPages, err = parseDec(field)
		}
		if err != nil {
			return procStat{}, fmt.Errorf("parse /proc/<pid>/stat: field %d: %w", n+3, err)
		}
	}
	return st, nil
}

// statComm returns the command name of a /proc/<pid>/stat: the kernel's,
// cut to 15 bytes for most processes.
func statComm(b []byte) string {
	i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if i < 0 || j < i {
		return ""
	}
	return string(b[i+1 : j])
}

var errBadNumber = errors.New("not a decimal number")

// parseUDec parses an unsigned decimal number without allocating.
func parseUDec(b []byte) (uint64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, errBadNumber
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, errBadNumber
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, errBadNumber
		}
		v = v*10 + d
	}
	return v, nil
}

// parseDec parses a signed decimal number without allocating.
func parseDec(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, err := parseUDec(b)
	if err != nil || u > 1<<63 || !neg && u == 1<<63 {
		return 0, errBadNumber
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// uid reads the real user ID from /proc/<pid>/status.
func (h *hostFS) uid(pid int32) (uint32, error) {
	var buf [4096]byte
	b, err := h.src.ReadFile(int(pid), "status", buf[:])
	if err != nil {
		return 0, err
	}
	return parseStatusUID(b)
}

// parseStatusUID returns the real user ID of a /proc/<pid>/status.
func parseStatusUID(b []byte) (uint32, error) {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if rest, ok := bytes.CutPrefix(line, []byte("Uid:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 0 {
				break
			}
			uid, err := strconv.ParseUint(string(f[0]), 10, 32)
			if err != nil {
				return 0, fmt.Errorf("parse /proc/<pid>/status: Uid: %w", err)
			}
			return uint32(uid), nil
		}
	}
	return 0, errors.New("parse /proc/<pid>/status: no Uid line")
}

// cmdline reads /proc/<pid>/cmdline, without the trailing empty arguments
// that programs which rewrite their title (setproctitle) leave behind; an
// empty command line (a kernel thread, a zombie) is empty, not nil.
func (h *hostFS) cmdline(pid int32) ([]string, error) {
	b, err := h.src.ReadFile(int(pid), "cmdline", nil)
	if err != nil {
		return nil, err
	}
	args := []string{}
	for _, a := range bytes.Split(b, []byte{0}) {
		args = append(args, string(a))
	}
	for len(args) > 0 && args[len(args)-1] == "" {
		args = args[:len(args)-1]
	}
	return args, nil
}

// environ reads /proc/<pid>/environ as "KEY=value" strings.
func (h *hostFS) environ(pid int32) ([]string, error) {
	b, err := h.src.ReadFile(int(pid), "environ", nil)
	if err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range bytes.Split(b, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return env, nil
}

// cwd reads the target of /proc/<pid>/cwd.
func (h *hostFS) cwd(pid int32) (string, error) { return h.src.ReadLink(int(pid), "cwd") }

// isNoSuchProcess reports whether err from reading /proc means the process
// is not there (its directory is gone, or it exited while we read).
func isNoSuchProcess(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// uptime returns the seconds since boot from /proc/uptime, to the
// hundredth of a second.
func (h *hostFS) uptime() (float64, error) {
	var buf [128]byte
	b, err := h.src.ReadFile(0, "uptime", buf[:])
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0, fmt.Errorf("parse /proc/uptime: %q", b)
	}
	return strconv.ParseFloat(string(f[0]), 64)
}

// bootTime returns the host's boot time, read once. It comes from the btime
// line of /proc/stat, which does not drift as now − uptime does.
func (h *hostFS) bootTime() (time.Time, error) {
	h.bootMu.Lock()
	defer h.bootMu.Unlock()
	if !h.boot.IsZero() {
		return h.boot, nil
	}
	b, err := h.src.ReadFile(0, "stat", nil)
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			secs, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("read boot time: %w", err)
			}
			h.boot = time.Unix(secs, 0)
			return h.boot, nil
		}
	}
	return time.Time{}, errors.New("read boot time: no btime line in /proc/stat")
}

// memTotalTTL is how long the host's physical memory is taken as read (it
// changes only with memory hot-plug).
const memTotalTTL = 10 * time.Second

// memTotal returns MemTotal from /proc/meminfo, in bytes.
func (h *hostFS) memTotal() (uint64, error) {
	h.memMu.Lock()
	defer h.memMu.Unlock()
	if h.mem != 0 && time.Since(h.memAt) < memTotalTTL {
		return h.mem, nil
	}
	var buf [4096]byte
	b, err := h.src.ReadFile(0, "meminfo", buf[:])
	if err != nil {
		return 0, fmt.Errorf("read host memory: %w", err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("MemTotal:")); ok {
			f := bytes.Fields(v)
			if len(f) == 0 {
				break
			}
			kib, err := parseUDec(f[0])
			if err != nil || kib == 0 {
				break
			}
			h.mem, h.memAt = kib*1024, time.Now()
			return h.mem, nil
		}
	}
	return 0, errors.New("read host memory: no MemTotal in /proc/meminfo")
}

// procError is a failed read of a procfs file. It unwraps to the errno, so
// errors.Is finds fs.ErrNotExist (ENOENT), fs.ErrPermission (EACCES) and
// ESRCH as for an *os.PathError.
type procError struct {
	op, path string
	err      syscall.Errno
}

func (e *procError) Error() string { return e.op + " " + e.path + ": " + e.err.Error() }
func (e *procError) Unwrap() error { return e.err }
