//go:build cgo && linux

package main

import (
	"syscall"
	"testing"
	"time"

	"github.com/nvgo/nvgo/nvgotest"
)

// Every signal a supervisor or a terminal sends to stop the exporter stops
// it gracefully, exit 0: SIGHUP too, which killed it with 129.
func TestStopSignalsStopItGracefully(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an exporter per signal")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := nvgotest.Program(t, "--simulate", "dgx-h100", "--listen", "127.0.0.1:0")
			startExporter(t, cmd)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if code := cmd.ProcessState.ExitCode(); err != nil || code != 0 {
					t.Errorf("after %s: exit %d (%v); want 0, a graceful stop", sig, code, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("still running 30 s after %s", sig)
			}
		})
	}
}
