//go:build cgo

package nvgo_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nvgo/nvgo"
)

func ExampleCollector() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	c, err := lib.NewCollector() // every GPU; processes descended from this one
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	_ = c.Activate("train")
	_ = c.Activate("epoch1") // nested: keys "train/epoch1/…"
	// … train for an epoch …
	m, err := c.Collect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, key := range []string{
		"train/epoch1/gpu:0/gpu_utilization (%)",
		"train/epoch1/gpu:0/temperature (C)",
		"train/epoch1/gpu:0/power_usage (W)",
		"train/gpu:1/memory_used (MiB)",
	} {
		s := m.Stats[key]
		fmt.Printf("%s: mean %.1f, min %.1f, max %.1f\n", key, s.Mean, s.Min, s.Max)
	}
	_, ok := m.Stats["train/gpu:1/fan_speed (%)"]
	fmt.Println("fan speed (N/A on SXM boards) collected:", ok)
	fmt.Println("flattened as nvitop:", m.Flatten()["train/epoch1/gpu:0/temperature (C)/mean"])
	_ = c.Deactivate("epoch1")
	// Output:
	// train/epoch1/gpu:0/gpu_utilization (%): mean 37.0, min 37.0, max 37.0
	// train/epoch1/gpu:0/temperature (C): mean 41.0, min 41.0, max 41.0
	// train/epoch1/gpu:0/power_usage (W): mean 72.0, min 72.0, max 72.0
	// train/gpu:1/memory_used (MiB): mean 0.0, min 0.0, max 0.0
	// fan speed (N/A on SXM boards) collected: false
	// flattened as nvitop: 41
}

func ExampleCollector_CollectInBackground() {
	lib, _ := nvgo.Open(nvgo.WithNVML(exampleFleet()))
	defer lib.Close()
	c, _ := lib.NewCollector(nvgo.WithCollectorInterval(10 * time.Millisecond))
	_ = c.Activate("job")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // stops the goroutine, if the callback has not
	n := 0
	done := c.CollectInBackground(ctx, 20*time.Millisecond, func(m nvgo.Metrics, err error) bool {
		if err != nil {
			fmt.Println(err)
			return false
		}
		n++
		fmt.Printf("report %d: GPU 0 at %.0f%%\n", n, m.Stats["job/gpu:0/gpu_utilization (%)"].Mean)
		_ = c.Clear("job") // each report covers its own interval
		return n < 2
	})
	<-done
	// Output:
	// report 1: GPU 0 at 37%
	// report 2: GPU 0 at 37%
}
