package main

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A sample writes what client_golang's const metric of the same
// description, kind, value and labels writes.
func TestSampleWritesWhatAConstMetricWrites(t *testing.T) {
	names := dcgmLabels("hostname")
	desc := prometheus.NewDesc("DCGM_FI_DEV_GPU_UTIL", "help", names, nil)
	values := []string{"0", "GPU-1", "00000000:18:00.0", "nvidia0", "NVIDIA H100 80GB HBM3", "node-a", "1g.10gb", "7"}
	var cache labelCache
	cache.begin()
	for _, kind := range []prometheus.ValueType{prometheus.GaugeValue, prometheus.CounterValue} {
		for _, v := range []float64{0, 97.5, -1} {
			var got, want dto.Metric
			s := sample{desc: desc, kind: kind, value: v, labels: cache.pairs(names, values)}
			if err := s.Write(&got); err != nil {
				t.Fatal(err)
			}
			if err := prometheus.MustNewConstMetric(desc, kind, v, values...).Write(&want); err != nil {
				t.Fatal(err)
			}
			if g, w := fmt.Sprint(&got), fmt.Sprint(&want); g != w {
				t.Errorf("kind %v value %v: sample writes\n%s\nconst metric writes\n%s", kind, v, g, w)
			}
		}
	}
}

// The cache hands out the same pairs for the same labels while they are in
// use, and forgets a set two scrapes after its last use.
func TestLabelCacheKeepsSetsInUseAndDropsTheRest(t *testing.T) {
	var c labelCache
	names := []string{"gpu", "user"}
	c.begin()
	alice := c.pairs(names, []string{"0", "alice"})
	bob := c.pairs(names, []string{"0", "bob"})
	c.end()
	if &alice[0] == &bob[0] || alice[1].GetValue() != "alice" {
		t.Fatalf("pairs mixed up: %v %v", alice, bob)
	}
	for scrape := 1; scrape <= 3; scrape++ {
		c.begin()
		again := c.pairs(names, []string{"0", "alice"})
		if &again[0] != &alice[0] {
			t.Errorf("scrape %d: alice's pairs made afresh", scrape)
		}
		c.end()
	}
	if len(c.sets) != 1 {
		t.Errorf("%d sets kept after bob left three scrapes ago; want alice's alone", len(c.sets))
	}
	// Values that would run into each other under a separator do not
	// share a key.
	c.begin()
	a := c.pairs([]string{"a", "b"}, []string{"x\x00b\x00p", "q"})
	b := c.pairs([]string{"a", "b"}, []string{"x", "p\x00b\x00q"})
	if &a[0] == &b[0] || b[0].GetValue() != "x" {
		t.Errorf("two label sets share a key: %v %v", a, b)
	}
}
