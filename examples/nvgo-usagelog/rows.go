package main

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/nvgo/nvgo"
)

// rowsOf turns one interval of the accumulator into CSV rows: one per
// (user, PID, GPU) seen in it, processes that exited in it included, by GPU
// then PID. tick is the accumulator's tick, so a process seen by n ticks
// held the GPU n·tick. A process the interval saw no tick of (it left just
// after the previous interval's end) has no row: its time is in the
// previous one.
func rowsOf(iv nvgo.Interval, tick time.Duration) []row {
	type key struct {
		user     string
		pid, gpu int
	}
	type acc struct {
		row
		ticks            uint64
		usage, mem, memU weighted
	}
	end := iv.End.Unix()
	length := some(math.Round(iv.Duration().Seconds()))
	if iv.End.Before(iv.Start) {
		// The clock was set back in the interval: its length is unknown.
		length = num{}
	}
	byKey := map[key]*acc{}
	var order []key
	for _, g := range iv.GPUs {
		for _, p := range g.Processes {
			if p.Samples == 0 {
				continue
			}
			user, ok := p.Username.Get()
			if !ok || user == "" {
				user = unknownUser
			}
			k := key{user, p.PID, g.Index}
			a := byKey[k]
			if a == nil {
				// A PID that left and came back within the interval is
				// one row: the same user's same PID on the same GPU.
				a = &acc{row: row{Time: end, User: user, PID: p.PID, GPU: g.Index, Interval: length, UUID: g.UUID.Or("")}}
				byKey[k] = a
				order = append(order, k)
			}
			a.ticks += p.Samples
			a.usage.add(percentOf(p.GPUSMUtilization), p.Samples)
			a.memU.add(percentOf(p.GPUMemoryUtilization), p.Samples)
			a.mem.add(mibOf(p.GPUMemory), p.Samples)
		}
	}
	rows := make([]row, 0, len(order))
	for _, k := range order {
		a := byKey[k]
		a.Seconds = some(float64(a.ticks) * tick.Seconds())
		a.Usage, a.MemUsage, a.MemMiB = a.usage.mean(), a.memU.mean(), a.mem.mean()
		rows = append(rows, a.row)
	}
	slices.SortFunc(rows, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.GPU, b.GPU), cmp.Compare(a.PID, b.PID), cmp.Compare(a.User, b.User))
	})
	return rows
}

func percentOf(v nvgo.Value[nvgo.Percent]) num {
	p, ok := v.Get()
	return num{float64(p), ok}
}

func mibOf(v nvgo.Value[nvgo.Bytes]) num {
	b, ok := v.Get()
	return num{float64(b) / (1 << 20), ok}
}

// weighted is a mean weighted by ticks, over the values that are not N/A.
type weighted struct{ sum, n float64 }

func (w *weighted) add(v num, ticks uint64) {
	if v.ok {
		w.sum += v.v * float64(ticks)
		w.n += float64(ticks)
	}
}

func (w weighted) mean() num {
	if w.n == 0 {
		return num{}
	}
	return some(w.sum / w.n)
}
