package main

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

// frame is one refresh: the machine as the sampler read it, with every
// utilization a mean over the interval since the previous frame.
type frame struct {
	at       time.Time
	interval time.Duration // what the means cover; 0 before two frames
	driver   string
	cuda     string
	devices  []deviceRow
	procs    []procRow
	host     nvgo.HostStats
	err      error // the snapshot failed as a whole
}

// deviceRow is one device of the frame: a GPU (with its MIG devices and
// vGPU instances nested), or with --only-visible a MIG device of its own.
type deviceRow struct {
	snap      nvgo.DeviceSnapshot
	cudaIndex int // with --only-visible; -1 otherwise
	// gpuUtil and memUtil are the interval's means from the driver's
	// sample buffers; averaged says they are (MIG devices and a GPU the
	// accumulator could not read show the snapshot's reading).
	gpuUtil, memUtil nvgo.Value[nvgo.Percent]
	averaged         bool
	migs             []deviceRow
}

// label names a device in the process table: "0", or "0:1" for MIG device
// 1 of GPU 0.
func (d *deviceRow) label() string {
	if mig, ok := d.snap.MIGIndex.Get(); ok {
		return fmt.Sprintf("%d:%d", d.snap.Index, mig)
	}
	return fmt.Sprint(d.snap.Index)
}

// procKey identifies a host process across frames: its PID and start time,
// so that a reused PID is another process.
type procKey struct {
	pid     int
	created time.Time
}

// procRow is one process on one device.
type procRow struct {
	device string                   // deviceRow.label()
	gpu    int                      // the physical GPU's index
	snap   *nvgo.GpuProcessSnapshot // the snapshot's, shared and never changed
	key    procKey
	// sm and mem (GPU memory) are the interval's means (averaged), else
	// the snapshot's reading.
	sm       nvgo.Value[nvgo.Percent]
	mem      nvgo.Value[nvgo.Bytes]
	averaged bool
}

// frameSource is what the model reads frames from.
type frameSource interface {
	// next blocks until the next refresh is due, then reads a frame.
	next(ctx context.Context) frame
	// readAll asks the frames from the next on to read every group of
	// readings (for the device screen), or again only what the main
	// screen shows.
	readAll(on bool)
}

// sampler reads frames from a Library: the accumulator's means since the
// previous frame, one snapshot for the rest, and the host.
type sampler struct {
	lib      *nvgo.Library
	sel      tool.Selection
	acc      *nvgo.Accumulator
	prev     nvgo.Counters
	fields   nvgo.Fields
	filter   tool.ProcessFilter
	started  bool
	interval time.Duration
	all      atomic.Bool // readAll
}

// snapshotFields are what the monitor shows.
const snapshotFields = nvgo.FieldsStatus | nvgo.FieldClocks | nvgo.FieldPCIe

// newSampler starts the accumulator over the physical GPUs of sel; it runs
// until ctx ends.
func newSampler(ctx context.Context, lib *nvgo.Library, sel tool.Selection, interval time.Duration, filter tool.ProcessFilter) (*sampler, error) {
	var gpus []*nvgo.Device
	for _, d := range sel.Devices {
		if m := d.MIG(); m != nil {
			d = m.Parent()
		}
		if !slices.Contains(gpus, d) {
			gpus = append(gpus, d)
		}
	}
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(interval), nvgo.WithAccumulatorDevices(gpus...))
	if err != nil {
		return nil, err
	}
	return &sampler{lib: lib, sel: sel, acc: acc, fields: snapshotFields, filter: filter, interval: interval}, nil
}

func (s *sampler) readAll(on bool) { s.all.Store(on) }

// next waits for the accumulator's next tick (none for the first frame,
// which the accumulator's first tick already covers) and reads a frame.
func (s *sampler) next(ctx context.Context) frame {
	if s.started {
		select {
		case <-ctx.Done():
			return frame{err: ctx.Err()}
		case <-s.acc.Updated():
		}
	}
	s.started = true
	return s.read(ctx)
}

// read takes one frame now.
func (s *sampler) read(ctx context.Context) frame {
	cur := s.acc.Counters()
	iv, err := nvgo.Delta(s.prev, cur)
	if err != nil {
		iv = nvgo.Interval{}
	}
	s.prev = cur
	f := frame{at: time.Now(), interval: iv.Duration()}
	fields := s.fields
	if s.all.Load() {
		fields = nvgo.FieldsAll
	}
	snap, err := s.lib.Snapshot(ctx, nvgo.WithDevices(s.sel.Devices...), nvgo.WithFields(fields))
	if err != nil {
		f.err = err
		return f
	}
	f.driver, f.cuda = snap.DriverVersion.Or(""), snap.CUDADriverVersion.Or("")
	// One allocation for the rows (a row is near a kilobyte: growing the
	// slice by appends made megabytes of garbage a refresh at 512 rows).
	n := 0
	for _, ds := range snap.Devices {
		n += len(ds.Processes)
		for _, m := range ds.MIGDevices {
			n += len(m.Processes)
		}
	}
	f.procs = make([]procRow, 0, n)
	f.devices = make([]deviceRow, 0, len(snap.Devices))
	for i, ds := range snap.Devices {
		row := deviceRow{snap: ds, cudaIndex: -1}
		if s.sel.CUDA != nil {
			row.cudaIndex = s.sel.CUDA[i]
		}
		row.gpuUtil, row.memUtil = ds.GPUUtilization, ds.MemoryUtilization
		g := iv.GPU(ds.Index)
		if g != nil && ds.MIGIndex.IsNA() && g.Err == nil && !g.GPUUtilization.IsNA() {
			row.gpuUtil, row.memUtil, row.averaged = g.GPUUtilization, g.MemoryUtilization, true
		}
		for _, m := range ds.MIGDevices {
			mr := deviceRow{snap: m, cudaIndex: -1, gpuUtil: m.GPUUtilization, memUtil: m.MemoryUtilization}
			row.migs = append(row.migs, mr)
			f.procs = s.appendProcRows(f.procs, &mr, ds.Index, m.Processes, g)
		}
		f.procs = s.appendProcRows(f.procs, &row, ds.Index, ds.Processes, g)
		f.devices = append(f.devices, row)
	}
	f.host = nvgo.ReadHost(ctx)
	return f
}

// appendProcRows appends to rows a device's processes, with the interval's
// means of g (the physical GPU's, nil if unknown).
func (s *sampler) appendProcRows(rows []procRow, d *deviceRow, gpu int, ps []nvgo.GpuProcessSnapshot, g *nvgo.GPUInterval) []procRow {
	label := d.label()
	for i := range ps {
		p := &ps[i]
		if !s.filter.Keep(*p) {
			continue
		}
		r := procRow{device: label, gpu: gpu, snap: p, sm: p.GPUSMUtilization, mem: p.GPUMemory,
			key: procKey{pid: p.PID, created: p.CreateTime.Or(time.Time{})}}
		if pi := g.Running(p.PID); pi != nil {
			if !pi.GPUSMUtilization.IsNA() {
				r.sm = pi.GPUSMUtilization
			}
			if !pi.GPUMemory.IsNA() {
				r.mem = pi.GPUMemory
			}
			r.averaged = true
		}
		rows = append(rows, r)
	}
	return rows
}
