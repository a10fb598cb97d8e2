//go:build cgo

package fakegpu

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// processInfoLocked is the NVML view of p in a process list.
func (g *GPU) processInfoLocked(p *proc, mem uint64) nvml.ProcessInfo {
	info := nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: mem, GpuInstanceId: noInstance, ComputeInstanceId: noInstance}
	if g.migCur == nvml.DEVICE_MIG_ENABLE {
		info.GpuInstanceId, info.ComputeInstanceId = p.GPUInstanceID, p.ComputeInstanceID
	}
	return info
}

func (d *device) getComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	out := []nvml.ProcessInfo{}
	for _, p := range g.procs {
		if k := p.kind(); k == Compute || k == ComputeGraphics {
			out = append(out, g.processInfoLocked(p, p.UsedMemory))
		}
	}
	return out, nvml.SUCCESS
}

func (d *device) getGraphicsRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	out := []nvml.ProcessInfo{}
	for _, p := range g.procs {
		switch p.kind() {
		case Graphics:
			out = append(out, g.processInfoLocked(p, p.UsedMemory))
		case ComputeGraphics:
			// The compute entry carries the process's memory; the graphics
			// entry of the same PID shows only its graphics context.
			mem := p.UsedMemory
			if mem != NotAvailable {
				mem = min(mem, graphicsShare)
			}
			out = append(out, g.processInfoLocked(p, mem))
		}
	}
	return out, nvml.SUCCESS
}

func (d *device) getMPSComputeRunningProcesses() ([]nvml.ProcessInfo, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	out := []nvml.ProcessInfo{}
	for _, p := range g.procs {
		if p.kind() == MPSClient {
			out = append(out, g.processInfoLocked(p, p.UsedMemory))
		}
	}
	return out, nvml.SUCCESS
}

// getProcessUtilization returns, for each process with a sample newer than
// lastSeen (µs), its newest sample; ERROR_NOT_FOUND when there is none, as
// NVML does, and ERROR_NOT_SUPPORTED with MIG enabled.
func (d *device) getProcessUtilization(lastSeen uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if g.migCur == nvml.DEVICE_MIG_ENABLE {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	var out []nvml.ProcessUtilizationSample
	for _, p := range g.procs {
		if p.sample == 0 || p.sample <= lastSeen {
			continue
		}
		out = append(out, nvml.ProcessUtilizationSample{
			Pid:       p.PID,
			TimeStamp: p.sample,
			SmUtil:    p.sampleSM,
			MemUtil:   p.sampleMem,
			EncUtil:   p.sampleEnc,
			DecUtil:   p.sampleDec,
		})
	}
	if len(out) == 0 {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return out, nvml.SUCCESS
}
