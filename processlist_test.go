//go:build cgo

package nvgo_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/internal/testenv"
)

// startMPSServer starts a real process whose name is the MPS server's: a
// copy of sleep named nvidia-cuda-mps-server.
func startMPSServer(t *testing.T) *exec.Cmd {
	t.Helper()
	src := testenv.Program(t, "sleep") // stands in for the MPS server
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(t.TempDir(), "nvidia-cuda-mps-server")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// The clients of an MPS server are listed as compute processes, with their
// memory, by Device and the accumulator alike; the MPS list is read only on
// a GPU whose compute processes include a server (or one not named yet).
func TestMPSClientsAreListed(t *testing.T) {
	fleet := twoH100()
	server := startMPSServer(t)
	clients := []*exec.Cmd{startSleep(t), startSleep(t)}
	plain := startSleep(t)
	g0, g1 := fleet.GPU(0), fleet.GPU(1)
	must(t, g0.StartProcess(fakegpu.Process{PID: uint32(server.Process.Pid), Name: "nvidia-cuda-mps-server", Type: fakegpu.Compute, UsedMemory: 32 * miB}))
	for i, c := range clients {
		must(t, g0.StartProcess(fakegpu.Process{PID: uint32(c.Process.Pid), Type: fakegpu.MPSClient, UsedMemory: uint64(i+1) * 1024 * miB}))
	}
	must(t, g1.StartProcess(fakegpu.Process{PID: uint32(plain.Process.Pid), Type: fakegpu.Compute, UsedMemory: 512 * miB}))
	lib := openOn(t, fleet)

	snap := func() *nvgo.Snapshot {
		t.Helper()
		s, err := lib.Snapshot(context.Background(), nvgo.WithFields(nvgo.FieldMemory|nvgo.FieldProcesses))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	snap() // learns the names
	fleet.ResetCalls()
	s := snap()
	if n := fleet.CallCount("Device.GetMPSComputeRunningProcesses"); n != 1 {
		t.Errorf("%d MPS list reads; want 1 (GPU 0 runs the server, GPU 1 none)", n)
	}
	got := map[int]nvgo.GpuProcessSnapshot{}
	for _, p := range s.Devices[0].Processes {
		got[p.PID] = p
	}
	if len(got) != 3 {
		t.Fatalf("GPU 0 lists %d processes; want the server and its 2 clients", len(got))
	}
	for i, c := range clients {
		p, ok := got[c.Process.Pid]
		if !ok {
			t.Errorf("client %d is not listed", c.Process.Pid)
			continue
		}
		if p.Type != nvgo.ProcessCompute || p.GPUMemory.Or(0) != nvgo.Bytes(i+1)*1024*miB {
			t.Errorf("client %d: type %v, memory %v; want compute, %d MiB", p.PID, p.Type, p.GPUMemory, (i+1)*1024)
		}
	}
	if p := got[server.Process.Pid]; p.Name.Or("") != "nvidia-cuda-mps-server" {
		t.Errorf("the server is named %v", p.Name)
	}

	ctx, cancel := context.WithCancel(context.Background())
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(time.Hour))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-acc.Done() })
	c, _ := acc.Counters().GPU(0)
	if len(c.Processes) != 3 {
		t.Errorf("the accumulator counts %d processes on GPU 0; want 3", len(c.Processes))
	}
}
