package main

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
)

// tickOf is what coverage reads of one GPU at one tick: the process
// samples so far and the tick's errors.
type tickOf struct {
	ticks, processSamples uint64
	gpuErr, listErr       error
}

func countersAt(n tickOf) nvgo.Counters {
	g := nvgo.GPUCounters{Index: 1, UUID: nvgo.Some("GPU-1"), Samples: n.ticks, ProcessSamples: n.processSamples, Err: n.gpuErr, ProcessesErr: n.listErr}
	if n.gpuErr != nil {
		g.ProcessesErr = n.gpuErr // as the accumulator sets it
	}
	return nvgo.Counters{Time: t0.Add(time.Duration(n.ticks) * time.Second), Ticks: n.ticks, GPUs: []nvgo.GPUCounters{g}}
}

func TestCoverageTurnsTicksThatMissedAGPUsProcessesIntoGaps(t *testing.T) {
	errList, errOther, errLost := errors.New("list: unknown error"), errors.New("list: timeout"), errors.New("GPU is lost")
	at := func(s int64) int64 { return t0.Unix() + s }
	listed := func(s, e int64, why string) gap {
		return gap{Start: at(s), End: at(e), Reason: "processes of GPU 1 not listed" + why, OnGPU: true, GPU: 1, UUID: "GPU-1"}
	}
	tests := []struct {
		name     string
		ticks    []tickOf // observed in turn, after the first tick (1, 1)
		wantGaps []gap
		wantLog  []string // the messages, in order
	}{
		{
			name:  "every tick listed: no gap, nothing said",
			ticks: []tickOf{{ticks: 2, processSamples: 2}, {ticks: 3, processSamples: 3}},
		},
		{
			name: "ticks observed one by one: the missed ones are one span, warned once",
			ticks: []tickOf{
				{ticks: 2, processSamples: 2},
				{ticks: 3, processSamples: 2, listErr: errList},
				{ticks: 4, processSamples: 2, listErr: errList},
				{ticks: 5, processSamples: 3},
			},
			wantGaps: []gap{listed(2, 4, ": list: unknown error")},
			wantLog:  []string{"the processes of a GPU cannot be listed", "the processes of a GPU are measured again"},
		},
		{
			name:     "three ticks at once, all missed: the span between the looks",
			ticks:    []tickOf{{ticks: 4, processSamples: 1, listErr: errList}},
			wantGaps: []gap{listed(1, 4, ": list: unknown error")},
			wantLog:  []string{"the processes of a GPU cannot be listed"},
		},
		{
			name:     "three at once, two missed and still failing: the last two",
			ticks:    []tickOf{{ticks: 4, processSamples: 2, listErr: errList}},
			wantGaps: []gap{listed(2, 4, ": list: unknown error")},
			wantLog:  []string{"the processes of a GPU cannot be listed"},
		},
		{
			name:     "three at once, two missed and listed again: the first two, a fault of a moment",
			ticks:    []tickOf{{ticks: 4, processSamples: 2}},
			wantGaps: []gap{listed(1, 3, "")},
			wantLog:  []string{"the processes of a GPU could not be listed for a moment"},
		},
		{
			name: "a fault that ended between two looks keeps its reason",
			ticks: []tickOf{
				{ticks: 2, processSamples: 1, listErr: errList},
				{ticks: 4, processSamples: 2},
			},
			wantGaps: []gap{listed(1, 3, ": list: unknown error")},
			wantLog:  []string{"the processes of a GPU cannot be listed", "the processes of a GPU are measured again"},
		},
		{
			name: "a new error is a new span and warned again",
			ticks: []tickOf{
				{ticks: 2, processSamples: 1, listErr: errList},
				{ticks: 3, processSamples: 1, listErr: errOther},
			},
			wantGaps: []gap{listed(1, 2, ": list: unknown error"), listed(2, 3, ": list: timeout")},
			wantLog:  []string{"the processes of a GPU cannot be listed", "the processes of a GPU cannot be listed"},
		},
		{
			name:     "a GPU that cannot be read at all is a gap too",
			ticks:    []tickOf{{ticks: 2, processSamples: 1, gpuErr: errLost}, {ticks: 3, processSamples: 1, gpuErr: errLost}},
			wantGaps: []gap{{Start: at(1), End: at(3), Reason: "GPU 1 not readable: GPU is lost", OnGPU: true, GPU: 1, UUID: "GPU-1"}},
			wantLog:  []string{"a GPU cannot be read"},
		},
		{
			name:  "an older or the same tick again is ignored",
			ticks: []tickOf{{ticks: 2, processSamples: 2}, {ticks: 2, processSamples: 1, listErr: errList}, {ticks: 1, processSamples: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logged strings.Builder
			log := slog.New(slog.NewTextHandler(&logged, nil))
			cv := newCoverage(log, countersAt(tickOf{ticks: 1, processSamples: 1}))
			for _, n := range tt.ticks {
				cv.observe(countersAt(n))
			}
			if got := cv.drain(); !slices.Equal(got, tt.wantGaps) {
				t.Errorf("gaps:\n%v\nwant:\n%v", got, tt.wantGaps)
			}
			if again := cv.drain(); again != nil {
				t.Errorf("a second drain = %v, want none", again)
			}
			var msgs []string
			for _, line := range strings.Split(strings.TrimSpace(logged.String()), "\n") {
				for _, w := range tt.wantLog {
					if strings.Contains(line, `msg="`+w) {
						msgs = append(msgs, w)
						break
					}
				}
			}
			if lines := strings.Count(logged.String(), "\n"); !slices.Equal(msgs, tt.wantLog) || lines != len(tt.wantLog) {
				t.Errorf("the log:\n%s\nwant, in order: %q", logged.String(), tt.wantLog)
			}
		})
	}
}
