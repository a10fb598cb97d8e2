//go:build cgo

package fakegpu

import (
	"math"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Accounting of a vGPU instance's guest processes: the same records as a
// GPU's (see accounting.go), one set per instance.

// SetAccountingMode turns per-process accounting of the instance's guest
// processes on or off (VgpuSpec.Accounting sets it at start). Turning it on
// gives every running process a record starting now; turning it off
// deletes every record, as on a GPU.
func (v *Vgpu) SetAccountingMode(on bool) {
	v.update(func() { v.setAccountingLocked(on) })
}

func (v *Vgpu) setAccountingLocked(on bool) {
	if on == v.accounting {
		return
	}
	v.accounting = on
	if !on {
		for _, r := range v.acct {
			if r.proc != nil {
				r.proc.acct = nil
			}
		}
		v.acct = nil
		return
	}
	for _, p := range v.procs {
		v.accountLocked(p)
	}
}

// accountLocked gives a process that starts (or is running when accounting
// is turned on) a record, evicting the oldest record when the buffer is
// full.
func (v *Vgpu) accountLocked(p *proc) {
	if !v.accounting || p.acct != nil {
		return
	}
	now := v.g.f.nowMicrosLocked()
	r := &acctRecord{pid: p.PID, proc: p, start: now, last: now}
	r.observe(now, p)
	p.acct = r
	v.acct = append(v.acct, r)
	if n := len(v.acct) - v.bufSize; n > 0 {
		for _, old := range v.acct[:n] {
			if old.proc != nil {
				old.proc.acct = nil
			}
		}
		v.acct = slices.Delete(v.acct, 0, n)
	}
}

// observeLocked updates p's record, if it has one, after a change of its
// figures or of the clock.
func (v *Vgpu) observeLocked(p *proc) {
	if p.acct != nil {
		p.acct.observe(v.g.f.nowMicrosLocked(), p)
	}
}

// endAccountingLocked closes the record of p, which stops now.
func (v *Vgpu) endAccountingLocked(p *proc) {
	r := p.acct
	if r == nil {
		return
	}
	now := v.g.f.nowMicrosLocked()
	r.integrate(now)
	r.end, r.proc, p.acct = now, nil, nil
}

func (h *vgpuHandle) getAccountingMode() (nvml.EnableState, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	if ret != nvml.SUCCESS {
		return nvml.FEATURE_DISABLED, ret
	}
	return enable(v.accounting), nvml.SUCCESS
}

// getAccountingPids lists each PID with a record once, oldest record first;
// ERROR_NOT_SUPPORTED with accounting off.
func (h *vgpuHandle) getAccountingPids() ([]int, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	switch {
	case ret != nvml.SUCCESS:
		return nil, ret
	case !v.accounting:
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
	out := []int{}
	seen := make(map[uint32]bool, len(v.acct))
	for _, r := range v.acct {
		if !seen[r.pid] {
			seen[r.pid] = true
			out = append(out, int(r.pid))
		}
	}
	return out, nvml.SUCCESS
}

// getAccountingStats answers the newest record of pid: ERROR_NOT_FOUND when
// there is none, ERROR_NOT_SUPPORTED with accounting off.
func (h *vgpuHandle) getAccountingStats(pid int) (nvml.AccountingStats, nvml.Return) {
	v, unlock, ret := h.lock()
	defer unlock()
	switch {
	case ret != nvml.SUCCESS:
		return nvml.AccountingStats{}, ret
	case !v.accounting:
		return nvml.AccountingStats{}, nvml.ERROR_NOT_SUPPORTED
	case pid <= 0 || pid > math.MaxUint32:
		return nvml.AccountingStats{}, nvml.ERROR_NOT_FOUND
	}
	for i := len(v.acct) - 1; i >= 0; i-- {
		if r := v.acct[i]; r.pid == uint32(pid) {
			return r.stats(v.g.f.nowMicrosLocked()), nvml.SUCCESS
		}
	}
	return nvml.AccountingStats{}, nvml.ERROR_NOT_FOUND
}

// clearAccountingPids deletes the records of processes that stopped;
// ERROR_NOT_SUPPORTED with accounting off. The fake does not check for
// root: inject ERROR_NO_PERMISSION with Vgpu.Fail.
func (h *vgpuHandle) clearAccountingPids() nvml.Return {
	v, unlock, ret := h.lock()
	defer unlock()
	switch {
	case ret != nvml.SUCCESS:
		return ret
	case !v.accounting:
		return nvml.ERROR_NOT_SUPPORTED
	}
	v.acct = slices.DeleteFunc(v.acct, func(r *acctRecord) bool { return r.proc == nil })
	return nvml.SUCCESS
}
