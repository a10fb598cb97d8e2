//go:build linux

package nvgo

import (
	"os"
	"testing"
	"time"

	"github.com/nvgo/nvgo/host"
	"github.com/nvgo/nvgo/internal/procfs"
)

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents) - 1 // the directory's own
}

// wrappedSource is the real procfs behind another type: a HostSource whose
// files the table must not keep open.
type wrappedSource struct{ host.Source }

func TestHostProcessTableKeepsStatFilesOpen(t *testing.T) {
	t.Run("one file per process, read afresh at each lookup", func(t *testing.T) {
		c := startChild(t, "sh", "-c", "while :; do :; done")
		tab := newHostProcessTable(hostProcFS)
		defer tab.close()
		n0 := openFDs(t)
		p1, st1, _ := tab.lookup(c.pid(), "lister")
		if got := openFDs(t); got != n0+1 {
			t.Fatalf("%d descriptors after the first lookup; want %d (one stat file kept)", got, n0+1)
		}
		// A busy process's CPU time grows: read the kept file until it
		// shows (a stale read never would).
		var st2 procfs.Stat
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			p2, st, fresh := tab.lookup(c.pid(), "lister")
			if got := openFDs(t); got != n0+1 {
				t.Fatalf("%d descriptors after another lookup; want the same %d", got, n0+1)
			}
			if p1 != p2 || !fresh {
				t.Fatal("another lookup gave another object, or no fresh stat")
			}
			if st2 = st; st2.CPUTime > st1.CPUTime || time.Now().After(deadline) {
				break
			}
		}
		if st2.CPUTime <= st1.CPUTime {
			t.Errorf("a busy process's CPU time did not grow in 10 s of reads of the kept file (%v, %v): stale data", st1.CPUTime, st2.CPUTime)
		}
	})
	t.Run("a reaped process's file is closed and it reads as gone", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		defer tab.close()
		tab.lookup(c.pid(), "lister")
		_ = c.cmd.Process.Kill()
		_ = c.wait()     // closes the child's pipes too
		n1 := openFDs(t) // the kept file among them
		p, _, _ := tab.lookup(c.pid(), "lister")
		wantAllNA(t, p, ProcessGone, ErrProcessGone)
		if got := openFDs(t); got != n1-1 {
			t.Errorf("%d descriptors; want %d: the gone process's file closed", got, n1-1)
		}
	})
	t.Run("a file kept for a process that left is never read as the PID's new process", func(t *testing.T) {
		old := startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		defer tab.close()
		tab.lookup(old.pid(), "lister")
		e := tab.byPID[int32(old.pid())]
		_ = old.cmd.Process.Kill()
		_ = old.wait()
		// The PID is given to another process, started later (not in the
		// same clock tick, which the start time could not tell apart): its
		// entry still holds the file opened for the one that left.
		newcomer := startChild(t, "sleep", "30")
		for deadline := time.Now().Add(10 * time.Second); ; {
			if np, err := NewHostProcess(newcomer.pid()); err == nil && np.start != e.p.start {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("every process started in 10 s shares the old one's start tick")
			}
			_ = newcomer.cmd.Process.Kill()
			_ = newcomer.wait()
			time.Sleep(10 * time.Millisecond)
			newcomer = startChild(t, "sleep", "30")
		}
		n0 := openFDs(t) - 1 // less the kept file
		delete(tab.byPID, int32(old.pid()))
		tab.byPID[int32(newcomer.pid())] = e
		p, _, fresh := tab.lookup(newcomer.pid(), "lister")
		if p == e.p || !fresh || !p.IsRunning() || p.PID() != newcomer.pid() {
			t.Fatalf("lookup gave %v (fresh %v); want the newcomer's own object", p, fresh)
		}
		want, err := NewHostProcess(newcomer.pid())
		if err != nil {
			t.Fatal(err)
		}
		if p.start != want.start {
			t.Errorf("start %d; want the newcomer's %d", p.start, want.start)
		}
		if got := openFDs(t); got != n0+1 {
			t.Errorf("%d descriptors; want %d: the old file closed, one kept for the newcomer", got, n0+1)
		}
	})
	t.Run("release, prune and close close the files", func(t *testing.T) {
		a, b := startChild(t, "sleep", "30"), startChild(t, "sleep", "30")
		tab := newHostProcessTable(hostProcFS)
		n0 := openFDs(t)
		tab.lookup(a.pid(), "one")
		tab.lookup(b.pid(), "two")
		if got := openFDs(t); got != n0+2 {
			t.Fatalf("%d descriptors; want %d", got, n0+2)
		}
		tab.release("one", []int32{int32(a.pid())})
		if got := openFDs(t); got != n0+1 {
			t.Errorf("after release: %d descriptors; want %d", got, n0+1)
		}
		tab.lookup(a.pid(), "one")
		tab.prune(map[int]struct{}{b.pid(): {}})
		if got := openFDs(t); got != n0+1 {
			t.Errorf("after prune: %d descriptors; want %d", got, n0+1)
		}
		tab.close()
		if got := openFDs(t); got != n0 {
			t.Errorf("after close: %d descriptors; want %d", got, n0)
		}
		if p, _, fresh := tab.lookup(b.pid(), "two"); !fresh || !p.IsRunning() {
			t.Error("a closed table no longer reads processes")
		}
		if got := openFDs(t); got != n0 {
			t.Errorf("a closed table kept a file: %d descriptors; want %d", got, n0)
		}
	})
	t.Run("not for another HostSource", func(t *testing.T) {
		c := startChild(t, "sleep", "30")
		tab := newHostProcessTable(newHostReader(wrappedSource{host.ProcFS{}}))
		n0 := openFDs(t)
		if p, _, fresh := tab.lookup(c.pid(), "lister"); !fresh || !p.IsRunning() {
			t.Fatal("the wrapped procfs was not read")
		}
		if got := openFDs(t); got != n0 {
			t.Errorf("%d descriptors; want %d: a source's files are its own business", got, n0)
		}
	})
}
