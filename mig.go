package nvgo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nvgo/nvgo/internal/nverr"
	"github.com/nvgo/nvgo/internal/nvmlx"
)

// MigDevice is a MIG (Multi-Instance GPU) device: one GPU instance and
// compute instance of a physical GPU with MIG mode on. It embeds the
// *Device that reads it, so memory, BAR1 and processes come from the MIG
// device itself; metrics NVML keeps only per GPU are N/A with reason
// NotSupported (Parent has them). Its processes' SM and memory utilization
// are N/A as well: NVML keeps no per-process samples on MIG.
//
// MIG devices come from Device.MIGDevices and Library.MIGDevices, which
// re-enumerate each time: a reconfigured GPU invalidates old handles, and a
// MigDevice whose instance was destroyed reports its metrics N/A. A MigDevice
// is safe for concurrent use.
type MigDevice struct {
	*Device
	parent *Device
	slot   int

	gi, ci lazyValue[int]
	attrs  lazyValue[nvmlx.MIGAttributes]
}

// Parent returns the physical GPU the MIG device belongs to.
func (m *MigDevice) Parent() *Device { return m.parent }

// MIGIndex returns the MIG device's index on its parent (the index
// nvidia-smi prints as "MIG Dev"). Indices can have gaps.
func (m *MigDevice) MIGIndex() int { return m.slot }

// GPUInstanceID returns the ID of the GPU instance ("GI ID" in nvidia-smi).
func (m *MigDevice) GPUInstanceID() Value[int] {
	return readStatic(m.Device, &m.gi, nvmlx.Device.GPUInstanceID)
}

// ComputeInstanceID returns the ID of the compute instance ("CI ID").
func (m *MigDevice) ComputeInstanceID() Value[int] {
	return readStatic(m.Device, &m.ci, nvmlx.Device.ComputeInstanceID)
}

func (m *MigDevice) attributes() Value[nvmlx.MIGAttributes] {
	return readStatic(m.Device, &m.attrs, nvmlx.Device.MIGAttributes)
}

// MultiprocessorCount returns the number of SMs of the MIG device.
func (m *MigDevice) MultiprocessorCount() Value[int] {
	return Map(m.attributes(), func(a nvmlx.MIGAttributes) int { return int(a.MultiprocessorCount) })
}

// Profile returns the MIG profile, e.g. "1g.10gb", or "1c.3g.40gb" for a
// compute instance that uses part of its GPU instance. It is read from the
// name the driver gives the MIG device ("NVIDIA H100 80GB HBM3 MIG 1g.10gb")
// and otherwise derived from its slice counts and memory size.
func (m *MigDevice) Profile() Value[string] {
	if name, ok := m.Name().Get(); ok {
		if i := strings.LastIndex(name, "MIG "); i >= 0 && validProfile(name[i+4:]) {
			return Some(name[i+4:])
		}
	}
	a, ok := m.attributes().Get()
	if !ok {
		return NA[string](m.attributes().Reason(), m.attributes().Err())
	}
	total, _ := m.parent.MemoryTotal().Get()
	return Some(profileName(a, uint64(total)))
}

// String returns "MIG 0/1 (1g.10gb)": parent index, MIG index and profile.
func (m *MigDevice) String() string {
	return fmt.Sprintf("MIG %d/%d (%s)", m.parent.index, m.slot, m.Profile())
}

// validProfile reports whether p looks like "[Nc.]Ng.Mgb".
func validProfile(p string) bool {
	parts := strings.Split(p, ".")
	if len(parts) == 3 {
		if !countWith(parts[0], "c") {
			return false
		}
		parts = parts[1:]
	}
	return len(parts) == 2 && countWith(parts[0], "g") && countWith(parts[1], "gb")
}

func countWith(s, unit string) bool {
	n, ok := strings.CutSuffix(s, unit)
	if !ok || n == "" {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return err == nil
}

// profileName derives a profile name from a MIG device's attributes, as
// NVIDIA names profiles: the memory figure is the instance's share of the
// GPU's memory, rounded up to eighths, times the GPU's memory in whole GB
// (so an A100 80GB half is "40gb" although it has 38.5 GiB).
func profileName(a nvmlx.MIGAttributes, gpuTotal uint64) string {
	gb := uint64(math.Ceil(float64(a.MemorySizeMiB) / 1024))
	if gpuTotal > 0 {
		totalGB := math.Ceil(float64(gpuTotal) / (1 << 30))
		share := float64(a.MemorySizeMiB<<20) / float64(gpuTotal)
		gb = uint64(math.Round(math.Ceil(share*8) / 8 * totalGB))
	}
	name := fmt.Sprintf("%dg.%dgb", a.GPUInstanceSliceCount, gb)
	if a.ComputeInstanceSliceCount != 0 && a.ComputeInstanceSliceCount < a.GPUInstanceSliceCount {
		name = fmt.Sprintf("%dc.%s", a.ComputeInstanceSliceCount, name)
	}
	return name
}

// MIG returns the MigDevice this Device reads, or nil for a physical GPU.
func (d *Device) MIG() *MigDevice { return d.mig }

// IsMIGDevice reports whether d is a MIG device rather than a physical GPU.
func (d *Device) IsMIGDevice() bool { return d.mig != nil }

// MIGDevices returns the MIG devices of a GPU with MIG mode on, in MIG index
// order. It tries every index up to the GPU's maximum, skipping empty ones
// (after an instance is destroyed the indices have gaps). A GPU with MIG off
// or without MIG, and a MIG device, have none: empty, nil error. The same
// *MigDevice is returned for an index while its UUID stays the same.
func (d *Device) MIGDevices() ([]*MigDevice, error) {
	if d.mig != nil {
		return nil, nil
	}
	h, err := d.handle()
	if err != nil {
		return nil, err
	}
	return d.enumerateMIG(h)
}

func (d *Device) enumerateMIG(h nvmlx.Device) ([]*MigDevice, error) {
	cur, _, err := h.MIGMode()
	switch {
	case errors.Is(err, ErrNotSupported):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: MIG mode: %w", d.label(), err)
	case cur != 1:
		return nil, nil
	}
	return d.enumerateSlots(h)
}

// enumerateSlots lists the MIG devices of a GPU known to have MIG on.
func (d *Device) enumerateSlots(h nvmlx.Device) ([]*MigDevice, error) {
	n, err := h.MaxMIGDeviceCount()
	if err != nil {
		return nil, fmt.Errorf("%s: MIG device count: %w", d.label(), err)
	}
	d.migMu.Lock()
	defer d.migMu.Unlock()
	seen := make(map[int]*MigDevice, n)
	var out []*MigDevice
	for i := 0; i < n; i++ {
		mh, err := h.MIGDeviceByIndex(i)
		if errors.Is(err, ErrNotFound) || errors.Is(err, nverr.ErrInvalidArgument) {
			continue // an empty slot: keep looking, indices can have gaps
		}
		if err != nil {
			return nil, fmt.Errorf("%s: MIG device %d: %w", d.label(), i, err)
		}
		uuid, err := mh.UUID()
		if err != nil {
			return nil, fmt.Errorf("%s: MIG device %d: %w", d.label(), i, err)
		}
		m := d.migs[i]
		if m == nil || m.UUID().Or("") != uuid {
			m = d.newMIG(i, mh, uuid)
		}
		seen[i] = m
		out = append(out, m)
	}
	d.migs = seen
	return out, nil
}

func (d *Device) newMIG(slot int, h nvmlx.Device, uuid string) *MigDevice {
	m := &MigDevice{parent: d, slot: slot}
	m.Device = d.lib.newDeviceWith(d.index, func() (nvmlx.Device, error) { return h, nil })
	m.Device.mig = m
	m.Device.uuid.get(func() Value[string] { return Some(uuid) })
	return m
}

// LeafDevices returns the devices work actually runs on: the MIG devices of
// a GPU with MIG on (none if it has no instances), else the GPU itself.
func (d *Device) LeafDevices() ([]*Device, error) {
	if d.mig != nil {
		return []*Device{d}, nil
	}
	migs, err := d.MIGDevices()
	if err != nil {
		return nil, err
	}
	if migs == nil {
		if on, ok := d.MIGMode().Get(); !ok || !bool(on) {
			return []*Device{d}, nil
		}
	}
	out := make([]*Device, len(migs))
	for i, m := range migs {
		out[i] = m.Device
	}
	return out, nil
}

// describe fills the MIG identity of a MIG device's snapshot.
func (m *MigDevice) describe(s *DeviceSnapshot) {
	s.MIGIndex = Some(m.slot)
	s.GPUInstanceID = m.GPUInstanceID()
	s.ComputeInstanceID = m.ComputeInstanceID()
	s.MIGProfile = m.Profile()
	s.ParentUUID = m.parent.UUID()
}

// describeNotMIG fills the MIG identity of a physical GPU's snapshot: N/A.
func describeNotMIG(s *DeviceSnapshot) {
	na := NA[int](NotSupported, errNotMIG)
	s.MIGIndex, s.GPUInstanceID, s.ComputeInstanceID = na, na, na
	s.MIGProfile, s.ParentUUID = NA[string](NotSupported, errNotMIG), NA[string](NotSupported, errNotMIG)
}

// readMIG snapshots the MIG devices of a GPU with MIG on, with the same
// groups; their processes are listed under them, not under the GPU.
func (d *Device) readMIG(r *passReader, s *DeviceSnapshot, hosts *hostMemo) {
	if r.lost != nil {
		return
	}
	enumerate := d.enumerateMIG
	if s.Fields&FieldMIGMode != 0 {
		// The mode was read in this pass: do not ask NVML again.
		if on, ok := s.MIGMode.Get(); !ok || !bool(on) {
			return
		}
		enumerate = d.enumerateSlots
	}
	migs, err := enumerate(r.h)
	if r.check(err) != nil || migs == nil {
		if err != nil {
			s.MIGDevicesErr, s.MIGDevicesError = err, err.Error()
		}
		return
	}
	s.MIGDevices = make([]DeviceSnapshot, len(migs))
	for i, m := range migs {
		m.Device.readInto(&s.MIGDevices[i], s.Fields, hosts)
	}
}

// MIGDevices returns the MIG devices of every GPU, GPU by GPU. A GPU that
// cannot be read (one that fell off the bus, say) leaves the others' in the
// list: the error is then a DeviceErrors naming it.
func (l *Library) MIGDevices() ([]*MigDevice, error) {
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	var out []*MigDevice
	var failed DeviceErrors
	for _, d := range devs {
		migs, err := d.MIGDevices()
		if err != nil {
			failed = append(failed, DeviceError{Index: d.index, Err: err})
			continue
		}
		out = append(out, migs...)
	}
	return out, failed.orNil()
}

// LeafDevices returns, GPU by GPU, the devices work runs on: MIG devices
// where MIG is on, whole GPUs elsewhere. A GPU that cannot be read (one
// that fell off the bus, say) runs no work and is left out; the others are
// returned all the same, with a DeviceErrors that names it.
func (l *Library) LeafDevices() ([]*Device, error) {
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	var out []*Device
	var failed DeviceErrors
	for _, d := range devs {
		leaves, err := d.LeafDevices()
		if err != nil {
			failed = append(failed, DeviceError{Index: d.index, Err: err})
			continue
		}
		out = append(out, leaves...)
	}
	return out, failed.orNil()
}

// MIGDeviceByUUID returns the MIG device whose UUID is uuid or a unique
// prefix of it ("MIG-…", case-sensitive, as CUDA matches), or given in the
// form drivers before R470 used, "MIG-GPU-<GPU UUID or prefix>/<GI>/<CI>".
func (l *Library) MIGDeviceByUUID(uuid string) (*MigDevice, error) {
	if rest, ok := strings.CutPrefix(uuid, "MIG-GPU-"); ok {
		return l.migByInstance(rest)
	}
	migs, err := l.MIGDevices()
	var unread DeviceErrors
	if err != nil && !errors.As(err, &unread) {
		return nil, err
	}
	uuids := make([]string, len(migs))
	for i, m := range migs {
		uuids[i] = m.UUID().Or("")
	}
	i, err := matchUUIDPrefix(uuid, uuids)
	if err != nil {
		// A GPU that could not be read may hold it: say so.
		return nil, errors.Join(err, unread.orNil())
	}
	return migs[i], nil
}

// migByInstance resolves "<GPU UUID or prefix>/<GI>/<CI>" (after "MIG-GPU-").
func (l *Library) migByInstance(s string) (*MigDevice, error) {
	gpu, gi, ci, ok := parseLegacyMIG(s)
	if !ok {
		return nil, fmt.Errorf("nvgo: %q is not a MIG device name (want MIG-GPU-<uuid>/<gi>/<ci>): %w", "MIG-GPU-"+s, ErrNotFound)
	}
	d, err := l.DeviceByUUID("GPU-" + gpu)
	if err != nil {
		return nil, err
	}
	migs, err := d.MIGDevices()
	if err != nil {
		return nil, err
	}
	for _, m := range migs {
		if m.GPUInstanceID().Or(-1) == gi && m.ComputeInstanceID().Or(-1) == ci {
			return m, nil
		}
	}
	return nil, fmt.Errorf("nvgo: no MIG device with GPU instance %d and compute instance %d on %s: %w", gi, ci, d, ErrNotFound)
}
