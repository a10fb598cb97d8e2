//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package reserve_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"

	"github.com/nvgo/nvgo/internal/reserve"
)

// A launcher reserves two GPUs for a job and hands the reservations to it:
// they last exactly as long as the job, whatever becomes of the launcher.
func ExampleTryLockFirst() {
	dir, err := reserve.DefaultDir()
	if err != nil {
		log.Fatal(err)
	}
	candidates := []string{"GPU-5f7d3a2c-…", "GPU-8c1e9b40-…", "GPU-0a6d2f31-…"} // best first
	stillIdle := func(uuid string) bool { return true }                          // re-check under the lock

	locks, err := reserve.TryLockFirst(dir, candidates, 2, stillIdle, nil)
	if errors.Is(err, reserve.ErrNotEnough) {
		log.Fatal("GPUs busy, try later: ", err)
	}
	if err != nil {
		log.Fatal(err)
	}

	uuids := make([]string, len(locks))
	for i, l := range locks {
		uuids[i] = l.Key()
	}
	cmd := exec.Command("./train")
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES="+strings.Join(uuids, ","))
	cmd.ExtraFiles = reserve.ExtraFiles(locks) // descriptors 3 and 4 in the job
	err = cmd.Start()
	for _, l := range locks {
		_ = l.Unlock() // the job now holds the only descriptors
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(cmd.Wait())
}
