package sampling

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/nvgo/nvgo/internal/nverr"
	"github.com/nvgo/nvgo/internal/nvmlx"
)

// stubDevice answers the sample buffers from what a test holds: every
// buffer answers the samples newer than it is asked for, and records the
// asks. Any other call panics (the embedded Device is nil).
type stubDevice struct {
	nvmlx.Device
	gpu, mem   buffer
	procs      []nvmlx.ProcessSample
	vgpus      []nvmlx.VgpuSample
	vgpuProcs  []nvmlx.VgpuProcessSample
	procErr    error
	procAsks   int
	vgpuAsks   int
	sampleAsks map[nvmlx.SampleKind]int
}

func (d *stubDevice) Samples(kind nvmlx.SampleKind, lastSeen uint64) ([]nvmlx.Sample, error) {
	if d.sampleAsks == nil {
		d.sampleAsks = map[nvmlx.SampleKind]int{}
	}
	d.sampleAsks[kind]++
	if kind == nvmlx.SampleGPUUtilization {
		return d.gpu.fetch(lastSeen)
	}
	return d.mem.fetch(lastSeen)
}

func (d *stubDevice) ProcessUtilization(lastSeen uint64) ([]nvmlx.ProcessSample, error) {
	d.procAsks++
	if d.procErr != nil {
		return nil, d.procErr
	}
	return newer(d.procs, lastSeen), nil
}

func (d *stubDevice) VgpuUtilization(lastSeen uint64) ([]nvmlx.VgpuSample, error) {
	d.vgpuAsks++
	return newer(d.vgpus, lastSeen), nil
}

func (d *stubDevice) VgpuProcessUtilization(lastSeen uint64) ([]nvmlx.VgpuProcessSample, error) {
	return newer(d.vgpuProcs, lastSeen), nil
}

func newer[S stamped](ss []S, lastSeen uint64) []S {
	var out []S
	for _, s := range ss {
		if s.Stamp() > lastSeen {
			out = append(out, s)
		}
	}
	return out
}

func valued(pairs ...float64) []nvmlx.Sample {
	var out []nvmlx.Sample
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, nvmlx.Sample{Timestamp: uint64(pairs[i]), Value: pairs[i+1]})
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// A sampler's device reader counts, each tick, the samples since its
// previous tick, time-weighted; the first sample of all stands for the
// time since the previous tick.
func TestDevicePerTick(t *testing.T) {
	t0 := time.UnixMicro(1_000_000)
	d := &stubDevice{gpu: buffer{samples: valued(1_000_000, 10, 2_000_000, 20)}, mem: buffer{samples: valued(2_000_000, 5)}}
	r := NewDevicePerTick()
	if m := r.Read(d, t0); !m.HasGPU || !m.HasMemory || m.GPU != 20 || m.Memory != 5 {
		t.Errorf("first tick %+v, want only the newest samples: GPU 20, memory 5", m)
	}
	d.gpu.samples = append(d.gpu.samples, valued(3_000_000, 40, 6_000_000, 0)...)
	m := r.Read(d, t0.Add(5*time.Second))
	if want := (40*1e6 + 0*3e6) / 4e6; !m.HasGPU || !near(m.GPU, want) || m.HasMemory {
		t.Errorf("second tick %+v, want GPU %v from [2 s, 6 s] and no memory sample", m, want)
	}

	// Before its first sample a buffer's first sample stands for the time
	// since the previous Read.
	fresh := &stubDevice{}
	r = NewDevicePerTick()
	r.Read(fresh, time.UnixMicro(1_000_000))
	fresh.gpu.samples = valued(2_000_000, 100, 3_000_000, 0)
	fresh.mem.samples = valued(3_000_000, 50)
	m = r.Read(fresh, time.UnixMicro(3_000_000))
	if !near(m.GPU, 50) || !near(m.Memory, 50) {
		t.Errorf("since the previous tick: %+v, want GPU 50 (100 over [1 s, 2 s], 0 over [2 s, 3 s]) and memory 50", m)
	}
}

// A GPU that keeps no buffer is not asked again; another failure is asked
// again on the next tick. The memory buffer is not read when the GPU's
// fails.
func TestDevicePerTickFailures(t *testing.T) {
	for _, tt := range []struct {
		name      string
		err       error
		wantAsked int
	}{
		{"not supported", fmt.Errorf("samples: %w", nverr.ErrNotSupported), 1},
		{"no permission", fmt.Errorf("samples: %w", nverr.ErrNoPermission), 1},
		{"anything else", errors.New("timeout"), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := &stubDevice{gpu: buffer{err: tt.err}, mem: buffer{samples: valued(1, 1)}}
			r := NewDevicePerTick()
			for i := range 3 {
				if m := r.Read(d, time.Unix(int64(i), 0)); m.HasGPU || m.HasMemory {
					t.Fatalf("tick %d: %+v, want no means", i, m)
				}
			}
			if got := d.sampleAsks[nvmlx.SampleGPUUtilization]; got != tt.wantAsked {
				t.Errorf("GPU buffer asked %d times, want %d", got, tt.wantAsked)
			}
			if got := d.sampleAsks[nvmlx.SampleMemoryUtilization]; got != 0 {
				t.Errorf("memory buffer asked %d times after the GPU's failed", got)
			}
		})
	}
}

func TestWindowMeans(t *testing.T) {
	d := &stubDevice{
		gpu: buffer{samples: valued(1_000_000, 90, 9_000_000, 10, 10_000_000, 30)},
		mem: buffer{err: errors.New("gone")},
	}
	m := WindowMeans(d, 2*time.Second)
	if want := (10*1e6 + 30*1e6) / 2e6; !m.HasGPU || !near(m.GPU, want) || m.HasMemory {
		t.Errorf("WindowMeans = %+v, want GPU %v over the last 2 s and no memory mean", m, want)
	}
	if !slices.Equal(d.gpu.asked, []uint64{0}) {
		t.Errorf("asked from %v, want [0]: a window starts afresh", d.gpu.asked)
	}
}

func TestProcessesPerTick(t *testing.T) {
	t0 := time.Unix(100, 0)
	d := &stubDevice{procs: []nvmlx.ProcessSample{
		{PID: 1, Timestamp: 500_000, SM: 99, Memory: 99}, // older than the newest second: before the first tick
		{PID: 1, Timestamp: 2_000_000, SM: 10, Memory: 1},
		{PID: 1, Timestamp: 2_500_000, SM: 30, Memory: 2},
		{PID: 2, Timestamp: 2_200_000, SM: 5, Memory: 7},
	}}
	r := NewProcessesPerTick()
	got, err := r.Read(d, t0)
	want := map[uint32]ProcessMeans{1: {SM: 20, Memory: 1.5}, 2: {SM: 5, Memory: 7}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("first tick %v, %v; want %v", got, err, want)
	}
	got, err = r.Read(d, t0.Add(time.Second))
	if err != nil || len(got) != 0 {
		t.Errorf("tick without new samples %v, %v; want none (idle)", got, err)
	}

	// Not supported is remembered; another failure is not.
	d.procErr = errors.New("timeout")
	r.Read(d, t0)
	r.Read(d, t0)
	d.procErr = fmt.Errorf("utilization: %w", nverr.ErrNotSupported)
	for range 2 {
		if _, err := r.Read(d, t0); !errors.Is(err, nverr.ErrNotSupported) {
			t.Errorf("Read error %v, want not supported", err)
		}
	}
	if d.procAsks != 5 {
		t.Errorf("asked %d times, want 5 (none after not supported)", d.procAsks)
	}
}

func TestCurrentProcesses(t *testing.T) {
	t0 := time.Unix(100, 0)
	d := &stubDevice{procs: []nvmlx.ProcessSample{
		{PID: 1, Timestamp: 3_000_000, SM: 30, Memory: 3, Enc: 2, Dec: 1},
		{PID: 2, Timestamp: 1_000_000, SM: 10},
		{PID: 3, Timestamp: 2_500_000, SM: 25},
	}}
	c := NewCurrentProcesses()
	if err := c.Poll(d, t0); err != nil {
		t.Fatal(err)
	}
	if u, ok := c.Get(1, t0); !ok || u != (ProcessUtilization{SM: 30, Memory: 3, Encoder: 2, Decoder: 1}) {
		t.Errorf("pid 1: %+v, %v", u, ok)
	}
	if _, ok := c.Get(2, t0); ok {
		t.Error("pid 2 counts although its sample is more than a second older than the newest")
	}
	c.Retain(func(pid uint32) bool { return pid != 3 })
	if _, ok := c.Get(3, t0); ok {
		t.Error("pid 3 counts after Retain refused it")
	}
}

func TestCurrentVgpus(t *testing.T) {
	d := &stubDevice{vgpus: []nvmlx.VgpuSample{
		{Instance: 7, Timestamp: 1_000_000, SM: 10},
		{Instance: 7, Timestamp: 2_000_000, SM: 20, Framebuffer: 2, Encoder: 3, Decoder: 4},
		{Instance: 8, Timestamp: 1_500_000, SM: 15},
	}}
	c := NewCurrentVgpus()
	later := time.Unix(3600, 0) // an instance's newest sample counts however old
	if err := c.Poll(d, time.Unix(100, 0)); err != nil {
		t.Fatal(err)
	}
	want := VgpuUtilization{SM: 20, Framebuffer: 2, Encoder: 3, Decoder: 4, Time: time.UnixMicro(2_000_000)}
	if u, ok := c.Get(7, later); !ok || u != want {
		t.Errorf("instance 7: %+v, %v; want %+v", u, ok, want)
	}
	c.Retain(func(id uint32) bool { return id == 7 })
	if _, ok := c.Get(8, later); ok {
		t.Error("instance 8 counts after Retain refused it")
	}
}

func TestCurrentVgpuProcesses(t *testing.T) {
	d := &stubDevice{vgpuProcs: []nvmlx.VgpuProcessSample{
		{Instance: 7, PID: 1, Name: "a", Timestamp: 2_000_000, SM: 20, Memory: 2, Encoder: 3, Decoder: 4},
		{Instance: 8, PID: 1, Name: "b", Timestamp: 2_000_000, SM: 40},
		{Instance: 7, PID: 2, Name: "c", Timestamp: 500_000, SM: 5}, // idle: older than the window
	}}
	c := NewCurrentVgpuProcesses()
	if err := c.Poll(d, time.Unix(100, 0)); err != nil {
		t.Fatal(err)
	}
	each := func(instance uint32) []VgpuProcessUtilization {
		var out []VgpuProcessUtilization
		c.Each(instance, func(p VgpuProcessUtilization) { out = append(out, p) })
		return out
	}
	want := []VgpuProcessUtilization{{Instance: 7, PID: 1, Name: "a", SM: 20, Memory: 2, Encoder: 3, Decoder: 4, Time: time.UnixMicro(2_000_000)}}
	if got := each(7); !slices.Equal(got, want) {
		t.Errorf("instance 7: %+v, want %+v", got, want)
	}
	c.Retain(func(id uint32) bool { return id == 7 })
	if got := each(8); len(got) != 0 {
		t.Errorf("instance 8 after Retain refused it: %+v", got)
	}
}

func TestVgpusPerTick(t *testing.T) {
	d := &stubDevice{vgpus: []nvmlx.VgpuSample{
		{Instance: 7, Timestamp: 1_000_000, SM: 10, Framebuffer: 1, Encoder: 0, Decoder: 2},
		{Instance: 7, Timestamp: 2_000_000, SM: 20, Framebuffer: 2, Encoder: 1, Decoder: 2},
		{Instance: 8, Timestamp: 1_500_000, SM: 15},
	}}
	r := NewVgpusPerTick()
	got, err := r.Read(d, time.Unix(100, 0))
	want := map[uint32]VgpuMeans{7: {SM: 15, Framebuffer: 1.5, Encoder: 0.5, Decoder: 2}, 8: {SM: 15}}
	if err != nil || !maps.Equal(got, want) {
		t.Errorf("first tick (every sample kept counts) %v, %v; want %v", got, err, want)
	}
	d.vgpus = append(d.vgpus, nvmlx.VgpuSample{Instance: 8, Timestamp: 3_000_000, SM: 60})
	got, err = r.Read(d, time.Unix(101, 0))
	if want := map[uint32]VgpuMeans{8: {SM: 60}}; err != nil || !maps.Equal(got, want) {
		t.Errorf("second tick %v, %v; want %v", got, err, want)
	}
}
