//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nvgo/nvgo"
)

// An accumulator samples in the background; a reader differences its
// counters at its own pace and gets averages over its interval, not the
// value of the last moment.
func ExampleLibrary_StartAccumulator() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(10*time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	reader := acc.NewReader()
	defer reader.Close()

	prev := reader.Read()
	for prev.Ticks+3 > acc.Counters().Ticks { // a real reader would sleep minutes
		<-acc.Updated()
	}
	iv, _ := nvgo.Delta(prev, reader.Read())
	for _, g := range iv.GPUs {
		fmt.Printf("GPU %d: %v busy, %v memory busy, %v used\n", g.Index, g.GPUUtilization, g.MemoryUtilization, g.MemoryUsed)
		for _, p := range g.Processes {
			fmt.Printf("  pid %d (%s): %v of memory over %d ticks\n", p.PID, p.Type, p.GPUMemory, p.Samples)
		}
	}
	// Output:
	// GPU 0: 37% busy, 12% memory busy, 8862MiB used
	//   pid 4194546 (C): 8862MiB of memory over 3 ticks
	// GPU 1: 0% busy, 0% memory busy, 0B used
}
