package nvgo

import "fmt"

// errFreeNeedsMIGMode is why Free is N/A on a whole GPU's snapshot taken
// without FieldMIGMode and FieldMIGDevices.
var errFreeNeedsMIGMode = fmt.Errorf("free needs the MIG mode and MIG devices (FieldMIGMode, FieldMIGDevices): %w", ErrNotReported)

// Free reports whether nobody uses the device and work can run on it:
// nvgo's one definition of a free GPU, which its tools share.
//
// A MIG device, or a GPU with MIG off, is free when its process list was
// read and is empty. A GPU with MIG on is free when it has at least one MIG
// device and every one of them is free: with none, no work can run on it
// (LeafDevices and so SelectDevices offer nothing there either).
//
// Free is N/A, with the reason, when it cannot be told: the device or its
// process lists could not be read, or the snapshot lacks FieldProcesses
// (and, for a whole GPU, FieldMIGMode and FieldMIGDevices).
func (s *DeviceSnapshot) Free() Value[bool] {
	switch {
	case s.Err != nil:
		return NA[bool](ReasonOf(s.Err), s.Err)
	case s.Fields&FieldProcesses == 0:
		return NA[bool](NotReported, errNotRead)
	}
	if _, mig := s.MIGIndex.Get(); !mig {
		if s.Fields&(FieldMIGMode|FieldMIGDevices) != FieldMIGMode|FieldMIGDevices {
			return NA[bool](NotReported, errFreeNeedsMIGMode)
		}
		if on, _ := s.MIGMode.Get(); on {
			return migFree(s)
		}
	}
	if s.ProcessesErr != nil {
		return NA[bool](ReasonOf(s.ProcessesErr), s.ProcessesErr)
	}
	return Some(len(s.Processes) == 0)
}

// migFree is Free of a GPU with MIG on: free when it has MIG devices and
// all are free. A MIG device in use decides it even when another cannot be
// read.
func migFree(s *DeviceSnapshot) Value[bool] {
	if s.MIGDevicesErr != nil {
		return NA[bool](ReasonOf(s.MIGDevicesErr), s.MIGDevicesErr)
	}
	if len(s.MIGDevices) == 0 {
		return Some(false)
	}
	free := Some(true)
	for i := range s.MIGDevices {
		f := s.MIGDevices[i].Free()
		v, ok := f.Get()
		switch {
		case ok && !v:
			return f
		case !ok && !free.IsNA():
			free = f
		}
	}
	return free
}
