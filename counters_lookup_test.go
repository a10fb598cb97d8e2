package nvgo_test

import (
	"testing"

	"github.com/nvgo/nvgo"
)

func TestIntervalLookups(t *testing.T) {
	iv := nvgo.Interval{GPUs: []nvgo.GPUInterval{
		{Index: 3, Processes: []nvgo.ProcessInterval{
			{ProcessKey: nvgo.ProcessKey{PID: 10}, Exited: true},
			{ProcessKey: nvgo.ProcessKey{PID: 10}},
			{ProcessKey: nvgo.ProcessKey{PID: 11}, Exited: true},
		}},
		{Index: 5},
	}}
	if g := iv.GPU(5); g != &iv.GPUs[1] {
		t.Errorf("GPU(5) = %p; want the interval's own %p", g, &iv.GPUs[1])
	}
	if g := iv.GPU(4); g != nil {
		t.Errorf("GPU(4) = %+v; want nil for a GPU not watched", g)
	}
	g := iv.GPU(3)
	tests := []struct {
		pid  int
		want *nvgo.ProcessInterval
	}{
		{10, &g.Processes[1]}, // the running one, not the one that exited with the same PID
		{11, nil},             // exited during the interval
		{12, nil},             // never seen
	}
	var none *nvgo.GPUInterval
	if got := none.Running(10); got != nil {
		t.Errorf("Running on a GPU the interval lacks = %+v; want nil", got)
	}
	for _, tt := range tests {
		if got := g.Running(tt.pid); got != tt.want {
			t.Errorf("Running(%d) = %p; want %p", tt.pid, got, tt.want)
		}
	}
}
