//go:build cgo

package fakegpu

import (
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// DefaultAccountingBufferSize is what GetAccountingBufferSize reports unless
// GPUSpec.AccountingBufferSize says otherwise: the record count of the
// driver's circular buffer on current boards.
const DefaultAccountingBufferSize = 4000

// acctRecord is one process's accounting record. Utilization is integrated
// exactly, as percent × µs, at every change of the process's utilization,
// at every Fleet.Advance and when the process stops.
type acctRecord struct {
	pid   uint32
	proc  *proc  // the running process; nil once it stopped
	start uint64 // µs: the process's start, or accounting's if later
	last  uint64 // µs up to which smSum and memSum are integrated
	end   uint64 // µs: when the process stopped; valid once proc is nil

	sm, mem       uint32 // percent since last
	smSum, memSum uint64 // percent × µs since start
	maxMem        uint64 // bytes
	hasMem        bool   // maxMem holds a reported value
}

// observe integrates the utilization up to now, then takes the process's
// current figures.
func (r *acctRecord) observe(now uint64, p *proc) {
	r.integrate(now)
	r.sm, r.mem = p.SM, p.Mem
	if m := p.UsedMemory; m != NotAvailable && (!r.hasMem || m > r.maxMem) {
		r.maxMem, r.hasMem = m, true
	}
}

func (r *acctRecord) integrate(now uint64) {
	if now > r.last {
		dt := now - r.last
		r.smSum = addSat(r.smSum, uint64(r.sm)*dt)
		r.memSum = addSat(r.memSum, uint64(r.mem)*dt)
		r.last = now
	}
}

// stats is the record as GetAccountingStats reports it at now (µs). The
// utilizations are the time-weighted means over the accounted lifetime,
// rounded to the nearest percent (halves up); over a lifetime of zero they
// are the current figures. Time is the lifetime in whole milliseconds,
// rounded down, once the process stopped.
func (r *acctRecord) stats(now uint64) nvml.AccountingStats {
	running := r.proc != nil
	to := now
	if !running {
		to = r.end
	}
	to = max(to, r.start)
	smSum, memSum := r.smSum, r.memSum
	if to > r.last {
		dt := to - r.last
		smSum = addSat(smSum, uint64(r.sm)*dt)
		memSum = addSat(memSum, uint64(r.mem)*dt)
	}
	s := nvml.AccountingStats{
		GpuUtilization:    r.sm,
		MemoryUtilization: r.mem,
		MaxMemoryUsage:    NotAvailable,
		StartTime:         r.start,
	}
	if life := to - r.start; life > 0 {
		s.GpuUtilization = uint32((smSum + life/2) / life)
		s.MemoryUtilization = uint32((memSum + life/2) / life)
	}
	if r.hasMem {
		s.MaxMemoryUsage = r.maxMem
	}
	if running {
		s.IsRunning = 1
	} else {
		s.Time = (r.end - r.start) / 1000
	}
	return s
}

// SetAccountingMode turns per-process accounting on or off, as
// nvmlDeviceSetAccountingMode does (GPUSpec.Accounting sets it at start).
// Turning it on gives every process running on the GPU itself a record
// starting now; turning it off deletes every record, as NVML documents.
// Processes on MIG devices are not accounted.
func (g *GPU) SetAccountingMode(on bool) {
	g.update(func() { g.setAccountingLocked(on) })
}

func (g *GPU) setAccountingLocked(on bool) {
	if on == g.accounting {
		return
	}
	g.accounting = on
	if !on {
		for _, r := range g.acct {
			if r.proc != nil {
				r.proc.acct = nil
			}
		}
		g.acct = nil
		return
	}
	for _, p := range g.procs {
		g.accountLocked(p)
	}
}

// accountLocked gives a process that starts (or is running when accounting
// is turned on) a record, evicting the oldest record when the buffer is
// full.
func (g *GPU) accountLocked(p *proc) {
	if !g.accounting || p.mig != nil || p.acct != nil {
		return
	}
	now := g.f.nowMicrosLocked()
	r := &acctRecord{pid: p.PID, proc: p, start: now, last: now}
	r.observe(now, p)
	p.acct = r
	g.acct = append(g.acct, r)
	if n := len(g.acct) - g.spec.AccountingBufferSize; n > 0 {
		for _, old := range g.acct[:n] {
			if old.proc != nil {
				old.proc.acct = nil
			}
		}
		g.acct = slices.Delete(g.acct, 0, n)
	}
}

// observeLocked updates p's record, if it has one, after a change of its
// figures or of the clock.
func (g *GPU) observeLocked(p *proc) {
	if p.acct != nil {
		p.acct.observe(g.f.nowMicrosLocked(), p)
	}
}

// endAccountingLocked closes the record of p, which stops now.
func (g *GPU) endAccountingLocked(p *proc) {
	r := p.acct
	if r == nil {
		return
	}
	now := g.f.nowMicrosLocked()
	r.integrate(now)
	r.end, r.proc, p.acct = now, nil, nil
}

// forgetAccountingLocked deletes the record of p, which is removed as if it
// had never run (a scenario replacing a preset's processes).
func (g *GPU) forgetAccountingLocked(p *proc) {
	if r := p.acct; r != nil {
		g.acct = slices.DeleteFunc(g.acct, func(x *acctRecord) bool { return x == r })
		p.acct = nil
	}
}

// latestRecordLocked is the newest record of pid, or nil.
func (g *GPU) latestRecordLocked(pid uint32) *acctRecord {
	for i := len(g.acct) - 1; i >= 0; i-- {
		if g.acct[i].pid == pid {
			return g.acct[i]
		}
	}
	return nil
}

func (d *device) getAccountingMode() (nvml.EnableState, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	return enable(g.accounting), nvml.SUCCESS
}

// setAccountingMode takes FEATURE_ENABLED or FEATURE_DISABLED; anything else
// is ERROR_INVALID_ARGUMENT. The fake does not check for root: inject
// ERROR_NO_PERMISSION with GPU.Fail("SetAccountingMode", …).
func (d *device) setAccountingMode(mode nvml.EnableState) nvml.Return {
	if mode != nvml.FEATURE_ENABLED && mode != nvml.FEATURE_DISABLED {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	g, unlock := d.lock()
	defer unlock()
	g.setAccountingLocked(mode == nvml.FEATURE_ENABLED)
	return nvml.SUCCESS
}

// getAccountingPids lists each PID with a record once, oldest record first;
// ERROR_NOT_SUPPORTED with accounting off, as NVML answers.
func (d *device) getAccountingPids() ([]int, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if !g.accounting {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	out := []int{}
	seen := make(map[uint32]bool, len(g.acct))
	for _, r := range g.acct {
		if !seen[r.pid] {
			seen[r.pid] = true
			out = append(out, int(r.pid))
		}
	}
	return out, nvml.SUCCESS
}

// getAccountingStats answers the newest record of pid: ERROR_NOT_FOUND when
// there is none, ERROR_NOT_SUPPORTED with accounting off.
func (d *device) getAccountingStats(pid uint32) (nvml.AccountingStats, nvml.Return) {
	g, unlock := d.lock()
	defer unlock()
	if !g.accounting {
		return nvml.AccountingStats{}, nvml.ERROR_NOT_SUPPORTED
	}
	r := g.latestRecordLocked(pid)
	if r == nil {
		return nvml.AccountingStats{}, nvml.ERROR_NOT_FOUND
	}
	return r.stats(g.f.nowMicrosLocked()), nvml.SUCCESS
}

func (d *device) getAccountingBufferSize() (int, nvml.Return) {
	return d.g.spec.AccountingBufferSize, nvml.SUCCESS
}

// clearAccountingPids deletes the records of processes that stopped;
// ERROR_NOT_SUPPORTED with accounting off.
func (d *device) clearAccountingPids() nvml.Return {
	g, unlock := d.lock()
	defer unlock()
	if !g.accounting {
		return nvml.ERROR_NOT_SUPPORTED
	}
	g.acct = slices.DeleteFunc(g.acct, func(r *acctRecord) bool { return r.proc == nil })
	return nvml.SUCCESS
}
