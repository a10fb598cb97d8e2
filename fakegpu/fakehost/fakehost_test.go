//go:build cgo

package fakehost_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fakehost"
)

// A preset's processes read as believable host processes through the
// fleet's host; a real process on the same fleet reads the real /proc.
func TestSimulatedProcessesHaveHostFacts(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	real := exec.Command("sleep", "300")
	if err := real.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { real.Process.Kill(); real.Wait() }()
	if err := fleet.GPU(5).StartProcess(fakegpu.Process{PID: uint32(real.Process.Pid), UsedMemory: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	snap, err := lib.Snapshot(context.Background(), nvgo.WithFields(nvgo.FieldProcesses))
	if err != nil {
		t.Fatal(err)
	}
	byPID := map[int]nvgo.GpuProcessSnapshot{}
	for _, d := range snap.Devices {
		for _, p := range d.Processes {
			byPID[p.PID] = p
		}
	}
	for _, tt := range []struct {
		pid     int
		user    string
		command string
		cpu     float64
		rss     nvgo.Bytes
	}{
		{4194401, "alice", "python3 train.py --model llama-7b --epochs 90", 98.5, 6656 * fakegpu.MiB},
		{4194402, "bob", "python3 -m torch.distributed.run --nproc_per_node=1 finetune.py --config configs/bert-large.yaml", 101.3, 10035 * fakegpu.MiB},
		{4194403, "carol", "python3 serve.py --port 8000 --model resnet50", 23.7, 3174 * fakegpu.MiB},
	} {
		p, ok := byPID[tt.pid]
		if !ok {
			t.Errorf("pid %d not listed", tt.pid)
			continue
		}
		if p.Username.Or("") != tt.user || p.Command.Or("") != tt.command || p.Name.Or("") != "python3" {
			t.Errorf("pid %d: user %v, command %v, name %v; want %s, %q, python3", tt.pid, p.Username, p.Command, p.Name, tt.user, tt.command)
		}
		if cpu := float64(p.CPUPercent.Or(-1)); cpu < tt.cpu-1 || cpu > tt.cpu+1 {
			t.Errorf("pid %d: CPU %v; want about %v", tt.pid, p.CPUPercent, tt.cpu)
		}
		if p.HostMemory.Or(0) != tt.rss {
			t.Errorf("pid %d: resident memory %v; want %v", tt.pid, p.HostMemory, tt.rss)
		}
		if ct, ok := p.CreateTime.Get(); !ok || time.Since(ct) <= 0 || time.Since(ct) > 5*24*time.Hour {
			t.Errorf("pid %d: create time %v; want a past time within the age", tt.pid, p.CreateTime)
		}
		if !p.IsRunning || p.Status.Or("") != "sleeping" {
			t.Errorf("pid %d: running %v, status %v; want a sleeping live process", tt.pid, p.IsRunning, p.Status)
		}
	}
	if p := byPID[real.Process.Pid]; !strings.HasSuffix(p.Command.Or(""), "sleep 300") || !p.IsRunning {
		t.Errorf("the real process: command %v, running %v; want the real sleep", p.Command, p.IsRunning)
	}
}

// A simulated process has no environment or working directory, and the
// source says so rather than invent a reason (it gave a permission error
// that no file stood behind); its owner has a name.
func TestSimulatedProcessHasNoEnvironment(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	src := fakehost.New(fleet)
	if _, err := src.Environ(4194401); !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, os.ErrPermission) || !strings.Contains(err.Error(), "simulated") {
		t.Errorf("environ: %v; want an unsupported error saying the process is simulated", err)
	}
	if _, err := src.Cwd(4194401); !errors.Is(err, errors.ErrUnsupported) || errors.Is(err, os.ErrPermission) {
		t.Errorf("cwd: %v; want an unsupported error", err)
	}
	uid, err := src.Owner(4194402)
	if err != nil {
		t.Fatal(err)
	}
	if name, err := src.Username(uid); err != nil || name != "bob" {
		t.Errorf("Username(bob's uid %d) = %q, %v", uid, name, err)
	}
	if _, err := src.Username(uid + 1); err == nil {
		t.Errorf("Username(%d), no simulated user's: want an error", uid+1)
	}
	st, err := src.Stat(4194402)
	if err != nil || st.Name != "python3" || st.State != "sleeping" || st.PPID != 1 || st.RSS != 10035*fakegpu.MiB {
		t.Errorf("Stat = %+v, %v; want python3, sleeping, child of 1, 10035 MiB", st, err)
	}
	if _, err := src.Stat(4194499); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat of a PID no process holds: %v; want not-exist", err)
	}
}

// Library.HostProcess reads through the Library's source: a simulated PID
// is a process there.
func TestLibraryHostProcessReadsTheSource(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	p, err := lib.HostProcess(4194402)
	if err != nil {
		t.Fatal(err)
	}
	if p.Username().Or("") != "bob" || !p.IsRunning() {
		t.Errorf("pid 4194402: user %v, running %v; want bob's live process", p.Username(), p.IsRunning())
	}
	parent, err := p.Parent()
	if err != nil || parent == nil || parent.PID() != 1 {
		t.Errorf("parent = %v, %v; want PID 1", parent, err)
	}
	if _, err := lib.HostProcess(4194499); !errors.Is(err, nvgo.ErrProcessGone) {
		t.Errorf("an unknown simulated PID: %v; want ErrProcessGone", err)
	}
}

// A simulated process whose age is longer than the host has been up still
// starts after PID 1, its parent, so that its parent can be read.
func TestSimulatedProcessStartsAfterItsParent(t *testing.T) {
	fleet, err := fakegpu.ParseScenario([]byte(`{"gpus": [{"processes": [{"pid": 4194600, "host": {"user": "zoe", "age": "87600h"}}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithHostSource(fakehost.New(fleet)))
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	p, err := lib.HostProcess(4194600)
	if err != nil {
		t.Fatal(err)
	}
	if parent, err := p.Parent(); err != nil || parent == nil || parent.PID() != 1 {
		t.Errorf("parent of a ten-year-old process = %v, %v; want PID 1", parent, err)
	}
}
