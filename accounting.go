package nvgo

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/nvgo/nvgo/internal/nvmlx"
)

// ErrAccountingOff is wrapped, together with NVML's ErrNotSupported, by the
// errors of accounting reads on a GPU whose accounting mode is off: NVML
// answers "not supported" then, the same as on a GPU without accounting.
var ErrAccountingOff = errors.New("accounting mode is off (Device.SetAccountingMode turns it on, as root)")

// accountingStartSlack is how much earlier than its host process an
// accounting record may start and still be that process's: the host's
// create time is built on a boot time in whole seconds, so it can be up to
// a second late.
const accountingStartSlack = 2 * time.Second

// ProcessAccounting is one process's accounting record: what the driver
// kept about a process that used the GPU while accounting mode was on,
// whether it still runs or has exited. Records live in a circular buffer
// of AccountingBufferSize entries per GPU, so the oldest are eventually
// overwritten; only compute and graphics processes are accounted.
//
// It is plain data, safe for concurrent use.
type ProcessAccounting struct {
	// PID is the process ID as NVML reports it (a host PID).
	PID int
	// GPUUtilization is the percent of time a kernel of the process ran,
	// averaged over its whole lifetime, not over a recent window. N/A
	// (NotReported) where the GPU keeps no utilization.
	GPUUtilization Value[Percent]
	// MemoryUtilization is the percent of time the process read or wrote
	// device memory, averaged over its lifetime, N/A like GPUUtilization.
	MemoryUtilization Value[Percent]
	// MaxMemory is the most GPU memory the process used. N/A (NotReported)
	// when the driver has no value.
	MaxMemory Value[Bytes]
	// RunningTime is how long the process ran. N/A (NotReported) while it
	// runs: NVML reports it, as 0 until then, only once the process exits.
	RunningTime Value[time.Duration]
	// StartTime is when the driver began accounting the process.
	StartTime time.Time
	// Running reports whether the process was running when the record was read.
	Running bool
}

// accountingOf converts NVML's record.
func accountingOf(pid int, s nvmlx.AccountingStats) ProcessAccounting {
	a := ProcessAccounting{
		PID:               pid,
		GPUUtilization:    accountedPercent(s.GPUUtilization),
		MemoryUtilization: accountedPercent(s.MemoryUtilization),
		MaxMemory:         processMemory(s.MaxMemoryUsage),
		RunningTime:       Some(time.Duration(s.Time) * time.Millisecond),
		StartTime:         time.UnixMicro(int64(s.StartTime)),
		Running:           s.IsRunning,
	}
	if s.IsRunning {
		a.RunningTime = NA[time.Duration](NotReported, errStillRunning)
	}
	return a
}

// accountedPercent is an accounting record's utilization: N/A where NVML
// says NVML_VALUE_NOT_AVAILABLE (a GPU without utilization counters).
func accountedPercent(v uint32) Value[Percent] {
	if v == ^uint32(0) {
		return NA[Percent](NotReported, ErrNotReported)
	}
	return Some(Percent(v))
}

var errStillRunning = fmt.Errorf("process still running: NVML reports its running time once it exits: %w", ErrNotReported)

// accountingHandle is the handle for accounting calls. NVML keeps accounting
// per physical GPU, so a MIG device answers errNotOnMIG without a call.
func (d *Device) accountingHandle() (nvmlx.Device, error) {
	if d.mig != nil {
		return nil, fmt.Errorf("%s: accounting: %w", d.label(), errNotOnMIG)
	}
	return d.handle()
}

// accountingErr adds the device to err and, when NVML's "not supported"
// means that accounting mode is off, says so (with one more call, made only
// on failure).
func (d *Device) accountingErr(h nvmlx.Device, err error) error {
	if accountingOff(err, h.AccountingMode) {
		return fmt.Errorf("%s: %w: %w", d.label(), ErrAccountingOff, err)
	}
	return fmt.Errorf("%s: %w", d.label(), err)
}

// accountingOff reports whether an accounting read's err is NVML's "not
// supported" because the accounting mode is off, asking mode (one more
// call, made only on that failure).
func accountingOff(err error, mode func() (bool, error)) bool {
	if !errors.Is(err, ErrNotSupported) || errors.Is(err, ErrFunctionMissing) {
		return false
	}
	on, e := mode()
	return e == nil && !on
}

// noRecord is the N/A of a PID without an accounting record; cause, when
// not nil, is the driver's answer.
func noRecord(label string, pid int, cause error) Value[ProcessAccounting] {
	if cause == nil {
		cause = ErrNotFound
	}
	return NA[ProcessAccounting](NotReported, fmt.Errorf("%s: pid %d: no accounting record: %w", label, pid, cause))
}

// validPID reports whether pid can be asked about at all (NVML takes an
// unsigned 32-bit PID).
func validPID(pid int) bool { return pid > 0 && uint64(pid) <= math.MaxUint32 }

// sortedPIDs returns the driver's PID list sorted, each once: on a PID
// collision the driver may list a PID more than once.
func sortedPIDs(pids []uint32) []int {
	out := make([]int, len(pids))
	for i, pid := range pids {
		out[i] = int(pid)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// AccountingMode reports whether per-process accounting is on. It is read
// from the driver on every call, bypassing the Library's cache. N/A with
// reason NotSupported on a MIG device (accounting is per physical GPU) and
// on GPUs without accounting.
func (d *Device) AccountingMode() Value[OnOff] {
	h, err := d.accountingHandle()
	if err != nil {
		return NA[OnOff](ReasonOf(err), err)
	}
	on, err := h.AccountingMode()
	if err != nil {
		err = fmt.Errorf("%s: %w", d.label(), err)
	}
	return FromErr(OnOff(on), err)
}

// SetAccountingMode turns per-process accounting on or off. It needs root:
// otherwise the error matches ErrNoPermission. Turning accounting off
// deletes every record. The mode does not survive a driver reload unless
// persistence mode is on. A MIG device answers an error matching
// ErrNotSupported; set the mode on its parent GPU.
func (d *Device) SetAccountingMode(on bool) error {
	h, err := d.accountingHandle()
	if err != nil {
		return err
	}
	if err := h.SetAccountingMode(on); err != nil {
		return fmt.Errorf("%s: turn accounting %s: %w", d.label(), OnOff(on), err)
	}
	return nil
}

// AccountedPIDs returns, sorted and each once, the PIDs that have an
// accounting record on the GPU, running or exited. With accounting off the
// error wraps ErrAccountingOff and matches ErrNotSupported.
func (d *Device) AccountedPIDs() ([]int, error) {
	h, err := d.accountingHandle()
	if err != nil {
		return nil, err
	}
	pids, err := h.AccountingPIDs()
	if err != nil {
		return nil, d.accountingErr(h, err)
	}
	return sortedPIDs(pids), nil
}

// AccountingBufferSize returns how many accounting records the GPU's
// circular buffer holds; once it is full, each new process overwrites the
// oldest record. N/A with reason NotSupported on a MIG device.
func (d *Device) AccountingBufferSize() Value[int] {
	h, err := d.accountingHandle()
	if err != nil {
		return NA[int](ReasonOf(err), err)
	}
	n, err := h.AccountingBufferSize()
	if err != nil {
		err = fmt.Errorf("%s: %w", d.label(), err)
	}
	return FromErr(n, err)
}

// ProcessAccounting returns the accounting record of pid on the GPU; when
// the PID was used by several processes, the driver keeps only the latest.
// It is N/A with reason
//   - NotSupported when accounting mode is off (the error wraps
//     ErrAccountingOff), on a MIG device, or on a GPU without accounting;
//   - NotReported when the GPU has no record of pid (the error matches
//     ErrNotFound): the process did not use the GPU while accounting was
//     on, or its record was overwritten;
//   - NoPermission or GPULost when NVML says so.
func (d *Device) ProcessAccounting(pid int) Value[ProcessAccounting] {
	h, err := d.accountingHandle()
	if err != nil {
		return NA[ProcessAccounting](ReasonOf(err), err)
	}
	if !validPID(pid) {
		return noRecord(d.label(), pid, nil)
	}
	s, err := h.AccountingStats(uint32(pid))
	switch {
	case err == nil:
		return Some(accountingOf(pid, s))
	case errors.Is(err, ErrNotFound):
		return noRecord(d.label(), pid, err)
	}
	err = d.accountingErr(h, err)
	return NA[ProcessAccounting](ReasonOf(err), err)
}

// Accounting returns the accounting record of the process on its device
// (see Device.ProcessAccounting). The driver keeps one record per PID, the
// latest; when that record started more than two seconds before the host
// process did (both times known), it belongs to an earlier process that had
// the same PID, and Accounting is N/A with reason ProcessGone. The two
// seconds cover the host's start time, which is only exact to the second.
func (p *GpuProcess) Accounting() Value[ProcessAccounting] {
	v := p.device.ProcessAccounting(p.pid)
	a, ok := v.Get()
	if !ok {
		return v
	}
	// The identity's start time, known even after the process exited.
	if created, ok := p.host.createTime.Get(); ok && a.StartTime.Before(created.Add(-accountingStartSlack)) {
		err := fmt.Errorf("%s: accounting record started at %s, before the process at %s: it is an earlier process's with the same PID: %w",
			p, a.StartTime.UTC().Format(time.RFC3339), created.UTC().Format(time.RFC3339), ErrProcessGone)
		return NA[ProcessAccounting](ProcessGone, err)
	}
	return v
}
