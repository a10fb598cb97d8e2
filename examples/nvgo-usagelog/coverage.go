package main

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/nvgo/nvgo"
)

// coverage follows, tick by tick, whether each GPU's processes were
// measured: a tick that could not read a GPU, or only its process lists,
// saw none of its processes, and their rows miss that time. Without it a
// GPU whose lists fail just has no rows, and "nobody ran" cannot be told
// from "nobody was seen". It warns once per fault (and again if its error
// changes), says when the GPU is measured again, and turns the time missed
// into gaps of that GPU for gaps.csv.
//
// A coverage is used by the logger's goroutine alone.
type coverage struct {
	log   *slog.Logger
	ticks uint64    // of the latest Counters observed
	time  time.Time // of its tick
	gpus  map[int]*gpuCoverage
}

// gpuCoverage is one GPU's.
type gpuCoverage struct {
	processSamples uint64 // as of the latest Counters observed
	// failing is the error of the fault in progress, as warned, and
	// reason its gaps' Reason; both "" when the latest tick listed the
	// processes.
	failing, reason string
	pending         []gap // spans not yet drained, by start
}

// newCoverage starts following from the counters of a run's first tick,
// which no interval includes.
func newCoverage(log *slog.Logger, first nvgo.Counters) *coverage {
	cv := &coverage{log: log, ticks: first.Ticks, time: first.Time, gpus: map[int]*gpuCoverage{}}
	for _, g := range first.GPUs {
		cv.gpus[g.Index] = &gpuCoverage{processSamples: g.ProcessSamples}
	}
	return cv
}

// observe takes the counters of a tick no older than the latest observed
// (older ones are ignored): for each GPU, the ticks since that did not read
// its process lists become a span of a gap. Ticks are observed one by one
// while the logger keeps up; after several at once, the missed ones are put
// last when the lists still fail at the newest tick, else first.
func (cv *coverage) observe(c nvgo.Counters) {
	if c.Ticks <= cv.ticks {
		return
	}
	ticks := c.Ticks - cv.ticks
	each := c.Time.Sub(cv.time) / time.Duration(ticks)
	for _, g := range c.GPUs {
		st := cv.gpus[g.Index]
		if st == nil {
			st = &gpuCoverage{processSamples: g.ProcessSamples}
			cv.gpus[g.Index] = st
		}
		missed := ticks - min(g.ProcessSamples-st.processSamples, ticks)
		st.processSamples = g.ProcessSamples
		if missed > 0 {
			from, to := cv.time, c.Time
			switch {
			case missed == ticks:
			case g.ProcessesErr != nil:
				from = to.Add(-time.Duration(missed) * each)
			default:
				to = from.Add(time.Duration(missed) * each)
			}
			reason := notMeasured(g)
			if g.ProcessesErr == nil && st.reason != "" {
				reason = st.reason // the fault in progress, which ended since
			}
			st.add(gap{Start: from.Unix(), End: to.Unix(), Reason: reason, OnGPU: true, GPU: g.Index, UUID: g.UUID.Or("")})
		}
		cv.logChange(g, st, missed)
		st.reason = ""
		if g.ProcessesErr != nil {
			st.reason = notMeasured(g)
		}
	}
	cv.ticks, cv.time = c.Ticks, c.Time
}

// notMeasured is the reason of a gap of g's processes, on one line.
func notMeasured(g nvgo.GPUCounters) string {
	flat := func(err error) string { return strings.ReplaceAll(err.Error(), "\n", " / ") } // a joined error's parts
	switch {
	case g.Err != nil:
		return fmt.Sprintf("GPU %d not readable: %s", g.Index, flat(g.Err))
	case g.ProcessesErr != nil:
		return fmt.Sprintf("processes of GPU %d not listed: %s", g.Index, flat(g.ProcessesErr))
	}
	return fmt.Sprintf("processes of GPU %d not listed", g.Index)
}

// add appends a span, merged into the one before when they touch and have
// the same reason.
func (st *gpuCoverage) add(g gap) {
	if g.End <= g.Start {
		return // less than a second: not a whole one to record
	}
	if n := len(st.pending); n > 0 {
		last := &st.pending[n-1]
		if last.Reason == g.Reason && g.Start <= last.End {
			last.End = max(last.End, g.End)
			return
		}
	}
	st.pending = append(st.pending, g)
}

// logChange logs a GPU's fault starting, changing or ending, given the
// ticks the latest observation missed.
func (cv *coverage) logChange(g nvgo.GPUCounters, st *gpuCoverage, missed uint64) {
	now := ""
	if g.ProcessesErr != nil { // the GPU's own error when it failed whole
		now = g.ProcessesErr.Error()
	}
	switch {
	case now != "" && now != st.failing:
		if g.Err != nil {
			cv.log.Warn("a GPU cannot be read: its processes are not measured while it fails; the time is recorded in "+gapsName, "gpu", g.Index, "err", now)
		} else {
			cv.log.Warn("the processes of a GPU cannot be listed: they are not measured while it fails; the time is recorded in "+gapsName, "gpu", g.Index, "err", now)
		}
	case now == "" && st.failing != "":
		cv.log.Info("the processes of a GPU are measured again", "gpu", g.Index)
	case now == "" && missed > 0:
		cv.log.Warn("the processes of a GPU could not be listed for a moment; the time is recorded in "+gapsName, "gpu", g.Index)
	}
	st.failing = now
}

// drain returns the spans observed so far, by GPU, and forgets them.
func (cv *coverage) drain() []gap {
	idx := make([]int, 0, len(cv.gpus))
	for i := range cv.gpus {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	var out []gap
	for _, i := range idx {
		out = append(out, cv.gpus[i].pending...)
		cv.gpus[i].pending = nil
	}
	return out
}
