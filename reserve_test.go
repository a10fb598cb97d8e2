//go:build cgo

package nvgo_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
)

const reserveChildEnv = "NVGO_TEST_RESERVE_CHILD"

// TestReserveChild is the body of one launcher process in
// TestConcurrentLaunchersNeverShareAGPU; it does nothing in a normal run.
// It opens its own fake DGX H100 (all eight GPUs idle), says READY, waits
// for "go", reserves three GPUs and prints them, then holds them until its
// stdin closes.
func TestReserveChild(t *testing.T) {
	dir := os.Getenv(reserveChildEnv)
	if dir == "" {
		t.Skip("helper process for TestConcurrentLaunchersNeverShareAGPU")
	}
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	idle(fleet)
	lib, err := nvgo.Open(nvgo.WithNVML(fleet))
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	defer lib.Close()
	if _, err := lib.Devices(); err != nil {
		fmt.Println("ERROR", err)
		return
	}
	in := bufio.NewReader(os.Stdin)
	fmt.Println("READY")
	if line, _ := in.ReadString('\n'); line != "go\n" {
		return
	}
	r, err := lib.ReserveDevices(context.Background(), nvgo.WithCount(3), nvgo.WithLockDir(dir))
	switch {
	case errors.Is(err, nvgo.ErrTooFewDevices):
		fmt.Println("NONE")
	case err != nil:
		fmt.Println("ERROR", err)
	default:
		fmt.Println("GOT", r.CUDAVisibleDevices())
	}
	io.Copy(io.Discard, in) // hold the reservation until told to go
	// Until here: a Reservation the garbage collector takes closes its lock
	// files, as an *os.File does, and with them the reservation.
	runtime.KeepAlive(r)
}

type launcher struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startLauncher(t *testing.T, dir string) *launcher {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReserveChild$", "-test.count=1")
	// Under -race a Go program sleeps a second at exit unless told not to.
	cmd.Env = append(os.Environ(), reserveChildEnv+"="+dir, "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	stdin, err := cmd.StdinPipe()
	must(t, err)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	l := &launcher{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
	t.Cleanup(func() { l.stdin.Close(); l.cmd.Wait() })
	return l
}

func (l *launcher) line(t *testing.T) string {
	t.Helper()
	s, err := l.out.ReadString('\n')
	if err != nil {
		t.Fatalf("launcher said %q: %v", s, err)
	}
	return strings.TrimSpace(s)
}

// Eight launcher processes each reserve three of eight GPUs at the same
// moment; no GPU may ever be reserved by two of them.
func TestConcurrentLaunchersNeverShareAGPU(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 3
	}
	successes := map[int]int{}
	for round := 0; round < rounds; round++ {
		dir := t.TempDir()
		ls := make([]*launcher, 8)
		for i := range ls {
			ls[i] = startLauncher(t, dir)
		}
		for _, l := range ls {
			if s := l.line(t); s != "READY" {
				t.Fatalf("launcher: %s", s)
			}
		}
		for _, l := range ls {
			io.WriteString(l.stdin, "go\n")
		}
		owner := map[string]int{}
		got := 0
		for i, l := range ls {
			s := l.line(t)
			switch {
			case s == "NONE":
			case strings.HasPrefix(s, "GOT "):
				got++
				uuids := strings.Split(strings.TrimPrefix(s, "GOT "), ",")
				if len(uuids) != 3 {
					t.Fatalf("round %d: launcher %d got %d GPUs, want 3", round, i, len(uuids))
				}
				for _, u := range uuids {
					if j, taken := owner[u]; taken {
						t.Fatalf("round %d: %s reserved by launchers %d and %d at once", round, u, j, i)
					}
					owner[u] = i
				}
			default:
				t.Fatalf("round %d: launcher %d: %s", round, i, s)
			}
		}
		if got == 0 || got > 2 {
			t.Fatalf("round %d: %d launchers got three of eight GPUs, want 1 or 2", round, got)
		}
		successes[got]++
		for _, l := range ls {
			l.stdin.Close()
			l.cmd.Wait()
		}
	}
	t.Logf("%d rounds of 8 launchers: rounds with 2 reservations %d, with 1 %d", rounds, successes[2], successes[1])
}

// A reservation handed to a child lives as long as the child, and the lock
// directory needs no cleaning after the holder dies.
func TestReservationLivesWithTheChild(t *testing.T) {
	lib, _ := openFleet(t, "dgx-h100")
	dir := t.TempDir()
	ctx := context.Background()
	r, err := lib.ReserveDevices(ctx, nvgo.WithCount(8), nvgo.WithLockDir(dir))
	must(t, err)
	if got := len(r.Devices()); got != 8 {
		t.Fatalf("reserved %d, want 8", got)
	}
	cmd := r.Command(ctx, "sh", "-c", `test -n "$CUDA_VISIBLE_DEVICES" || exit 3; cat >/dev/null`)
	stdin, err := cmd.StdinPipe()
	must(t, err)
	must(t, cmd.Start())
	must(t, r.Release())

	if _, err := lib.ReserveDevices(ctx, nvgo.WithCount(1), nvgo.WithLockDir(dir)); !errors.Is(err, nvgo.ErrTooFewDevices) {
		t.Fatalf("while the child runs: err = %v, want ErrTooFewDevices", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v (was CUDA_VISIBLE_DEVICES set?)", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r2, err := lib.ReserveDevices(ctx, nvgo.WithCount(8), nvgo.WithLockDir(dir))
		if err == nil {
			r2.Release()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the child exited: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The predicate is checked again under the lock: a GPU that filled up
// between the ranking and the lock is not reserved.
func TestReserveRechecksUnderTheLock(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	dir := t.TempDir()
	r, err := lib.ReserveDevices(context.Background(), nvgo.WithCount(2), nvgo.WithMinFreeMemory(40*giB), nvgo.WithLockDir(dir))
	must(t, err)
	defer r.Release()
	if r.CUDAVisibleDevices() != fleet.GPU(7).UUID()+","+fleet.GPU(6).UUID() {
		t.Errorf("reserved %s, want GPUs 7 and 6", r.CUDAVisibleDevices())
	}
	// Fill GPUs 5 and 4 after the ranking, before the locks: the
	// reservation must fall through to 3 and 2.
	nvgo.SetBeforeLockHook(func() {
		fleet.GPU(5).SetMemoryUsed(70 * giB)
		fleet.GPU(4).SetMemoryUsed(70 * giB)
	})
	defer nvgo.SetBeforeLockHook(nil)
	r2, err := lib.ReserveDevices(context.Background(), nvgo.WithCount(2), nvgo.WithMinFreeMemory(40*giB), nvgo.WithLockDir(dir))
	must(t, err)
	defer r2.Release()
	if r2.CUDAVisibleDevices() != fleet.GPU(3).UUID()+","+fleet.GPU(2).UUID() {
		t.Errorf("reserved %s, want GPUs 3 and 2", r2.CUDAVisibleDevices())
	}
}

func TestSelectWithoutReserved(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	dir := t.TempDir()
	ctx := context.Background()
	r, err := lib.ReserveDevices(ctx, nvgo.WithCount(2), nvgo.WithLockDir(dir))
	must(t, err)
	defer r.Release()
	got, err := lib.SelectDevices(ctx, nvgo.WithoutReserved(), nvgo.WithLockDir(dir))
	must(t, err)
	for _, d := range got {
		if slices.Contains(r.Devices(), d) {
			t.Errorf("selected %v, which is reserved", d)
		}
	}
	if len(got) != 6 {
		t.Errorf("selected %d devices, want the 6 unreserved", len(got))
	}
	if got, err := lib.SelectDevices(ctx, nvgo.WithCandidates()); err != nil || len(got) != 0 {
		t.Errorf("no candidates: %v, %v; want none", got, err)
	}
}

// A lock directory named in code gets the rule $NVGO_LOCK_DIR gets (created
// if missing); one that cannot be used is a filesystem error, not an NVML
// one; junk planted at one GPU's lock path leaves that GPU out.
func TestReserveLockDirectories(t *testing.T) {
	lib, fleet := openFleet(t, "dgx-h100")
	idle(fleet)
	ctx := context.Background()

	missing := filepath.Join(t.TempDir(), "not", "yet")
	r, err := lib.ReserveDevices(ctx, nvgo.WithCount(1), nvgo.WithLockDir(missing))
	if err != nil {
		t.Fatalf("WithLockDir(a missing directory): %v", err)
	}
	r.Release()

	file := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(file, nil, 0o666))
	_, err = lib.ReserveDevices(ctx, nvgo.WithCount(1), nvgo.WithLockDir(file))
	var nvmlErr *nvgo.NVMLError
	if !errors.Is(err, nvgo.ErrLockDir) || errors.As(err, &nvmlErr) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("WithLockDir(a file): %v; want ErrLockDir saying it is not a directory", err)
	}

	dir := t.TempDir()
	must(t, syscall.Mkfifo(filepath.Join(dir, fleet.GPU(7).UUID()+".lock"), 0o666))
	r, err = lib.ReserveDevices(ctx, nvgo.WithCount(1), nvgo.WithLockDir(dir))
	if err != nil {
		t.Fatalf("a FIFO at GPU 7's lock path: %v", err)
	}
	defer r.Release()
	if got := r.CUDAVisibleDevices(); got != fleet.GPU(6).UUID() {
		t.Errorf("reserved %s; want GPU 6 (GPU 7's lock file is a FIFO)", got)
	}
	if left := r.LeftOut(); len(left) != 1 || left[0].Index != 7 || left[0].UUID != fleet.GPU(7).UUID() ||
		!strings.Contains(left.Error(), "unusable lock file") {
		t.Errorf("LeftOut() = %v; want GPU 7, whose lock file is unusable", left)
	}
}
