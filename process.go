package nvgo

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
	"github.com/nvgo/nvgo/internal/procfs"
	"github.com/nvgo/nvgo/internal/sampling"
)

// GpuProcess is a process on one GPU: its GPU-side figures, as of the last
// refresh of its Device's processes, and the host process it wraps. The same
// *GpuProcess is returned while the process lives (identity is PID and
// creation time), so its host CPU percent is a delta between refreshes.
//
// A GpuProcess is safe for concurrent use.
type GpuProcess struct {
	pid    int
	device *Device
	host   *HostProcess

	mu        sync.RWMutex
	typ       ProcessType
	gpuMemory Value[Bytes]
	memTotal  Value[Bytes]
	sm, mem   Value[Percent]
	enc, dec  Value[Percent]
	gi, ci    Value[int]
	updated   time.Time
	// hostStat is the host's /proc/<pid>/stat read at the last refresh,
	// when hostFresh: the snapshot that follows need not read it again.
	hostStat  procfs.Stat
	hostFresh bool
}

// PID returns the process ID as NVML reports it (a host PID).
func (p *GpuProcess) PID() int { return p.pid }

// Device returns the GPU the process runs on.
func (p *GpuProcess) Device() *Device { return p.device }

// Host returns the host process (name, user, command, CPU, memory, signals).
func (p *GpuProcess) Host() *HostProcess { return p.host }

// String returns "pid 4242 on GPU 0" (or "on MIG 0/1").
func (p *GpuProcess) String() string { return fmt.Sprintf("pid %d on %s", p.pid, p.device.label()) }

func (p *GpuProcess) read() *GpuProcess { p.mu.RLock(); return p }
func (p *GpuProcess) done()             { p.mu.RUnlock() }

// Type returns C, G or C+G, recomputed on every refresh.
func (p *GpuProcess) Type() ProcessType { defer p.read().done(); return p.typ }

// GPUMemory returns the GPU memory the process uses. For a C+G process it is
// the compute entry's figure. N/A when the driver reports none (WDDM, some MIG setups).
func (p *GpuProcess) GPUMemory() Value[Bytes] { defer p.read().done(); return p.gpuMemory }

// GPUMemoryPercent returns GPUMemory as a percent of the device's total memory.
func (p *GpuProcess) GPUMemoryPercent() Value[Percent] {
	defer p.read().done()
	return memPercent(p.gpuMemory, p.memTotal)
}

// GPUSMUtilization returns the process's SM utilization from the driver's
// newest sample; 0 when it had no sample in the last second (idle). N/A where
// NVML keeps no per-process samples (e.g. MIG).
func (p *GpuProcess) GPUSMUtilization() Value[Percent] { defer p.read().done(); return p.sm }

// GPUMemoryUtilization returns the process's memory-controller utilization, like GPUSMUtilization.
func (p *GpuProcess) GPUMemoryUtilization() Value[Percent] { defer p.read().done(); return p.mem }

// GPUEncoderUtilization returns the process's encoder utilization, like GPUSMUtilization.
func (p *GpuProcess) GPUEncoderUtilization() Value[Percent] { defer p.read().done(); return p.enc }

// GPUDecoderUtilization returns the process's decoder utilization, like GPUSMUtilization.
func (p *GpuProcess) GPUDecoderUtilization() Value[Percent] { defer p.read().done(); return p.dec }

// GPUInstanceID returns the MIG GPU instance ID; N/A when not on MIG.
func (p *GpuProcess) GPUInstanceID() Value[int] { defer p.read().done(); return p.gi }

// ComputeInstanceID returns the MIG compute instance ID; N/A when not on MIG.
func (p *GpuProcess) ComputeInstanceID() Value[int] { defer p.read().done(); return p.ci }

// UpdatedAt returns when the GPU figures were last refreshed.
func (p *GpuProcess) UpdatedAt() time.Time { defer p.read().done(); return p.updated }

// Signal sends sig to the process after re-checking that its PID still
// belongs to it (HostProcess.Signal): ErrProcessGone if not, ErrNoPermission
// if the caller may not signal it.
func (p *GpuProcess) Signal(sig syscall.Signal) error { return p.host.Signal(sig) }

// Kill sends SIGKILL after re-checking the process's identity.
func (p *GpuProcess) Kill() error { return p.host.Kill() }

// Terminate sends SIGTERM after re-checking the process's identity.
func (p *GpuProcess) Terminate() error { return p.host.Terminate() }

// Interrupt sends SIGINT after re-checking the process's identity.
func (p *GpuProcess) Interrupt() error { return p.host.Interrupt() }

func memPercent(used, total Value[Bytes]) Value[Percent] {
	u, ok1 := used.Get()
	t, ok2 := total.Get()
	switch {
	case !ok1:
		return NA[Percent](used.Reason(), used.Err())
	case !ok2:
		return NA[Percent](total.Reason(), total.Err())
	case t == 0:
		return NA[Percent](NotSupported, ErrUnifiedMemory)
	}
	return Some(percentOf(uint64(u), uint64(t)))
}

// Processes reads the processes on the GPU now and returns them, reusing the
// GpuProcess of each process still alive. The error is for the process
// lists as a whole (e.g. ErrGPULost); per-process failures are N/A fields.
func (d *Device) Processes(ctx context.Context) ([]*GpuProcess, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := d.handle()
	if err != nil {
		return nil, err
	}
	r := &passReader{d: d, h: h}
	return d.refreshProcesses(r, d.MemoryTotal())
}

// processState is a device's process bookkeeping.
type processState struct {
	mu    sync.Mutex
	procs map[int]*GpuProcess
	// util keeps each process's newest utilization sample, read with the
	// Device's own cursor.
	util sampling.CurrentProcesses
	list []listedProcess // the buffer of the last listing
}

func (s *processState) prepare() {
	s.procs = map[int]*GpuProcess{}
	s.util = sampling.NewCurrentProcesses()
}

func instanceID(v uint32) Value[int] {
	if v == nvmlx.NoInstance {
		return NA[int](NotSupported, nil)
	}
	return Some(int(v))
}

// refreshProcesses reads the process lists (one call per kind), merges them,
// reads per-process utilization from the cursor and updates the live objects.
func (d *Device) refreshProcesses(r *passReader, memTotal Value[Bytes]) ([]*GpuProcess, error) {
	h := r.h
	st := &d.procs
	st.mu.Lock()
	defer st.mu.Unlock()
	list, err := listProcesses(r, d.lib.hosts, st.list)
	if err != nil {
		return nil, err
	}
	st.list = list
	if len(list) == 0 && len(st.procs) == 0 {
		return nil, nil // an idle GPU that was idle: nothing to merge or release
	}

	now := r.now
	if now.IsZero() {
		now = d.lib.clock.Now()
	}
	var utilErr error
	switch {
	case d.mig != nil:
		utilErr = errNotOnMIG // NVML keeps no per-process samples on MIG: unknown, not 0%
	case r.lost != nil:
		utilErr = r.lost
	case len(list) > 0:
		utilErr = r.check(st.util.Poll(h, now))
	}

	live := make(map[int]*GpuProcess, len(list))
	out := make([]*GpuProcess, 0, len(list))
	for _, e := range list {
		pid := int(e.pid)
		host, hostStat, hostFresh := d.lib.hosts.lookup(pid, d)
		p := st.procs[pid]
		if p == nil || p.host != host {
			p = &GpuProcess{pid: pid, device: d, host: host}
		}
		util := func(get func(sampling.ProcessUtilization) uint32) Value[Percent] {
			if utilErr != nil {
				return NA[Percent](ReasonOf(utilErr), utilErr)
			}
			u, ok := st.util.Get(uint32(pid), now)
			if !ok {
				return Some(Percent(0)) // no recent sample: idle
			}
			return Some(Percent(get(u)))
		}
		p.mu.Lock()
		p.typ, p.gpuMemory, p.memTotal = e.typ, processMemory(e.mem), memTotal
		p.gi, p.ci = instanceID(e.gi), instanceID(e.ci)
		p.sm = util(func(u sampling.ProcessUtilization) uint32 { return u.SM })
		p.mem = util(func(u sampling.ProcessUtilization) uint32 { return u.Memory })
		p.enc = util(func(u sampling.ProcessUtilization) uint32 { return u.Encoder })
		p.dec = util(func(u sampling.ProcessUtilization) uint32 { return u.Decoder })
		p.updated = now
		p.hostStat, p.hostFresh = hostStat, hostFresh
		p.mu.Unlock()
		live[pid] = p
		out = append(out, p)
	}
	var left []int32
	for pid := range st.procs {
		if _, ok := live[pid]; !ok {
			left = append(left, int32(pid))
		}
	}
	d.lib.hosts.release(d, left)
	st.procs = live
	st.util.Retain(func(pid uint32) bool { return live[int(pid)] != nil })
	return out, nil
}

// readProcesses refreshes the processes and snapshots them.
func (d *Device) readProcesses(r *passReader, memTotal Value[Bytes], hosts *hostMemo) ([]GpuProcessSnapshot, error) {
	procs, err := d.refreshProcesses(r, memTotal)
	if err != nil {
		return nil, err
	}
	if hosts == nil {
		hosts = newHostMemo(d.lib.clock.Now())
	}
	out := make([]GpuProcessSnapshot, len(procs))
	for i, p := range procs {
		out[i] = p.snapshot(hosts)
	}
	return out, nil
}

// Snapshot returns the process's figures as plain data, reading host
// information now.
func (p *GpuProcess) Snapshot() GpuProcessSnapshot {
	return p.snapshot(newHostMemo(p.device.lib.clock.Now()))
}

func (p *GpuProcess) snapshot(hosts *hostMemo) GpuProcessSnapshot {
	p.mu.RLock()
	s := GpuProcessSnapshot{
		Timestamp:             p.updated,
		PID:                   p.pid,
		DeviceIndex:           p.device.index,
		DeviceUUID:            p.device.UUID().Or(""),
		Type:                  p.typ,
		GPUMemory:             p.gpuMemory,
		GPUMemoryPercent:      memPercent(p.gpuMemory, p.memTotal),
		GPUSMUtilization:      p.sm,
		GPUMemoryUtilization:  p.mem,
		GPUEncoderUtilization: p.enc,
		GPUDecoderUtilization: p.dec,
		GPUInstanceID:         p.gi,
		ComputeInstanceID:     p.ci,
	}
	hostStat, hostFresh := p.hostStat, p.hostFresh
	p.mu.RUnlock()
	s.HostProcessSnapshot = hosts.get(p.host, hostStat, hostFresh)
	return s
}
