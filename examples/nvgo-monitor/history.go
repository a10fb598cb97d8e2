package main

import (
	"math"

	"github.com/nvgo/nvgo"
)

// historyLen is how many refreshes a series keeps: more than a wide
// terminal's columns.
const historyLen = 512

// series is a ring of the latest historyLen values, NaN for a refresh that
// had none.
type series struct {
	vals []float64
	next int
	n    int
}

func (s *series) add(v float64) {
	if s.vals == nil {
		s.vals = make([]float64, historyLen)
	}
	s.vals[s.next] = v
	s.next = (s.next + 1) % historyLen
	s.n = min(s.n+1, historyLen)
}

// addValue adds v's value, NaN when it is N/A.
func addValue[T ~uint64 | ~float64](s *series, v nvgo.Value[T]) {
	if x, ok := v.Get(); ok {
		s.add(float64(x))
	} else {
		s.add(math.NaN())
	}
}

// last returns the latest n values, oldest first.
func (s *series) last(n int) []float64 {
	n = min(n, s.n)
	out := make([]float64, n)
	for i := range out {
		out[i] = s.vals[(s.next-n+i+historyLen)%historyLen]
	}
	return out
}

// stats returns the latest value, the mean and the maximum of the values
// kept (NaN when there are none).
func (s *series) stats() (last, mean, top float64) {
	last, mean, top = math.NaN(), math.NaN(), math.NaN()
	var sum float64
	var count int
	for _, v := range s.last(s.n) {
		if v != v {
			continue
		}
		last = v
		sum += v
		count++
		if top != top || v > top {
			top = v
		}
	}
	if count > 0 {
		mean = sum / float64(count)
	}
	return last, mean, top
}

// deviceHistory is one device's utilization over the refreshes.
type deviceHistory struct{ gpu, mem series }

// processHistory is one process's figures over the refreshes.
type processHistory struct {
	gpuMem, sm, cpu, rss series
	seen                 uint64 // the frame it was last seen in
}

// history keeps the series of the devices, the host and the processes.
// Processes not seen for historyLen frames are forgotten, so it does not
// grow with the processes that come and go.
type history struct {
	frames  uint64
	devices map[string]*deviceHistory // by UUID
	procs   map[procKey]*processHistory
	cpu     series
	mem     series
}

func newHistory() *history {
	return &history{devices: map[string]*deviceHistory{}, procs: map[procKey]*processHistory{}}
}

// add records a frame.
func (h *history) add(f *frame) {
	h.frames++
	var addDevice func(d *deviceRow)
	addDevice = func(d *deviceRow) {
		uuid := d.snap.UUID.Or("")
		dh := h.devices[uuid]
		if dh == nil {
			dh = &deviceHistory{}
			h.devices[uuid] = dh
		}
		addValue(&dh.gpu, d.gpuUtil)
		addValue(&dh.mem, d.snap.MemoryPercent)
		for i := range d.migs {
			addDevice(&d.migs[i])
		}
	}
	for i := range f.devices {
		addDevice(&f.devices[i])
	}
	addValue(&h.cpu, f.host.CPUPercent)
	addValue(&h.mem, f.host.MemoryPercent)
	for i := range f.procs {
		p := &f.procs[i]
		ph := h.procs[p.key]
		if ph == nil {
			ph = &processHistory{}
			h.procs[p.key] = ph
		}
		if ph.seen == h.frames {
			continue // on several devices: once per frame
		}
		ph.seen = h.frames
		addValue(&ph.gpuMem, p.mem)
		addValue(&ph.sm, p.sm)
		addValue(&ph.cpu, p.snap.CPUPercent)
		addValue(&ph.rss, p.snap.HostMemory)
	}
	for k, ph := range h.procs {
		if h.frames-ph.seen > historyLen {
			delete(h.procs, k)
		}
	}
}
