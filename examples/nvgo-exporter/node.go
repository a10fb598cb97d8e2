package main

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

// snapshotFields are what the exporter reads in one snapshot: every group
// that a dcgm-exporter family or an nvgo family needs.
const snapshotFields = nvgo.FieldMemory | nvgo.FieldUtilization | nvgo.FieldCodec | nvgo.FieldClocks |
	nvgo.FieldTemperature | nvgo.FieldPower | nvgo.FieldPCIe | nvgo.FieldNVLink | nvgo.FieldECC |
	nvgo.FieldMIGMode | nvgo.FieldProcesses | nvgo.FieldMIGDevices | nvgo.FieldFan

// nodeView is the node as one read found it: the figures the metrics, the
// node page and its JSON are made of. A nil number is N/A (no sample, never
// 0).
type nodeView struct {
	Hostname string    `json:"hostname"`
	Time     time.Time `json:"time"`
	// Interval is how many seconds the utilization means cover (the time
	// since this reader's previous read); 0 when the figures are the
	// driver's last sample (the first read).
	Interval float64   `json:"interval_seconds"`
	Driver   string    `json:"driver_version"`
	CUDA     string    `json:"cuda_version"`
	GPUs     []gpuView `json:"gpus"`
	// Err is set when the driver could not be read at all.
	Err string `json:"error,omitempty"`
	// Duration is how long the read took.
	Duration time.Duration `json:"-"`
}

// gpuView is one GPU, or one MIG device of a GPU.
type gpuView struct {
	Index      int    `json:"index"`
	UUID       string `json:"uuid"`
	BusID      string `json:"pci_bus_id"`
	Name       string `json:"name"`
	DeviceFile string `json:"device"` // nvidiaN, from the minor number
	MIGMode    string `json:"mig_mode"`
	// MIGProfile and GPUInstanceID are set on a MIG device.
	MIGProfile    string `json:"mig_profile,omitempty"`
	GPUInstanceID *int   `json:"gpu_instance_id,omitempty"`
	// Err says why the device could not be read (a GPU lost off the bus).
	Err string `json:"error,omitempty"`

	// Metrics are the device's readings by nvgo metric name
	// (nvgo.DeviceMetrics), each in its metric's unit; a reading that is
	// N/A is not there.
	Metrics map[string]float64 `json:"metrics"`
	// Averaged is set when gpu_utilization and memory_utilization are the
	// means over the interval, not the driver's last sample.
	Averaged bool `json:"averaged"`

	Processes []processView `json:"processes"`
	Users     []userView    `json:"users"`
	// ProcessesErr says why the process list could not be read.
	ProcessesErr string `json:"processes_error,omitempty"`
	// Free is nvgo's one definition of free ((*nvgo.DeviceSnapshot).Free):
	// nobody uses the device and work can run on it; a GPU with MIG on is
	// free when it has MIG devices and all are free. nil (null) when it
	// cannot be told: the device or a process list could not be read.
	Free *bool     `json:"free"`
	MIGs []gpuView `json:"mig_devices,omitempty"`
}

// IsFree reports whether the device is known to be free.
func (g *gpuView) IsFree() bool { return g.Free != nil && *g.Free }

// State is what the node page says of the device (gpuState).
func (g *gpuView) State() string {
	busy := len(g.Processes) > 0
	for i := range g.MIGs {
		busy = busy || len(g.MIGs[i].Processes) > 0
	}
	return gpuState(g.Free, busy, g.MIGMode == "enabled")
}

// gpuState is what the pages say of a GPU, from whether it is free (nil:
// unknown), whether a process is on it or on one of its MIG devices, and
// whether MIG is on: "free", "in use", "unknown", or "no MIG devices" for
// a GPU with MIG on that nobody uses but where no work can run.
func gpuState(free *bool, busy, migOn bool) string {
	switch {
	case free == nil:
		return "unknown"
	case *free:
		return "free"
	case !busy && migOn:
		return "no MIG devices"
	}
	return "in use"
}

// processView is one process on a GPU.
type processView struct {
	PID     int        `json:"pid"`
	User    string     `json:"user"`
	Command string     `json:"command"` // the short name, never the command line
	Type    string     `json:"type"`
	MemMiB  *float64   `json:"gpu_memory_mib"`
	SM      *float64   `json:"sm_utilization_percent"`
	Started *time.Time `json:"started,omitempty"`
}

// userView is one user's share of a GPU.
type userView struct {
	User      string     `json:"user"`
	Processes int        `json:"processes"`
	MemMiB    float64    `json:"gpu_memory_mib"` // the known part
	Since     *time.Time `json:"since,omitempty"`
}

// unknownUser names the owner of a process whose owner cannot be read.
const unknownUser = "unknown"

// reader reads nodeViews from a Library: the accumulator's means since this
// cursor's previous read, one snapshot for the rest.
type reader struct {
	lib      *nvgo.Library
	acc      *nvgo.Accumulator
	hostname string
	devices  []*nvgo.Device
}

// cursor is one consumer's place in the accumulator, so that the scrapes'
// means are not cut short by a look at the page.
type cursor struct {
	mu   sync.Mutex
	prev nvgo.Counters
}

// newReader starts the accumulator (it runs until ctx ends) over every GPU.
func newReader(ctx context.Context, lib *nvgo.Library, hostname string, interval time.Duration) (*reader, error) {
	sel, err := tool.ChooseDevices(lib, nil, false)
	if err != nil {
		return nil, err
	}
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(interval), nvgo.WithAccumulatorDevices(sel.Devices...))
	if err != nil {
		return nil, err
	}
	return &reader{lib: lib, acc: acc, hostname: hostname, devices: sel.Devices}, nil
}

// read takes one view, with the means since c's previous read.
func (r *reader) read(ctx context.Context, c *cursor) nodeView {
	start := time.Now()
	v := nodeView{Hostname: r.hostname, Time: start}
	c.mu.Lock()
	cur := r.acc.Counters()
	iv, err := nvgo.Delta(c.prev, cur)
	if err != nil {
		iv = nvgo.Interval{}
	}
	c.prev = cur
	c.mu.Unlock()
	v.Interval = iv.Duration().Seconds()
	snap, err := r.lib.Snapshot(ctx, nvgo.WithDevices(r.devices...), nvgo.WithFields(snapshotFields))
	if err != nil {
		v.Err = err.Error()
		v.Duration = time.Since(start)
		return v
	}
	v.Driver, v.CUDA = snap.DriverVersion.Or(""), snap.CUDADriverVersion.Or("")
	for i := range snap.Devices {
		ds := &snap.Devices[i]
		g := gpuOf(ds, iv.GPU(ds.Index))
		for j := range ds.MIGDevices {
			g.MIGs = append(g.MIGs, gpuOf(&ds.MIGDevices[j], nil))
		}
		v.GPUs = append(v.GPUs, g)
	}
	v.Duration = time.Since(start)
	return v
}

// gpuOf turns a device's snapshot into a view, with the interval's means of
// mean when known.
func gpuOf(ds *nvgo.DeviceSnapshot, mean *nvgo.GPUInterval) gpuView {
	g := gpuView{Index: ds.Index, UUID: ds.UUID.Or(""), Name: ds.Name.Or(""), BusID: ds.BusID.Or("")}
	if ds.Err != nil {
		g.Err = ds.Err.Error()
		return g
	}
	if minor, ok := ds.MinorNumber.Get(); ok {
		g.DeviceFile = fmt.Sprintf("nvidia%d", minor)
	}
	if m, ok := ds.MIGMode.Get(); ok {
		g.MIGMode = "disabled"
		if m {
			g.MIGMode = "enabled"
		}
	}
	g.MIGProfile = ds.MIGProfile.Or("")
	if gi, ok := ds.GPUInstanceID.Get(); ok {
		g.GPUInstanceID = &gi
	}
	g.Metrics = make(map[string]float64, len(metrics))
	for _, m := range metrics {
		if x, ok := m.Value(ds).Get(); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
			g.Metrics[m.Name] = x
		}
	}
	if mean != nil && mean.Err == nil && !mean.GPUUtilization.IsNA() {
		g.Averaged = true
		for name, v := range map[string]nvgo.Value[nvgo.Percent]{"gpu_utilization": mean.GPUUtilization, "memory_utilization": mean.MemoryUtilization} {
			delete(g.Metrics, name)
			if x, ok := v.Get(); ok {
				g.Metrics[name] = float64(x)
			}
		}
	}
	if ds.ProcessesErr != nil {
		g.ProcessesErr = ds.ProcessesErr.Error()
	}
	if free, ok := ds.Free().Get(); ok {
		g.Free = &free
	}
	g.Processes = processesOf(ds.Processes, mean)
	g.Users = usersOf(g.Processes)
	return g
}

// metrics are the readings a view carries: every one nvgo has.
var metrics = nvgo.DeviceMetrics()

// Metric returns the view's reading called name, or nil when it is N/A.
func (g *gpuView) Metric(name string) *float64 {
	if x, ok := g.Metrics[name]; ok {
		return &x
	}
	return nil
}

// processesOf turns a device's processes into views, in PID order, with
// the interval's SM means where the accumulator saw the process.
func processesOf(ps []nvgo.GpuProcessSnapshot, mean *nvgo.GPUInterval) []processView {
	out := make([]processView, 0, len(ps))
	for i := range ps {
		p := &ps[i]
		pv := processView{
			PID: p.PID, User: p.Username.Or(unknownUser), Command: p.Name.Or(""),
			Type:   p.Type.String(),
			MemMiB: num(p.GPUMemory, nvgo.Bytes.MiB),
			SM:     num(p.GPUSMUtilization, func(x nvgo.Percent) float64 { return float64(x) }),
		}
		if pv.User == "" {
			pv.User = unknownUser
		}
		if t, ok := p.CreateTime.Get(); ok {
			pv.Started = &t
		}
		if pi := mean.Running(p.PID); pi != nil && !pi.GPUSMUtilization.IsNA() {
			pv.SM = num(pi.GPUSMUtilization, func(x nvgo.Percent) float64 { return float64(x) })
		}
		out = append(out, pv)
	}
	slices.SortFunc(out, func(a, b processView) int { return cmp.Compare(a.PID, b.PID) })
	return out
}

// usersOf sums a GPU's processes per user, in user order.
func usersOf(ps []processView) []userView {
	var us []userView
	for _, p := range ps {
		i := slices.IndexFunc(us, func(u userView) bool { return u.User == p.User })
		if i < 0 {
			us = append(us, userView{User: p.User})
			i = len(us) - 1
		}
		u := &us[i]
		u.Processes++
		if p.MemMiB != nil {
			u.MemMiB += *p.MemMiB
		}
		if p.Started != nil && (u.Since == nil || p.Started.Before(*u.Since)) {
			u.Since = p.Started
		}
	}
	slices.SortFunc(us, func(a, b userView) int { return strings.Compare(a.User, b.User) })
	return us
}

// num is v as a float64 through f, or nil when v is N/A or the figure is
// not finite (JSON has no NaN nor ±Inf).
func num[T any](v nvgo.Value[T], f func(T) float64) *float64 {
	x, ok := v.Get()
	if !ok {
		return nil
	}
	y := f(x)
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return nil
	}
	return &y
}
