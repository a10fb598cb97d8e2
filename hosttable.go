package nvgo

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/nvgo/nvgo/internal/procfs"
)

// Snapshot reads the host process's figures now: one read of
// /proc/<pid>/stat for its state, CPU and memory, and the facts that
// cannot change while it lives (name, owner, command line) as first read.
// The command line is read at the first Snapshot (or Cmdline) only: a
// program that rewrites it later (setproctitle) shows its first one here,
// its current one in Cmdline. CPUPercent is the delta since the previous
// reading of p.
func (p *HostProcess) Snapshot() HostProcessSnapshot {
	return p.snapshot(procfs.Stat{}, false, time.Now())
}

// snapshot is Snapshot from a stat of the process read (and verified) at
// now when fresh is true, else from a stat it reads.
func (p *HostProcess) snapshot(st procfs.Stat, fresh bool, now time.Time) HostProcessSnapshot {
	var err error
	if !fresh {
		st, err = p.check()
	}
	if err != nil {
		return goneSnapshot(err)
	}
	s := HostProcessSnapshot{IsRunning: true, CreateTime: p.createTime}
	s.RunningTime = Map(s.CreateTime, runningSince)
	s.RunningTimeSeconds = Map(s.RunningTime, time.Duration.Seconds)
	s.Status = Some(st.State)
	s.CPUPercent = Some(p.cpuPercent(st, now))
	s.HostMemory = p.rss(st)
	s.HostMemoryPercent = p.files().memoryPercent(s.HostMemory)
	// Facts read once: from what the first reading cached, else read now
	// (with their own identity check).
	p.mu.Lock()
	name, user, args, command := p.name, p.username, p.cmdline, p.command
	p.mu.Unlock()
	if s.Name = Some(name); name == "" {
		s.Name = p.Name()
	}
	if s.Username = Some(user); user == "" {
		s.Username = p.Username()
	}
	switch {
	case st.IsZombie():
		s.Cmdline = NA[[]string](Zombie, p.zombieErr())
		s.Command = Map(s.Cmdline, CommandJoin)
	case args == nil:
		s.Cmdline = p.Cmdline()
		s.Command = Map(s.Cmdline, CommandJoin)
	default: // as cached, with its joined form
		s.Cmdline, s.Command = Some(args), Some(command)
	}
	if s.Name.IsNA() {
		s.setHostErr(s.Name.Reason(), s.Name.Err())
	}
	return s
}

// goneSnapshot is the snapshot of a process that cannot be read: every
// field N/A because of err.
func goneSnapshot(err error) HostProcessSnapshot {
	r := ReasonOf(err)
	s := HostProcessSnapshot{
		Name: NA[string](r, err), Username: NA[string](r, err), Command: NA[string](r, err),
		Cmdline: NA[[]string](r, err), Status: NA[string](r, err), CPUPercent: NA[Percent](r, err),
		HostMemory: NA[Bytes](r, err), HostMemoryPercent: NA[Percent](r, err),
		CreateTime: NA[time.Time](r, err), RunningTime: NA[time.Duration](r, err),
		RunningTimeSeconds: NA[float64](r, err),
	}
	s.setHostErr(r, err)
	return s
}

func (s *HostProcessSnapshot) setHostErr(r Reason, err error) {
	s.HostReason = r
	if err != nil {
		s.HostError = err.Error()
	} else {
		s.HostError = r.String()
	}
}

// hostProcessTable hands out one HostProcess per live process, so that
// callers that list processes over and over (GPU processes, the
// accumulator) keep the same object, and with it the facts read once and
// the CPU-percent intervals, while the process lives. Each lister (a
// Device, an accumulator's GPU) claims the PIDs it lists and releases
// those it no longer lists; a process no lister holds is forgotten, so the
// table is as small as the process lists. It is safe for concurrent use.
type hostProcessTable struct {
	fs *hostReader // where the processes are read
	// keepFiles: the processes are the real procfs's, whose stat files are
	// kept open while the table holds the process (statFile).
	keepFiles bool
	mu        sync.Mutex
	byPID     map[int32]*hostEntry
	closed    bool // close was called: no more files are kept
}

// hostEntry is a process of the table and the listers that list it.
type hostEntry struct {
	p       *HostProcess
	listers []any
	// stat is the process's stat file kept open, or nil.
	stat *procfs.StatFile
}

func newHostProcessTable(fs *hostReader) *hostProcessTable {
	return &hostProcessTable{fs: fs, keepFiles: fs.isProcFS, byPID: make(map[int32]*hostEntry)}
}

// readStat reads the stat of the process that holds id: over procfs,
// through the stat file kept for the process the table holds under id,
// which costs one system call, else (none kept, or that process gone) by
// path; over another source, through it. A stat read by path is of
// whatever process now holds the PID; kept, when it is not already, is a
// file opened for it (nil if none), for lookup to keep with the entry or
// close. The process's kernel name is name, or over procfs in raw, the
// file as read.
func (t *hostProcessTable) readStat(id int32, buf []byte) (st procfs.Stat, raw []byte, name string, kept *procfs.StatFile, err error) {
	if !t.keepFiles {
		ps, err := t.fs.src.Stat(int(id))
		return statOf(ps), nil, ps.Name, nil, err
	}
	parse := func(b []byte, err error) (procfs.Stat, []byte, error) {
		if err != nil {
			return procfs.Stat{}, nil, err
		}
		st, err := procfs.ParseStat(b)
		return st, b, err
	}
	t.mu.Lock()
	var sf *procfs.StatFile
	if e := t.byPID[id]; e != nil {
		sf = e.stat
	}
	closed := t.closed
	t.mu.Unlock()
	if sf != nil {
		if b, err := sf.Read(buf); err == nil {
			st, raw, err := parse(b, nil)
			return st, raw, "", nil, err
		}
		// Gone (or closed under us): whoever holds the PID now is read by
		// path; put or the release of the entry closes the old file.
	}
	if !closed {
		if kept = t.fs.procfs.OpenStat(int(id)); kept != nil {
			if b, err := kept.Read(buf); err == nil {
				st, raw, err := parse(b, nil)
				return st, raw, "", kept, err
			}
			kept.Close()
			kept = nil
		}
	}
	st, raw, err = parse(t.fs.procfs.ReadFile(int(id), "stat", buf))
	return st, raw, "", nil, err
}

// lookup returns the HostProcess for a PID that NVML reported, claimed by
// lister (nil: claimed by nobody, kept until the next prune). It is the
// object returned before for the same process, a new one when the PID now
// holds another process, and one whose every field is N/A with reason
// ProcessGone when no process holds the PID, or OtherPIDNamespace when we
// do not share the host's PID namespace (the PID would name an unrelated
// process here). With a live process it returns the stat it just read and
// verified (fresh), so that a snapshot need not read it again.
func (t *hostProcessTable) lookup(pid int, lister any) (p *HostProcess, st procfs.Stat, fresh bool) {
	if pid <= 0 || pid > math.MaxInt32 {
		return newUnreadableHostProcess(int32(min(max(pid, 0), math.MaxInt32)), ProcessGone, fmt.Errorf("pid %d: %w", pid, ErrProcessGone)), st, false
	}
	id := int32(pid)
	if !t.fs.src.HostPIDs() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if e := t.byPID[id]; e != nil && e.p.unreadable == OtherPIDNamespace {
			e.claim(lister)
			return e.p, st, false
		}
		p = newUnreadableHostProcess(id, OtherPIDNamespace, fmt.Errorf("pid %d: %w", pid, ErrOtherPIDNamespace))
		t.put(id, p, lister)
		return p, st, false
	}
	buf := statBufs.Get().(*[procfs.StatBufSize]byte)
	defer statBufs.Put(buf)
	st, raw, comm, kept, err := t.readStat(id, buf[:])
	// A file opened for this read that no entry keeps is closed.
	defer func() { kept.Close() }()
	t.mu.Lock()
	old := t.byPID[id]
	switch {
	case err == nil && old != nil && old.p.unreadable == Available && !old.p.gone.Load() && old.p.start == st.Start:
		old.claim(lister)
		t.keep(old, &kept)
		t.mu.Unlock()
		return old.p, st, true
	case err == nil:
		t.mu.Unlock()
		// The name cannot change while the process lives: take it from
		// this read (reading the command line only for a name the kernel
		// cut), outside the lock.
		if raw != nil {
			comm = procfs.Comm(raw)
		}
		name := t.fs.nameFromComm(id, comm)
		t.mu.Lock()
		defer t.mu.Unlock()
		if e := t.byPID[id]; e != nil && e.p.unreadable == Available && !e.p.gone.Load() && e.p.start == st.Start {
			e.claim(lister) // another lookup of the same process was first
			t.keep(e, &kept)
			return e.p, st, true
		}
		p = t.fs.processFromStat(id, st)
		p.name = name
		t.keep(t.put(id, p, lister), &kept)
		return p, st, true
	case procfs.IsNotExist(err):
		defer t.mu.Unlock()
		if old != nil && old.p.unreadable == ProcessGone {
			old.claim(lister)
			return old.p, procfs.Stat{}, false
		}
		p = newUnreadableHostProcess(id, ProcessGone, fmt.Errorf("pid %d: %w", pid, ErrProcessGone))
		t.put(id, p, lister)
		return p, procfs.Stat{}, false
	default:
		t.mu.Unlock()
		// Perhaps passing (e.g. out of file descriptors): do not remember it.
		err = fmt.Errorf("pid %d: %w", pid, err)
		return newUnreadableHostProcess(id, ReasonOf(err), err), procfs.Stat{}, false
	}
}

// put stores p for id, claimed by lister, in place of the process the
// table held for id (whose kept file it closes); t.mu is held.
func (t *hostProcessTable) put(id int32, p *HostProcess, lister any) *hostEntry {
	e := &hostEntry{p: p}
	if old := t.byPID[id]; old != nil {
		e.listers = old.listers // the PID is listed by them still
		old.stat.Close()
	}
	e.claim(lister)
	t.byPID[id] = e
	return e
}

// keep makes *f, a stat file opened for e's process, the one e keeps,
// unless e keeps one already or the table is closed; *f is then nil, so
// that its opener does not close it. t.mu is held.
func (t *hostProcessTable) keep(e *hostEntry, f **procfs.StatFile) {
	if *f != nil && e.stat == nil && !t.closed {
		e.stat, *f = *f, nil
	}
}

// close closes every kept file and keeps none from now on.
func (t *hostProcessTable) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, e := range t.byPID {
		e.stat.Close()
		e.stat = nil
	}
}

func (e *hostEntry) claim(lister any) {
	if lister == nil {
		return
	}
	for _, l := range e.listers {
		if l == lister {
			return
		}
	}
	e.listers = append(e.listers, lister)
}

// release says that lister no longer lists the processes pids: those no
// other lister lists are forgotten.
func (t *hostProcessTable) release(lister any, pids []int32) {
	if len(pids) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pid := range pids {
		e := t.byPID[pid]
		if e == nil {
			continue
		}
		for i, l := range e.listers {
			if l == lister {
				e.listers = append(e.listers[:i], e.listers[i+1:]...)
				break
			}
		}
		if len(e.listers) == 0 {
			e.stat.Close()
			delete(t.byPID, pid)
		}
	}
}

// prune forgets the processes whose PIDs are not in alive (the PIDs the
// driver still reports).
func (t *hostProcessTable) prune(alive map[int]struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for pid, e := range t.byPID {
		if _, ok := alive[int(pid)]; !ok {
			e.stat.Close()
			delete(t.byPID, pid)
		}
	}
}

// knownName returns the name of the process the table holds for pid, and
// whether it is known: not for a PID the table has not seen, nor for one
// in another PID namespace; a PID no process holds is known to have none.
func (t *hostProcessTable) knownName(pid int32) (string, bool) {
	t.mu.Lock()
	e := t.byPID[pid]
	t.mu.Unlock()
	switch {
	case e == nil || e.p.unreadable == OtherPIDNamespace:
		return "", false
	case e.p.unreadable != Available:
		return "", true
	}
	e.p.mu.Lock()
	defer e.p.mu.Unlock()
	return e.p.name, e.p.name != ""
}

// len returns how many processes the table holds.
func (t *hostProcessTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byPID)
}

// hostMemo shares one reading of each host process across the devices of one
// snapshot (a process on several GPUs is read once; its CPU percent delta is
// taken once).
type hostMemo struct {
	now   time.Time // host time, for CPU percentages
	stamp time.Time // the pass's timestamp, on the Library's clock
	// The snapshots taken, and where each process's is. (A map holding
	// the snapshots themselves would allocate each one on its own: Go
	// keeps map values this large out of line.)
	snaps []HostProcessSnapshot
	at    map[*HostProcess]int
}

// newHostMemo starts the memo of one pass (a snapshot), stamped on the
// Library's clock. A memo is used by one goroutine.
func newHostMemo(stamp time.Time) *hostMemo {
	return &hostMemo{now: time.Now(), stamp: stamp}
}

// reserve makes room for n processes, so that a snapshot of many
// processes fills the memo without growing it step by step.
func (m *hostMemo) reserve(n int) {
	if m.at == nil && n > 0 {
		m.at = make(map[*HostProcess]int, n)
		m.snaps = make([]HostProcessSnapshot, 0, n)
	}
}

// get returns p's snapshot, taken from st when fresh (read at lookup).
func (m *hostMemo) get(p *HostProcess, st procfs.Stat, fresh bool) HostProcessSnapshot {
	if i, ok := m.at[p]; ok {
		return m.snaps[i]
	}
	if m.at == nil {
		m.at = map[*HostProcess]int{}
	}
	s := p.snapshot(st, fresh, m.now)
	m.at[p] = len(m.snaps)
	m.snaps = append(m.snaps, s)
	return s
}
