//go:build cgo

// End-to-end tests through the C door: nvgo-usagelog built with cgo and run with
// no --simulate, loading nvgo's drop-in libnvidia-ml.so.1 as it would load
// the driver's, with a real process behind a GPU PID.

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/nvgotest"
)

func TestMain(m *testing.M) {
	nvgotest.RunMainIfAsked(func(args []string) int {
		ctx, stop := stopContext() // as main does
		defer stop()
		return run(ctx, args, os.Stdout, os.Stderr)
	})
	os.Exit(m.Run())
}

func TestThroughTheDriverLibraryUsagelogWritesRows(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "60")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Kill()
		child.Wait()
	})
	pid := child.Process.Pid
	if err := fleet.GPU(3).StartProcess(fakegpu.Process{PID: uint32(pid), Name: "sleep", UsedMemory: 2 << 30, SM: 50, Mem: 20}); err != nil {
		t.Fatal(err)
	}
	door := nvgotest.Serve(t, fleet, "current")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go door.Mirror.Run(ctx, 100*time.Millisecond) // the fleet's clock follows the real one

	dir := t.TempDir()
	cmd := door.Command(t, "run", "--dir", dir, "--tick", "1s", "--interval", "1s")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	t.Cleanup(func() {
		if !waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// Two 1 s intervals take about 2 s; the deadline leaves room for a
	// loaded machine.
	seen := eventually(30*time.Second, func() bool {
		n := 0
		for _, r := range loggedRows(t, dir) {
			if r.PID == pid {
				n++
			}
		}
		return n >= 2
	})
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	waited = true
	if err != nil {
		t.Fatalf("nvgo-usagelog run: %v\n%s", err, stderr.String())
	}
	if !seen {
		t.Fatalf("no two rows of the real process within 30 s\n%s", stderr.String())
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	files, err := dataFiles(dir)
	if err != nil || len(files) == 0 {
		t.Fatalf("no daily CSV: %v\n%s", err, stderr.String())
	}
	mine := 0
	for _, f := range files {
		for _, r := range rowsIn(t, dir, filepath.Base(f.Path)) {
			if r.PID != pid {
				continue
			}
			mine++
			if r.User != me.Username || r.GPU != 3 || formatNum(r.Usage) != "50" {
				t.Errorf("the real process's row %+v; want user %s, GPU 3, usage 50", r, me.Username)
			}
		}
	}
	if mine < 2 {
		t.Errorf("%d rows of the real process after two were seen; want 2 or more\n%s", mine, stderr.String())
	}
}
