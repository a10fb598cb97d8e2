//go:build cgo

package fakegpu

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Process types, as nvidia-smi shows them.
const (
	Compute         = "C"   // a compute (CUDA) process
	Graphics        = "G"   // a graphics process
	ComputeGraphics = "C+G" // a process that is both
	// MPSClient is a client of an MPS server ("M+C"): NVML lists it on the
	// MPS list (nvmlDeviceGetMPSComputeRunningProcesses) only, and the
	// server, a compute process named nvidia-cuda-mps-server, on the
	// compute list.
	MPSClient = "M+C"
)

// NotAvailable is NVML's "value not available" (NVML_VALUE_NOT_AVAILABLE as
// an unsigned 64-bit value). A Process with this UsedMemory reports it, as
// NVML does under WDDM or without privileges.
const NotAvailable uint64 = math.MaxUint64

// noInstance is the GPU/compute instance ID NVML reports outside MIG.
const noInstance = 0xFFFFFFFF

// graphicsShare is the memory the graphics entry of a "C+G" process
// reports; its compute entry carries the rest.
const graphicsShare = 4 * MiB

// ErrBadProcess is wrapped by the errors of GPU.StartProcess.
var ErrBadProcess = errors.New("fakegpu: bad process")

// Process is a process running on a fake GPU.
type Process struct {
	// PID is the host PID; it must not be 0 nor repeat on one GPU.
	PID uint32
	// Name is what SystemGetProcessName reports; empty means "python3".
	Name string
	// Type is Compute ("C"), Graphics ("G"), ComputeGraphics ("C+G") or
	// MPSClient ("M+C"); empty means Compute. A "C+G" process is in both
	// process lists, an "M+C" one on the MPS list only.
	Type string
	// UsedMemory is the framebuffer memory it uses, in bytes, or
	// NotAvailable.
	UsedMemory uint64
	// GPUInstanceID and ComputeInstanceID are its MIG instances. They are
	// reported only while the GPU has MIG enabled; otherwise NVML reports
	// 0xFFFFFFFF for both, and so does the fake.
	GPUInstanceID, ComputeInstanceID uint32
	// SM, Mem, Enc and Dec are its utilization in percent
	// (GetProcessUtilization).
	SM, Mem, Enc, Dec uint32
	// Host is what the host's /proc says of the process, served by a host
	// source over the fleet (package fakegpu/fakehost); nil leaves the PID
	// to the real /proc.
	Host *Host
}

// Host is a simulated process as the host sees it.
type Host struct {
	// User owns the process; "" means "root".
	User string
	// Command is its command line; empty means its Name alone.
	Command []string
	// CPU is the share of one CPU it keeps busy, in percent (more than
	// 100 on several CPUs).
	CPU float64
	// Memory is its resident memory, in bytes.
	Memory uint64
	// Age is how long it had been running when its host source was made.
	Age time.Duration
}

// check returns the Go field name and problem of the first invalid field.
func (p Process) check() (field string, problem string) {
	switch {
	case p.PID == 0:
		return "PID", "want a non-zero PID"
	case p.Type != "" && p.Type != Compute && p.Type != Graphics && p.Type != ComputeGraphics && p.Type != MPSClient:
		return "Type", fmt.Sprintf(`want "C", "G", "C+G" or "M+C", got %q`, p.Type)
	case p.SM > 100:
		return "SM", fmt.Sprintf("want a percentage 0..100, got %d", p.SM)
	case p.Mem > 100:
		return "Mem", fmt.Sprintf("want a percentage 0..100, got %d", p.Mem)
	case p.Enc > 100:
		return "Enc", fmt.Sprintf("want a percentage 0..100, got %d", p.Enc)
	case p.Dec > 100:
		return "Dec", fmt.Sprintf("want a percentage 0..100, got %d", p.Dec)
	}
	return "", ""
}

// proc is a running process and its latest utilization sample.
type proc struct {
	Process
	mig       *MIG   // the MIG device it runs on; nil: the GPU itself
	sample    uint64 // µs timestamp of the latest sample; 0: none
	sampleSM  uint32
	sampleMem uint32
	sampleEnc uint32
	sampleDec uint32
	acct      *acctRecord // its accounting record; nil when not accounted
}

func (p *proc) busy() bool {
	return p.SM != 0 || p.Mem != 0 || p.Enc != 0 || p.Dec != 0
}

// sampleAt records the process's current utilization as a sample at ts.
func (p *proc) sampleAt(ts uint64) {
	p.sample = ts
	p.sampleSM, p.sampleMem, p.sampleEnc, p.sampleDec = p.SM, p.Mem, p.Enc, p.Dec
}

func (p *proc) kind() string {
	if p.Type == "" {
		return Compute
	}
	return p.Type
}

func (p *proc) name() string {
	if p.Name == "" {
		return "python3"
	}
	return p.Name
}

// StartProcess starts p on the GPU itself (use MIG.StartProcess for a MIG
// device). If it has non-zero utilization, a utilization sample is taken at
// Now(). It fails, wrapping ErrBadProcess, for a zero PID, a PID already
// running on the GPU or one of its MIG devices, an unknown Type or a
// percentage above 100.
func (g *GPU) StartProcess(p Process) error {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	return g.startLocked(p, nil)
}

// startLocked starts p on the GPU, or on its MIG device m if m is not nil.
func (g *GPU) startLocked(p Process, m *MIG) error {
	where := fmt.Sprintf("GPU %d", g.index)
	if m != nil {
		where = fmt.Sprintf("GPU %d MIG device %d", g.index, m.slot)
	}
	if field, problem := p.check(); field != "" {
		return fmt.Errorf("%w: %s: Process.%s: %s", ErrBadProcess, where, field, problem)
	}
	if m != nil && p.Type != "" && p.Type != Compute {
		return fmt.Errorf("%w: %s: Process.Type: %s", ErrBadProcess, where, migTypeProblem(p.Type))
	}
	if g.procLocked(p.PID) != nil {
		return fmt.Errorf("%w: %s: Process.PID: %d is already running on this GPU", ErrBadProcess, where, p.PID)
	}
	if p.Host != nil { // the fleet's own copy
		h := *p.Host
		h.Command = slices.Clone(h.Command)
		p.Host = &h
	}
	np := &proc{Process: p, mig: m}
	if m != nil {
		np.GPUInstanceID, np.ComputeInstanceID = uint32(m.gi), uint32(m.ci)
	}
	if np.busy() {
		np.sampleAt(g.f.nowMicrosLocked())
	}
	g.procs = append(g.procs, np)
	g.accountLocked(np)
	return nil
}

// StopProcess ends the process with this PID on the GPU or one of its MIG
// devices; its utilization samples go with it, its accounting record stays.
// It does nothing if there is no such process.
func (g *GPU) StopProcess(pid uint32) {
	g.update(func() {
		g.procs = slices.DeleteFunc(g.procs, func(p *proc) bool {
			if p.PID != pid {
				return false
			}
			g.endAccountingLocked(p)
			return true
		})
	})
}

// SetProcessUtilization sets a running process's utilization in percent
// and takes a sample at Now(). A sample is visible to
// GetProcessUtilization(lastSeen) only if it is newer than lastSeen, so
// Advance the clock between two samples that a reader must tell apart. It
// does nothing if there is no such process.
func (g *GPU) SetProcessUtilization(pid, sm, mem, enc, dec uint32) {
	g.update(func() {
		p := g.procLocked(pid)
		if p == nil {
			return
		}
		p.SM, p.Mem, p.Enc, p.Dec = pct(sm), pct(mem), pct(enc), pct(dec)
		p.sampleAt(g.f.nowMicrosLocked())
		g.observeLocked(p)
	})
}

// SetProcessMemory sets a running process's GPU memory in bytes (or
// NotAvailable), as it allocates or frees; its accounting record keeps the
// largest figure. It does nothing if there is no such process.
func (g *GPU) SetProcessMemory(pid uint32, bytes uint64) {
	g.update(func() {
		if p := g.procLocked(pid); p != nil {
			p.UsedMemory = bytes
			g.observeLocked(p)
		}
	})
}

// Processes returns the processes running on the GPU, those on its MIG
// devices included (with their GPU and compute instance IDs), in start
// order.
func (g *GPU) Processes() []Process {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	out := make([]Process, len(g.procs))
	for i, p := range g.procs {
		out[i] = p.Process
	}
	return out
}

func (g *GPU) procLocked(pid uint32) *proc {
	for _, p := range g.procs {
		if p.PID == pid {
			return p
		}
	}
	return nil
}
