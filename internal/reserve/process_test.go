//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reserve

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the child process of the tests below: with
// RESERVE_HELPER set it runs that helper instead of the tests.
const (
	envHelper = "RESERVE_HELPER" // hold, inherited or contend
	envDir    = "RESERVE_DIR"
	envKeys   = "RESERVE_KEYS" // comma-separated
	envN      = "RESERVE_N"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper is a child process. It reports on stdout, one line per step,
// and exits when its stdin is closed.
func runHelper(mode string) int {
	dir, keys := os.Getenv(envDir), strings.Split(os.Getenv(envKeys), ",")
	switch mode {
	case "hold":
		if _, err := TryLock(dir, keys[0]); err != nil {
			fmt.Println("error:", err)
			return 1
		}
		fmt.Println("locked")
	case "inherited":
		// Descriptor 3 shares the parent's open file description, so locking
		// it again succeeds even while the lock is held.
		if busy, err := tryFlock(os.NewFile(3, "inherited"), true); busy || err != nil {
			fmt.Println("error: descriptor 3 does not hold the lock:", busy, err)
			return 1
		}
		fmt.Println("inherited")
	case "contend":
		n, _ := strconv.Atoi(os.Getenv(envN))
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.NewFile(3, "start")) // until every sibling is ready
		locks, err := TryLockFirst(dir, keys, n, nil, nil)
		switch {
		case errors.Is(err, ErrNotEnough):
			fmt.Println("notenough")
		case err != nil:
			fmt.Println("error:", err)
			return 1
		default:
			got := make([]string, len(locks))
			for i, l := range locks {
				got[i] = l.Key()
			}
			fmt.Println("got", strings.Join(got, " "))
		}
	default:
		fmt.Println("error: unknown helper", mode)
		return 1
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// helper is a running child process.
type helper struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *os.File
	lines  *bufio.Reader
	stderr bytes.Buffer
}

// startHelper runs the test binary as the given helper; extra become its
// descriptors 3 and up. It is killed at cleanup if still running.
func startHelper(t *testing.T, mode, dir string, keys []string, n int, extra ...*os.File) *helper {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := &helper{t: t, cmd: exec.Command(exe)}
	h.cmd.Env = append(os.Environ(),
		envHelper+"="+mode, envDir+"="+dir, envKeys+"="+strings.Join(keys, ","), envN+"="+strconv.Itoa(n),
		// Under -race a process otherwise sleeps a second on exit.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	h.cmd.ExtraFiles = extra
	h.cmd.Stderr = &h.stderr
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	// An os.Pipe, unlike cmd.StdoutPipe, takes a read deadline.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	h.cmd.Stdout = w
	err = h.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		t.Fatal(err)
	}
	h.out, h.lines = r, bufio.NewReader(r)
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
		}
		r.Close()
	})
	return h
}

// line returns the child's next line of output.
func (h *helper) line() string {
	h.t.Helper()
	_ = h.out.SetReadDeadline(time.Now().Add(30 * time.Second))
	s, err := h.lines.ReadString('\n')
	if err != nil {
		h.t.Fatalf("helper %d: %v; stderr:\n%s", h.cmd.Process.Pid, err, h.stderr.String())
	}
	return strings.TrimSuffix(s, "\n")
}

// expect fails the test unless the child's next line is want.
func (h *helper) expect(want string) {
	h.t.Helper()
	if got := h.line(); got != want {
		h.t.Fatalf("helper said %q, want %q", got, want)
	}
}

// finish closes the child's stdin and waits for it to exit cleanly.
func (h *helper) finish() {
	h.t.Helper()
	h.stop()
	h.wait()
}

// stop tells the child to exit.
func (h *helper) stop() { h.stdin.Close() }

// wait waits for the child to exit and fails the test unless it did so
// cleanly.
func (h *helper) wait() {
	h.t.Helper()
	if err := h.cmd.Wait(); err != nil {
		h.t.Fatalf("helper: %v; stderr:\n%s", err, h.stderr.String())
	}
}

func TestKilledHolderLeavesNoStaleLock(t *testing.T) {
	dir := t.TempDir()
	child := startHelper(t, "hold", dir, []string{testKey}, 1)
	child.expect("locked")
	wantBusy(t, dir, testKey)
	pid, since, held, err := Holder(dir, testKey)
	if err != nil || !held || pid != child.cmd.Process.Pid || time.Since(since) > time.Minute {
		t.Fatalf("Holder = %d, %v, %v, %v; want the child %d", pid, since, held, err, child.cmd.Process.Pid)
	}

	if err := child.cmd.Process.Kill(); err != nil { // SIGKILL: no chance to clean up
		t.Fatal(err)
	}
	_ = child.cmd.Wait()
	if _, _, held, err := Holder(dir, testKey); held || err != nil {
		t.Fatalf("Holder after SIGKILL: held %v, %v", held, err)
	}
	mustLock(t, dir, testKey)
}

func TestHandedOffLockLastsAsLongAsTheChild(t *testing.T) {
	dir := t.TempDir()
	l := mustLock(t, dir, testKey)
	child := startHelper(t, "inherited", dir, nil, 0, ExtraFiles([]*Lock{l})...)
	if err := l.Unlock(); err != nil { // the parent lets go once the child started
		t.Fatal(err)
	}
	child.expect("inherited")
	wantBusy(t, dir, testKey)
	if pid, _, held, err := Holder(dir, testKey); !held || err != nil || pid != os.Getpid() {
		t.Fatalf("Holder during the child = %d, %v, %v; want held, taken by us", pid, held, err)
	}

	child.finish()
	if _, _, held, err := Holder(dir, testKey); held || err != nil {
		t.Fatalf("Holder after the child exited: held %v, %v", held, err)
	}
	mustLock(t, dir, testKey)
}

func TestConcurrentLaunchersNeverShareAKey(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 400 processes")
	}
	const rounds, children, n = 50, 8, 3
	keys := make([]string, 8)
	for i := range keys {
		keys[i] = fmt.Sprintf("GPU-%d", i)
	}
	dir := t.TempDir()
	start := time.Now()
	var winners, losers int
	for round := range rounds {
		w, l := contendOnce(t, dir, keys, children, n)
		if w > len(keys)/n {
			t.Fatalf("round %d: %d children got %d of %d keys each", round, w, n, len(keys))
		}
		winners, losers = winners+w, losers+l
		for _, k := range keys {
			if _, _, held, err := Holder(dir, k); held || err != nil {
				t.Fatalf("round %d: %s still held (%v) after every child exited", round, k, err)
			}
		}
	}
	if winners == 0 {
		t.Fatal("no child ever got its reservations")
	}
	t.Logf("%d rounds of %d children in %v: %d got %d keys, %d had not enough",
		rounds, children, time.Since(start).Round(time.Millisecond), winners, n, losers)
}

// contendOnce releases children at once to take n of keys each, checks that
// no key went to two of them, and counts those that got n and those that
// got ErrNotEnough.
func contendOnce(t *testing.T, dir string, keys []string, children, n int) (winners, losers int) {
	t.Helper()
	gate, open, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	hs := make([]*helper, children)
	for i := range hs {
		hs[i] = startHelper(t, "contend", dir, keys, n, gate)
	}
	gate.Close()
	for _, h := range hs {
		h.expect("ready")
	}
	open.Close() // every child reads EOF now

	owner := map[string]int{}
	for i, h := range hs {
		got := h.line()
		switch {
		case got == "notenough":
			losers++
		case strings.HasPrefix(got, "got "):
			taken := strings.Fields(got)[1:]
			if len(taken) != n {
				t.Fatalf("child %d got %d keys, want %d: %q", i, len(taken), n, got)
			}
			for _, k := range taken {
				if j, dup := owner[k]; dup {
					t.Fatalf("%s held by children %d and %d at once", k, j, i)
				}
				owner[k] = i
			}
			winners++
		default:
			t.Fatalf("child %d: %q", i, got)
		}
	}
	// Every child still holds what it got while the parent checks; only now
	// do they exit.
	for _, h := range hs {
		h.stop()
	}
	for _, h := range hs {
		h.wait()
	}
	return winners, losers
}
