//go:build cgo

// End-to-end tests through the C door: nvgo-select built with cgo and run with
// no --simulate, loading nvgo's drop-in libnvidia-ml.so.1 as it would load
// the driver's.

package main

import (
	"bytes"
	"testing"

	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/nvgotest"
)

// TestThroughTheDriverLibrarySelectReservesAndRuns chooses GPUs as
// --simulate does on the same fleet, then reserves them for a command that
// sees them in CUDA_VISIBLE_DEVICES and whose exit status select passes on.
func TestThroughTheDriverLibrarySelectReservesAndRuns(t *testing.T) {
	cleanCUDAEnv(t)
	ownLockDir(t) // before the first door.Command, which takes the environment
	file := writeScenario(t, fourGPUs)
	fleet, err := fakegpu.LoadScenario(file)
	if err != nil {
		t.Fatal(err)
	}
	door := nvgotest.Serve(t, fleet, "current")
	for _, args := range [][]string{
		{"-n", "2"},
		{"-n", "1", "--min-free-memory", "50GiB"},
		{"--max-gpu-utilization", "40", "--format", "index"},
	} {
		var out, errOut bytes.Buffer
		cmd := door.Command(t, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("nvgo-select %v through the library: %v\n%s", args, err, errOut.String())
		}
		code, want, stderr := runSelect(t, append(args, "--simulate", file)...)
		if code != 0 {
			t.Fatalf("nvgo-select %v --simulate: exit %d\n%s", args, code, stderr)
		}
		if out.String() != want {
			t.Errorf("nvgo-select %v chose %q through the library, %q with --simulate", args, out.String(), want)
		}
	}

	var out, errOut bytes.Buffer
	cmd := door.Command(t, "-n", "2", "--lock-dir", t.TempDir(), "--", "sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"; exit 7`)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 {
		t.Fatalf("nvgo-select -- command: %v (want the command's exit status 7)\n%s", err, errOut.String())
	}
	_, want, _ := runSelect(t, "-n", "2", "--simulate", file)
	if out.String() != want {
		t.Errorf("the command saw CUDA_VISIBLE_DEVICES=%q; want %q", out.String(), want)
	}
}
