package nvgo

import (
	"errors"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// listedProcess is one process of a device's process lists, its entries
// merged.
type listedProcess struct {
	pid uint32
	typ ProcessType
	// mem is its GPU memory in bytes (nvmlx.NotAvailable when the driver
	// has none): the compute entry's for a process on several lists, whose
	// graphics entry holds only its graphics context.
	mem    uint64
	gi, ci uint32 // MIG instance IDs; nvmlx.NoInstance outside MIG
}

// mpsServerName is the MPS server's name. With MPS, NVML lists the server
// among a GPU's compute processes and its clients on a list of their own.
const mpsServerName = "nvidia-cuda-mps-server"

// listProcesses reads a device's process lists and merges them by PID, in
// the order NVML lists them: the compute and graphics processes, and the
// clients of an MPS server when one runs on the device (or when a listed
// process's name is not known yet), as compute processes. It makes no call
// after the GPU is found lost (r.lost). The error is for the lists as a
// whole: nil when one of them could be read.
func listProcesses(r *passReader, hosts *hostProcessTable, buf []listedProcess) ([]listedProcess, error) {
	h := r.h
	out := buf[:0]
	merge := func(list []nvmlx.ProcessInfo, t ProcessType) {
		for _, pi := range list {
			i := 0
			for i < len(out) && out[i].pid != pi.PID {
				i++
			}
			if i == len(out) {
				out = append(out, listedProcess{pid: pi.PID})
			}
			e := &out[i]
			if t == ProcessCompute || e.typ == 0 {
				e.mem, e.gi, e.ci = pi.UsedMemory, pi.GPUInstanceID, pi.ComputeInstanceID
			}
			e.typ |= t
		}
	}
	compute, errC := h.ComputeProcesses()
	r.check(errC)
	merge(compute, ProcessCompute)
	errG := r.lost
	if r.lost == nil {
		var graphics []nvmlx.ProcessInfo
		graphics, errG = h.GraphicsProcesses()
		r.check(errG)
		merge(graphics, ProcessGraphics)
	}
	if errC != nil && errG != nil {
		return nil, errors.Join(errC, errG)
	}
	if r.lost == nil && mpsServerListed(compute, hosts) && r.d.reads.known(opMPS) == nil {
		clients, err := h.MPSProcesses()
		r.d.reads.note(opMPS, err)
		r.check(err)
		merge(clients, ProcessCompute)
	}
	return out, nil
}

// mpsServerListed reports whether an MPS server may be among the compute
// processes: one is named so, or one's name is not known yet.
func mpsServerListed(compute []nvmlx.ProcessInfo, hosts *hostProcessTable) bool {
	for _, pi := range compute {
		if name, known := hosts.knownName(int32(pi.PID)); !known || name == mpsServerName {
			return true
		}
	}
	return false
}
