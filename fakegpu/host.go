//go:build cgo

package fakegpu

import "slices"

// HostProcess returns the process running with pid on any GPU or MIG device
// of the fleet that carries host facts (Process.Host), and whether there is
// one. A process on several GPUs has one host: the first GPU's facts win.
func (f *Fleet) HostProcess(pid uint32) (Process, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, g := range f.gpus {
		for _, p := range g.procs {
			if p.PID == pid && p.Host != nil {
				out := p.Process
				h := *p.Host
				h.Command = slices.Clone(h.Command)
				out.Host = &h
				return out, true
			}
		}
	}
	return Process{}, false
}

// HostPIDs returns the PIDs of the fleet's processes that carry host facts,
// each once.
func (f *Fleet) HostPIDs() []uint32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var pids []uint32
	for _, g := range f.gpus {
		for _, p := range g.procs {
			if p.Host != nil && !slices.Contains(pids, p.PID) {
				pids = append(pids, p.PID)
			}
		}
	}
	return pids
}
