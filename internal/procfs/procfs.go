// Package procfs is nvgo's one reader of Linux's /proc: every figure nvgo
// takes from the kernel about processes and the machine comes through
// here, read the cheap way (one open, one read and one close into a
// caller's buffer; or one pread of a file kept open) and parsed without
// allocating where it runs per process per snapshot. Like gopsutil, it
// reads procfs at $HOST_PROC when that is set.
//
// It knows nothing of nvgo's types: package host turns its figures into a
// host.Source, and the root package reads through that.
package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// ClockTicksPerSecond is USER_HZ, the unit of the times in /proc/PID/stat.
// It is part of the kernel ABI and is 100 on every architecture Go supports.
const ClockTicksPerSecond = 100

// tick is one clock tick.
const tick = time.Second / ClockTicksPerSecond

// PageSize is the unit of the resident set size in /proc/PID/stat.
var PageSize = uint64(os.Getpagesize())

// FS is a procfs mount point. The zero FS is $HOST_PROC when that is set,
// else /proc.
type FS struct {
	// Root is the mount point; "" means $HOST_PROC, else /proc.
	Root string
}

// root returns the mount point.
func (fs FS) root() string {
	if fs.Root != "" {
		return fs.Root
	}
	if root := os.Getenv("HOST_PROC"); root != "" {
		return root
	}
	return "/proc"
}

// Path returns the path of process pid's file name (the machine's for pid
// 0), e.g. /proc/42/stat.
func (fs FS) Path(pid int, name string) string {
	if pid == 0 {
		return filepath.Join(fs.root(), name)
	}
	return filepath.Join(fs.root(), strconv.Itoa(pid), name)
}

// ReadAll reads a file of any size (a command line, an environment).
func (fs FS) ReadAll(pid int, name string) ([]byte, error) {
	return os.ReadFile(fs.Path(pid, name))
}

// ReadLink returns the target of process pid's link name ("cwd").
func (fs FS) ReadLink(pid int, name string) (string, error) {
	return os.Readlink(fs.Path(pid, name))
}

// PIDs lists the processes.
func (fs FS) PIDs() ([]int, error) {
	ents, err := os.ReadDir(fs.root())
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

// Error is a failed read of a procfs file. It unwraps to the errno, so
// errors.Is finds fs.ErrNotExist (ENOENT), fs.ErrPermission (EACCES) and
// ESRCH as for an *os.PathError.
type Error struct {
	Op, Path string
	Err      syscall.Errno
}

func (e *Error) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// IsNotExist reports whether err from reading /proc means the process is
// not there (its directory is gone, or it exited while we read).
func IsNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// TooBig reports whether err says a buffer could not hold a file.
func TooBig(err error) bool { return errors.Is(err, syscall.EFBIG) }

// StatBufSize holds any /proc/PID/stat (its command name is at most 64
// bytes, the 50 numbers at most 20 digits each).
const StatBufSize = 1536

// Stat is what nvgo reads from /proc/PID/stat.
type Stat struct {
	// State is the process state in psutil's words (StateWord).
	State string
	// PPID is the parent's PID; 0 when the parent is outside our PID
	// namespace.
	PPID int
	// Start is the start time after boot, to the clock tick: with the PID,
	// the process's identity.
	Start time.Duration
	// CPUTime is the user and system time used.
	CPUTime time.Duration
	// RSS is the resident set size in bytes.
	RSS uint64
}

// IsZombie reports whether the process exited and awaits its parent.
func (s Stat) IsZombie() bool { return IsZombieState(s.State) }

// IsZombieState reports whether a state word (StateWord) is a zombie's or
// a dead process's.
func IsZombieState(word string) bool { return word == "zombie" || word == "dead" }

// StateWord returns the word psutil uses for a state letter: "running",
// "sleeping", "disk-sleep", "stopped", "tracing-stop", "zombie", "dead",
// "wake-kill", "waking", "parked" or "idle".
func StateWord(state byte) string {
	switch state {
	case 'R':
		return "running"
	case 'S':
		return "sleeping"
	case 'D':
		return "disk-sleep"
	case 'T':
		return "stopped"
	case 't':
		return "tracing-stop"
	case 'Z':
		return "zombie"
	case 'X', 'x':
		return "dead"
	case 'K':
		return "wake-kill"
	case 'W':
		return "waking"
	case 'P':
		return "parked"
	case 'I':
		return "idle"
	}
	return "unknown (" + string(state) + ")"
}

// ParseStat parses the contents of /proc/PID/stat (see proc(5)). The
// command name in parentheses may itself hold spaces and parentheses, so
// the fields are counted from the last ')'. It allocates nothing.
func ParseStat(b []byte) (Stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("parse /proc/PID/stat: no ')' in %q", b)
	}
	var st Stat
	var utime, stime uint64
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
			return Stat{}, fmt.Errorf("parse /proc/PID/stat: too few fields in %q", b)
		}
		var err error
		switch n {
		case fState:
			if len(field) != 1 {
				return Stat{}, fmt.Errorf("parse /proc/PID/stat: state %q", field)
			}
			st.State = StateWord(field[0])
		case fPPID:
			var v int64
			v, err = parseDec(field)
			st.PPID = int(int32(v))
		case fUtime:
			utime, err = parseUDec(field)
		case fStime:
			stime, err = parseUDec(field)
		case fStart:
			var ticks uint64
			ticks, err = parseUDec(field)
			st.Start = ticksDuration(ticks)
		case fRSS:
			var pages int64
			pages, err = parseDec(field)
			st.RSS = uint64(max(pages, 0)) * PageSize
		}
		if err != nil {
			return Stat{}, fmt.Errorf("parse /proc/PID/stat: field %d: %w", n+3, err)
		}
	}
	st.CPUTime = ticksDuration(utime) + ticksDuration(stime)
	return st, nil
}

// ticksDuration is n clock ticks, saturating.
func ticksDuration(n uint64) time.Duration {
	if n > uint64(1<<63-1)/uint64(tick) {
		return 1<<63 - 1
	}
	return time.Duration(n) * tick
}

// Comm returns the command name of a /proc/PID/stat: the kernel's, cut to
// 15 bytes for most processes.
func Comm(b []byte) string {
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

// ParseStatusUID returns the real user ID of a /proc/PID/status.
func ParseStatusUID(b []byte) (uint32, error) {
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
				return 0, fmt.Errorf("parse /proc/PID/status: Uid: %w", err)
			}
			return uint32(uid), nil
		}
	}
	return 0, errors.New("parse /proc/PID/status: no Uid line")
}

// UID reads the real user ID of process pid from its status file.
func (fs FS) UID(pid int) (uint32, error) {
	var buf [4096]byte
	b, err := fs.ReadFile(pid, "status", buf[:])
	if err != nil {
		return 0, err
	}
	return ParseStatusUID(b)
}

// Cmdline reads process pid's command line, without the trailing empty
// arguments that programs which rewrite their title (setproctitle) leave
// behind; an empty command line (a kernel thread, a zombie) is empty, not
// nil.
func (fs FS) Cmdline(pid int) ([]string, error) {
	b, err := fs.ReadAll(pid, "cmdline")
	if err != nil {
		return nil, err
	}
	return ParseCmdline(b), nil
}

// ParseCmdline splits a command line at its NUL bytes (see Cmdline).
func ParseCmdline(b []byte) []string {
	args := []string{}
	for _, a := range bytes.Split(b, []byte{0}) {
		args = append(args, string(a))
	}
	for len(args) > 0 && args[len(args)-1] == "" {
		args = args[:len(args)-1]
	}
	return args
}

// Environ reads process pid's environment as "KEY=value" strings.
func (fs FS) Environ(pid int) ([]string, error) {
	b, err := fs.ReadAll(pid, "environ")
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

// Uptime returns the time since boot from /proc/uptime, to the hundredth
// of a second.
func (fs FS) Uptime() (time.Duration, error) {
	var buf [128]byte
	b, err := fs.ReadFile(0, "uptime", buf[:])
	if err != nil {
		return 0, err
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0, fmt.Errorf("parse /proc/uptime: %q", b)
	}
	secs, err := strconv.ParseFloat(string(f[0]), 64)
	if err != nil || secs < 0 || secs != secs || secs > 1e9 {
		return 0, fmt.Errorf("parse /proc/uptime: %q", b)
	}
	return time.Duration(secs * float64(time.Second)).Round(10 * time.Millisecond), nil
}

// BootTime returns the host's boot time from the btime line of /proc/stat,
// which does not drift as now − uptime does.
func (fs FS) BootTime() (time.Time, error) {
	b, err := fs.ReadAll(0, "stat")
	if err != nil {
		return time.Time{}, fmt.Errorf("read boot time: %w", err)
	}
	return ParseBootTime(b)
}

// ParseBootTime reads the btime line of /proc/stat.
func ParseBootTime(b []byte) (time.Time, error) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
			secs, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("read boot time: %w", err)
			}
			return time.Unix(secs, 0), nil
		}
	}
	return time.Time{}, errors.New("read boot time: no btime line in /proc/stat")
}

// MemInfo is what nvgo reads of /proc/meminfo, in bytes.
type MemInfo struct {
	Total, Free, Available, Buffers uint64
	// Cached is the page cache with the reclaimable slab (as gopsutil and
	// free(1) count it).
	Cached uint64
}

// Used is the memory in use: total − free − buffers − page cache, as
// gopsutil and free(1) give it.
func (m MemInfo) Used() uint64 {
	used := m.Total
	for _, x := range []uint64{m.Free, m.Buffers, m.Cached} {
		used -= min(x, used)
	}
	return used
}

// MemInfo reads /proc/meminfo.
func (fs FS) MemInfo() (MemInfo, error) {
	var buf [8192]byte
	b, err := fs.ReadFile(0, "meminfo", buf[:])
	if TooBig(err) {
		b, err = fs.ReadAll(0, "meminfo")
	}
	if err != nil {
		return MemInfo{}, fmt.Errorf("read host memory: %w", err)
	}
	return ParseMemInfo(b)
}

// ParseMemInfo parses /proc/meminfo. A kernel older than 3.14 has no
// MemAvailable: free memory and the page cache stand for it.
func ParseMemInfo(b []byte) (MemInfo, error) {
	var m MemInfo
	var sreclaimable uint64
	seen := map[string]bool{}
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			continue
		}
		kib, err := parseUDec(f[0])
		if err != nil || kib > 1<<54 {
			continue
		}
		v := kib * 1024
		switch string(name) {
		case "MemTotal":
			m.Total = v
		case "MemFree":
			m.Free = v
		case "MemAvailable":
			m.Available = v
		case "Buffers":
			m.Buffers = v
		case "Cached":
			m.Cached = v
		case "SReclaimable":
			sreclaimable = v
		default:
			continue
		}
		seen[string(name)] = true
	}
	if !seen["MemTotal"] || m.Total == 0 {
		return MemInfo{}, errors.New("read host memory: no MemTotal in /proc/meminfo")
	}
	m.Cached += sreclaimable
	if !seen["MemAvailable"] {
		m.Available = min(m.Free+m.Cached, m.Total)
	}
	return m, nil
}

// CPUTimes is a reading of the host's CPU times over all CPUs, in clock
// ticks, with the number of online CPUs.
type CPUTimes struct {
	Busy, Total float64
	CPUs        int
}

// CPUTimes reads the aggregate CPU times and the CPU count from /proc/stat
// into buf, growing it (up to 4 MiB, for the largest hosts) when the file
// does not fit.
func (fs FS) CPUTimes(buf *[]byte) (CPUTimes, error) {
	const maxSize = 4 << 20
	if *buf == nil {
		*buf = make([]byte, 16<<10)
	}
	for {
		b, err := fs.ReadFile(0, "stat", *buf)
		if TooBig(err) && len(*buf) < maxSize {
			*buf = make([]byte, 2*len(*buf))
			continue
		}
		if err != nil {
			return CPUTimes{}, err
		}
		return ParseCPUTimes(b)
	}
}

// ParseCPUTimes reads /proc/stat's aggregate "cpu" line and counts its
// "cpuN" lines, one per online CPU. Busy time is all but idle and iowait,
// as psutil counts it; guest time is already part of user time, so it is
// not added again.
func ParseCPUTimes(b []byte) (CPUTimes, error) {
	var t CPUTimes
	seen := false
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		rest, ok := bytes.CutPrefix(line, []byte("cpu"))
		if !ok {
			continue
		}
		if len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
			t.CPUs++
			continue
		}
		if len(rest) == 0 || rest[0] != ' ' || seen {
			continue
		}
		// user nice system idle iowait irq softirq steal (guest and
		// guest_nice are counted in user and nice already).
		var v [8]uint64
		f := bytes.Fields(rest)
		if len(f) < 4 {
			return CPUTimes{}, fmt.Errorf("parse /proc/stat: %d CPU times in %q, want at least 4", len(f), line)
		}
		for i := 0; i < len(v) && i < len(f); i++ {
			n, err := parseUDec(f[i])
			if err != nil {
				return CPUTimes{}, fmt.Errorf("parse /proc/stat: %q: %w", line, err)
			}
			v[i] = n
		}
		for _, n := range v {
			t.Total += float64(n)
		}
		t.Busy = max(t.Total-float64(v[3])-float64(v[4]), 0)
		seen = true
	}
	if !seen {
		return CPUTimes{}, errors.New("parse /proc/stat: no aggregate cpu line")
	}
	return t, nil
}

// LoadAvg reads the three load averages from /proc/loadavg.
func (fs FS) LoadAvg() ([3]float64, error) {
	var buf [128]byte
	b, err := fs.ReadFile(0, "loadavg", buf[:])
	if err != nil {
		return [3]float64{}, err
	}
	return ParseLoadAvg(b)
}

// ParseLoadAvg reads the three load averages at the start of
// /proc/loadavg ("0.52 0.58 0.59 1/234 5678").
func ParseLoadAvg(b []byte) ([3]float64, error) {
	var l [3]float64
	f := bytes.Fields(b)
	if len(f) < 3 {
		return l, fmt.Errorf("parse /proc/loadavg: %q", b)
	}
	for i := range l {
		v, err := strconv.ParseFloat(string(f[i]), 64)
		if err != nil || v < 0 || v != v || v > 1e9 {
			return [3]float64{}, fmt.Errorf("parse /proc/loadavg: %q", b)
		}
		l[i] = v
	}
	return l, nil
}
