package nvgo

import (
	"fmt"
	"time"
)

// Snapshot reads the instance now: identity, memory, license, accounting
// mode, newest utilization and busy guest processes.
func (v *VgpuInstance) Snapshot() VgpuInstanceSnapshot {
	h, err := v.device.handle()
	if err != nil {
		s := v.newSnapshot()
		s.fillNA(err)
		return s
	}
	st := &v.device.vgpus
	st.mu.Lock()
	now := v.device.lib.clock.Now()
	utilErr := st.pollUtilization(h, now)
	procErr := st.pollProcesses(h, now)
	st.mu.Unlock()
	return v.read(utilErr, procErr)
}

func (v *VgpuInstance) newSnapshot() VgpuInstanceSnapshot {
	return VgpuInstanceSnapshot{
		Timestamp:   v.device.lib.clock.Now(),
		ID:          v.id,
		DeviceIndex: v.device.index,
		DeviceUUID:  v.device.UUID().Or(""),
	}
}

// vgpuStep makes one read of an instance unless an earlier one found the
// instance destroyed or the GPU lost: then it is N/A for the same reason,
// without a call.
func vgpuStep[T any](stop *error, read func() Value[T]) Value[T] {
	if *stop != nil {
		return NA[T](ReasonOf(*stop), *stop)
	}
	x := read()
	if r := x.Reason(); r == InstanceGone || r == GPULost {
		*stop = x.Err()
	}
	return x
}

// read snapshots the instance after the device's samples were polled
// (utilErr and procErr are the polls' errors).
func (v *VgpuInstance) read(utilErr, procErr error) VgpuInstanceSnapshot {
	s := v.newSnapshot()
	var stop error

	s.UUID = vgpuStep(&stop, v.UUID)
	t := vgpuStep(&stop, v.Type)
	s.TypeID = FlatMap(t, func(t VgpuType) Value[uint32] { return t.ID })
	s.TypeName = FlatMap(t, func(t VgpuType) Value[string] { return t.Name })
	s.TypeClass = FlatMap(t, func(t VgpuType) Value[string] { return t.Class })
	s.FramebufferTotal = FlatMap(t, func(t VgpuType) Value[Bytes] { return t.Framebuffer })
	vm := vgpuStep(&stop, v.VM)
	s.VMID = Map(vm, func(vm VM) string { return vm.ID })
	s.VMIDKind = Map(vm, func(vm VM) VMIDKind { return vm.Kind })
	s.PlacementID = vgpuStep(&stop, v.PlacementID)
	s.GPUInstanceID = vgpuStep(&stop, v.GPUInstanceID)
	s.VMDriverVersion = vgpuStep(&stop, v.VMDriverVersion)
	s.FramebufferUsed = vgpuStep(&stop, v.FramebufferUsed)
	if used, ok := s.FramebufferUsed.Get(); ok {
		if total, ok := s.FramebufferTotal.Get(); ok && total > 0 {
			s.FramebufferPercent = Some(percentOf(uint64(used), uint64(total)))
		} else {
			s.FramebufferPercent = NA[Percent](s.FramebufferTotal.Reason(), s.FramebufferTotal.Err())
		}
	} else {
		s.FramebufferPercent = NA[Percent](s.FramebufferUsed.Reason(), s.FramebufferUsed.Err())
	}
	s.FrameRateLimit = vgpuStep(&stop, v.FrameRateLimit)
	s.EncoderCapacity = vgpuStep(&stop, v.EncoderCapacity)
	s.ECCMode = vgpuStep(&stop, v.ECCMode)
	lic := vgpuStep(&stop, v.License)
	s.Licensed = Map(lic, func(l VgpuLicense) bool { return l.Licensed })
	s.LicenseState = Map(lic, func(l VgpuLicense) LicenseState { return l.State })
	s.LicensePermanent = Map(lic, func(l VgpuLicense) bool { return l.Permanent })
	s.LicenseExpiry = FlatMap(lic, func(l VgpuLicense) Value[time.Time] { return l.Expiry })
	s.AccountingMode = vgpuStep(&stop, v.AccountingMode)

	st := &v.device.vgpus
	st.mu.Lock()
	var u Value[VgpuUtilization]
	if utilErr == nil {
		u = st.utilizationOf(v, v.device.lib.clock.Now())
	} else {
		err := fmt.Errorf("%s: %w", v.device.label(), utilErr)
		u = NA[VgpuUtilization](ReasonOf(err), err)
	}
	if procErr == nil {
		s.Processes = st.processesOf(v.id)
	}
	st.mu.Unlock()
	if stop != nil {
		// A destroyed instance has no current utilization, whatever the
		// driver sampled before.
		u = NA[VgpuUtilization](ReasonOf(stop), stop)
		s.Processes = nil
		s.Err, s.Error = stop, stop.Error()
	}
	if procErr != nil {
		s.ProcessesErr = fmt.Errorf("%s: %w", v.device.label(), procErr)
		s.ProcessesError = s.ProcessesErr.Error()
	}
	s.SMUtilization = Map(u, func(u VgpuUtilization) Percent { return u.SMUtilization })
	s.FramebufferUtilization = Map(u, func(u VgpuUtilization) Percent { return u.FramebufferUtilization })
	s.EncoderUtilization = Map(u, func(u VgpuUtilization) Percent { return u.EncoderUtilization })
	s.DecoderUtilization = Map(u, func(u VgpuUtilization) Percent { return u.DecoderUtilization })
	s.UtilizationTime = Map(u, func(u VgpuUtilization) time.Time { return u.Time })
	return s
}

// fillNA marks every metric N/A because of err.
func (s *VgpuInstanceSnapshot) fillNA(err error) {
	r := ReasonOf(err)
	str, pct, b := NA[string](r, err), NA[Percent](r, err), NA[Bytes](r, err)
	s.UUID, s.TypeName, s.TypeClass, s.VMID, s.VMDriverVersion = str, str, str, str, str
	s.TypeID, s.VMIDKind = NA[uint32](r, err), NA[VMIDKind](r, err)
	s.PlacementID, s.GPUInstanceID, s.FrameRateLimit = NA[int](r, err), NA[int](r, err), NA[int](r, err)
	s.FramebufferTotal, s.FramebufferUsed, s.FramebufferPercent = b, b, pct
	s.EncoderCapacity, s.ECCMode, s.AccountingMode = pct, NA[OnOff](r, err), NA[OnOff](r, err)
	s.Licensed, s.LicensePermanent = NA[bool](r, err), NA[bool](r, err)
	s.LicenseState, s.LicenseExpiry = NA[LicenseState](r, err), NA[time.Time](r, err)
	s.SMUtilization, s.FramebufferUtilization, s.EncoderUtilization, s.DecoderUtilization = pct, pct, pct, pct
	s.UtilizationTime = NA[time.Time](r, err)
	s.Err, s.Error = err, err.Error()
}

// readVgpus fills the snapshot's virtualization mode and vGPU instances:
// one listing and one poll of each sample buffer for the whole device.
func (d *Device) readVgpus(r *passReader, s *DeviceSnapshot) {
	if r.lost != nil {
		s.VirtualizationMode = NA[VirtualizationMode](GPULost, r.lost)
		s.VgpuInstancesErr, s.VgpuInstancesError = r.lost, r.lost.Error()
		return
	}
	s.VirtualizationMode = d.VirtualizationMode()
	vs, err := d.listVgpus(r)
	if err != nil {
		s.VgpuInstancesErr, s.VgpuInstancesError = err, err.Error()
		return
	}
	if vs == nil {
		return // not a vGPU host
	}
	s.VgpuInstances = make([]VgpuInstanceSnapshot, 0, len(vs))
	if len(vs) == 0 {
		return
	}
	st := &d.vgpus
	st.mu.Lock()
	now := d.lib.clock.Now()
	utilErr := r.check(st.pollUtilization(r.h, now))
	var procErr error
	if r.lost == nil {
		procErr = r.check(st.pollProcesses(r.h, now))
	} else {
		procErr = r.lost
	}
	st.mu.Unlock()
	for _, v := range vs {
		if r.lost != nil {
			vs := v.newSnapshot()
			vs.fillNA(r.lost)
			s.VgpuInstances = append(s.VgpuInstances, vs)
			continue
		}
		vs := v.read(utilErr, procErr)
		if vs.Err != nil {
			r.check(vs.Err)
		}
		s.VgpuInstances = append(s.VgpuInstances, vs)
	}
}
