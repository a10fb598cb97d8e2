package nvgo

import "context"

type snapshotOptions struct {
	fields  Fields
	devices []*Device
}

// SnapshotOption configures Library.Snapshot.
type SnapshotOption func(*snapshotOptions)

// WithFields limits the snapshot to the groups f (default FieldsAll); the
// snapshot makes only the NVML calls those groups need.
func WithFields(f Fields) SnapshotOption { return func(o *snapshotOptions) { o.fields = f } }

// WithDevices limits the snapshot to the given devices (default: all).
func WithDevices(devs ...*Device) SnapshotOption {
	return func(o *snapshotOptions) { o.devices = append(o.devices, devs...) }
}

// Snapshot reads every GPU (or those of WithDevices) and, with
// FieldProcesses, their processes, in one pass with the fewest NVML calls:
// Device objects are reused, static values are never re-read, process lists
// take one call per kind, and power, power limit, ECC and NVLink counters
// come from one batched field-value call. Every dynamic value asked for is
// read fresh (the per-metric cache is bypassed, then refreshed).
//
// Devices are read one after the other, as nvidia-smi and nvitop read them:
// a goroutine per device costs more CPU than its calls take on a fast
// driver. A GPU that cannot be read (lost, say) does
// not fail the snapshot: its DeviceSnapshot has Err set and N/A metrics. The
// error is non-nil only when NVML itself is unusable or ctx is done.
func (l *Library) Snapshot(ctx context.Context, opts ...SnapshotOption) (*Snapshot, error) {
	o := snapshotOptions{fields: FieldsAll}
	for _, opt := range opts {
		opt(&o)
	}
	devs := o.devices
	if devs == nil {
		var err error
		if devs, err = l.Devices(); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	snap := &Snapshot{Timestamp: l.clock.Now(), Fields: o.fields, Devices: make([]DeviceSnapshot, len(devs))}
	snap.DriverVersion, snap.CUDADriverVersion, snap.NVMLVersion = l.versions()

	hosts := newHostMemo(snap.Timestamp)
	hosts.reserve(l.hosts.len())
	for i, d := range devs {
		func() {
			if ctx.Err() != nil {
				snap.Devices[i] = DeviceSnapshot{Index: d.index, Timestamp: l.clock.Now()}
				snap.Devices[i].setErr(ctx.Err())
				return
			}
			d.readInto(&snap.Devices[i], o.fields, hosts)
			d.remember(o.fields, &snap.Devices[i])
		}()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return snap, nil
}

// versions returns the driver, CUDA and NVML versions, read once per Library
// (they cannot change while NVML is loaded).
func (l *Library) versions() (driver, cuda, nvmlv Value[string]) {
	l.verOnce.Do(func() {
		l.ver[0] = FromErr(l.DriverVersion())
		l.ver[1] = FromErr(l.CUDADriverVersion())
		l.ver[2] = FromErr(l.NVMLVersion())
	})
	return l.ver[0], l.ver[1], l.ver[2]
}

// read makes one pass over the groups f. It never fails as a whole: what
// cannot be read is N/A with its reason, and s.Err says why the device as a
// whole could not be read (e.g. ErrGPULost).
func (d *Device) read(f Fields, hosts *hostMemo) DeviceSnapshot {
	var s DeviceSnapshot
	d.readInto(&s, f, hosts)
	return s
}

// readInto is read into *dst (of a Snapshot, say), which it overwrites.
func (d *Device) readInto(dst *DeviceSnapshot, f Fields, hosts *hostMemo) {
	if hosts == nil {
		hosts = newHostMemo(d.lib.clock.Now())
	}
	*dst = DeviceSnapshot{Timestamp: hosts.stamp, Index: d.index, Fields: f}
	s := dst
	s.UUID = d.UUID()
	s.Name = d.Name()
	s.BusID = d.BusID()
	s.Serial = d.Serial()
	s.MinorNumber = d.MinorNumber()
	s.CUDAComputeCapability = d.CUDAComputeCapability()
	if d.mig != nil {
		d.mig.describe(s)
		// What NVML keeps only per GPU is N/A here, without asking.
		s.fillNA(f&^migFields, errNotOnMIG)
		f &= migFields
	} else {
		describeNotMIG(s)
	}

	h, err := d.handle()
	if err != nil {
		s.setErr(err)
		s.fillNA(f, err)
		return
	}
	r := newPassReader(d, h, hosts.stamp)
	defer r.release()
	r.readMetrics(s, f)
	if f&FieldMIGDevices != 0 && d.mig == nil {
		d.readMIG(r, s, hosts)
	}
	if f&FieldProcesses != 0 && s.MIGDevices == nil {
		if r.lost != nil {
			s.ProcessesErr = r.lost
		} else {
			s.Processes, s.ProcessesErr = d.readProcesses(r, s.MemoryTotal, hosts)
		}
		if s.ProcessesErr != nil {
			s.ProcessesError = s.ProcessesErr.Error()
		}
	}
	if f&FieldVgpuInstances != 0 && d.mig == nil {
		d.readVgpus(r, s)
	}
	if r.lost != nil {
		s.setErr(r.lost)
	}
}
