package nvgo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/nvgo/nvgo/internal/cudaprobe"
)

// CudaDevice is a device as CUDA numbers it: CUDA ordinal i ("cuda:i") and
// the physical GPU or MIG device behind it. It embeds that device's
// *Device, so every metric is at hand; MIG() is non-nil for a MIG device.
// A CudaDevice is safe for concurrent use. It is valid for the CUDAEnv it
// was resolved for: the same device has another ordinal under another
// CUDA_VISIBLE_DEVICES.
type CudaDevice struct {
	*Device
	cudaIndex int
}

// CUDAIndex returns the CUDA ordinal: i in "cuda:i", torch.device(i),
// cudaSetDevice(i).
func (c *CudaDevice) CUDAIndex() int { return c.cudaIndex }

// Physical returns the physical GPU: the device itself, or a MIG device's parent.
func (c *CudaDevice) Physical() *Device {
	if c.mig != nil {
		return c.mig.parent
	}
	return c.Device
}

// String returns "cuda:0 (GPU 3 (NVIDIA H100 80GB HBM3))".
func (c *CudaDevice) String() string {
	return fmt.Sprintf("cuda:%d (%s)", c.cudaIndex, c.Device)
}

// freshMIGMode reads d's MIG mode now (not from the cache), and returns
// lost, why d fell off the bus, when its identity or that read says so.
func (d *Device) freshMIGMode() (mode Value[OnOff], lost error) {
	mode = d.read(FieldMIGMode, nil).MIGMode
	for _, err := range []error{d.UUID().Err(), mode.Err()} {
		if errors.Is(err, ErrGPULost) {
			return mode, err
		}
	}
	return mode, nil
}

// cudaView is the machine as the resolver sees it, with the live objects
// behind each position.
type cudaView struct {
	gpus []cvdGPU
	devs []*Device
	migs [][]*MigDevice
}

func (l *Library) cudaView() (*cudaView, error) {
	devs, err := l.Devices()
	if err != nil {
		return nil, err
	}
	v := &cudaView{gpus: make([]cvdGPU, len(devs)), devs: devs, migs: make([][]*MigDevice, len(devs))}
	for i, d := range devs {
		g := &v.gpus[i]
		g.uuid, g.name = d.UUID().Or(""), d.Name().Or("")
		mode, lost := d.freshMIGMode()
		if g.lost = lost; lost != nil {
			continue // nothing more can be read of it
		}
		if b, ok := d.BusID().Get(); ok {
			g.busID, _ = NormalizeBusID(b)
		}
		if on, ok := mode.Get(); ok && bool(on) {
			g.migOn = true
			migs, err := d.MIGDevices()
			if err != nil {
				return nil, err
			}
			v.migs[i] = migs
			for _, m := range migs {
				g.migs = append(g.migs, cvdMIG{uuid: m.UUID().Or(""), gi: m.GPUInstanceID().Or(-1), ci: m.ComputeInstanceID().Or(-1)})
			}
		}
	}
	return v, nil
}

func (v *cudaView) devices(refs []cvdRef) []*CudaDevice {
	out := make([]*CudaDevice, len(refs))
	for i, r := range refs {
		d := v.devs[r.gpu]
		if r.mig >= 0 {
			d = v.migs[r.gpu][r.mig].Device
		}
		out[i] = &CudaDevice{Device: d, cudaIndex: i}
	}
	return out
}

// driverBranch returns the driver's major version (570 for 570.86.15), 0 if unknown.
func (l *Library) driverBranch() int {
	drv, _, _ := l.versions()
	major, _, _ := strings.Cut(drv.Or(""), ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0
	}
	return n
}

// CUDADevices returns the devices CUDA would use under env, in CUDA ordinal
// order, by the CUDA driver's rules, using NVML only: CUDA is not
// initialised, here or anywhere. It costs microseconds.
//
// The rules: unset means every device and set-but-empty none; entries are
// read left to right and the list ends at the first entry CUDA rejects
// (an index out of range, a negative one, an unknown or ambiguous UUID
// prefix); indices are read as C's strtoul reads them (leading blanks, one
// sign, trailing junk ignored) and count in CUDA's order; "GPU-" and "MIG-"
// entries are case-sensitive unique prefixes of UUIDs, and
// "MIG-GPU-<uuid>/<gi>/<ci>" names a MIG device as drivers before R470 did;
// a device named twice makes none visible. Drivers before R570 show at most
// one MIG device and then no whole GPU; from R570, one compute instance per
// GPU instance beside the whole GPUs.
//
// Where those rules do not decide the answer it returns ErrUndetermined, or
// ErrOrderUndetermined when only the order is unknown (GPUs of different
// models under the default FASTEST_FIRST order), instead of guessing.
// CUDADevicesFromDriver asks the driver itself in those cases.
func (l *Library) CUDADevices(env CUDAEnv) ([]*CudaDevice, error) {
	v, err := l.cudaView()
	if err != nil {
		return nil, err
	}
	refs, err := resolveCVD(env, v.gpus, l.driverBranch())
	if err != nil {
		return nil, fmt.Errorf("nvgo: %s: %w", env, err)
	}
	return v.devices(refs), nil
}

// VisibleCUDADevices returns the devices CUDA would use in this process
// (CUDADevices under CurrentCUDAEnv).
func (l *Library) VisibleCUDADevices() ([]*CudaDevice, error) {
	return l.CUDADevices(CurrentCUDAEnv())
}

// CUDADevicesFromDriver asks the CUDA driver itself which devices it would
// use under env: a short-lived child process (this program, re-executed)
// loads libcuda.so.1, calls cuInit, cuDeviceGetCount and cuDeviceGetUuid_v2,
// and exits, so this process never initialises CUDA. It answers every case,
// FASTEST_FIRST and MIG included, at the cost of starting a process and
// initialising CUDA (tens to hundreds of milliseconds); results are
// remembered per (env, set of devices), so each distinct question is asked
// once per Library. Without libcuda it fails with an error that matches
// ErrNoCUDADriver.
func (l *Library) CUDADevicesFromDriver(ctx context.Context, env CUDAEnv) ([]*CudaDevice, error) {
	v, err := l.cudaView()
	if err != nil {
		return nil, err
	}
	uuids, err := l.probeCUDA(ctx, env, v)
	if err != nil {
		return nil, err
	}
	refs := make([]cvdRef, len(uuids))
	for i, u := range uuids {
		r, ok := v.byRawUUID(u)
		if !ok {
			return nil, fmt.Errorf("nvgo: CUDA device %d (UUID %s) is not one NVML lists: %w", i, u, ErrNotFound)
		}
		refs[i] = r
	}
	return v.devices(refs), nil
}

// ErrNoCUDADriver means libcuda.so.1 could not be loaded, so the CUDA driver
// cannot be asked.
var ErrNoCUDADriver = cudaprobe.ErrNoLibCUDA

// byRawUUID finds the device whose UUID, without its GPU- or MIG- tag, is u.
func (v *cudaView) byRawUUID(u string) (cvdRef, bool) {
	for g := range v.gpus {
		if strings.TrimPrefix(v.gpus[g].uuid, "GPU-") == u {
			return cvdRef{g, -1}, true
		}
		for m := range v.gpus[g].migs {
			if strings.TrimPrefix(v.gpus[g].migs[m].uuid, "MIG-") == u {
				return cvdRef{g, m}, true
			}
		}
	}
	return cvdRef{}, false
}

// probeKey identifies one question to the driver: the env and the machine
// it was asked on (a MIG reconfiguration changes the answer).
type probeKey struct {
	env     CUDAEnv
	devices string
}

type probeEntry struct {
	done  chan struct{}
	uuids []string
	err   error
}

type probeMemo struct {
	mu sync.Mutex
	m  map[probeKey]*probeEntry
}

func (l *Library) probeCUDA(ctx context.Context, env CUDAEnv, v *cudaView) ([]string, error) {
	var sb strings.Builder
	for _, g := range v.gpus {
		sb.WriteString(g.uuid)
		for _, m := range g.migs {
			sb.WriteString("," + m.uuid)
		}
		sb.WriteString(";")
	}
	key := probeKey{env, sb.String()}
	l.probes.mu.Lock()
	if l.probes.m == nil {
		l.probes.m = map[probeKey]*probeEntry{}
	}
	e, ok := l.probes.m[key]
	if !ok {
		e = &probeEntry{done: make(chan struct{})}
		l.probes.m[key] = e
	}
	l.probes.mu.Unlock()
	if !ok {
		res, err := cudaprobe.Probe(ctx, cudaprobe.Env{Visible: env.Visible, VisibleSet: env.VisibleSet, Order: env.Order})
		e.uuids, e.err = res.UUIDs, err
		if err != nil {
			e.err = fmt.Errorf("nvgo: asking the CUDA driver (%s): %w", env, err)
			if ctx.Err() != nil {
				// Not an answer: let a later call ask again.
				l.probes.mu.Lock()
				delete(l.probes.m, key)
				l.probes.mu.Unlock()
			}
		}
		close(e.done)
	}
	select {
	case <-e.done:
		return e.uuids, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// NormalizeCUDAVisibleDevices rewrites env's device list as full UUIDs
// ("GPU-…", "MIG-…"), comma-separated in CUDA order: a value that means the
// same devices after a reboot renumbers them, or in a child process with a
// different CUDA_DEVICE_ORDER. A value that shows no device gives "". It
// fails like CUDADevices where the rules cannot decide.
func (l *Library) NormalizeCUDAVisibleDevices(env CUDAEnv) (string, error) {
	devs, err := l.CUDADevices(env)
	if err != nil {
		return "", err
	}
	uuids := make([]string, len(devs))
	for i, d := range devs {
		uuids[i] = d.UUID().Or("")
	}
	return strings.Join(uuids, ","), nil
}

// CUDAIndex returns the CUDA ordinal that d (a GPU or a MIG device's
// Device) has under env: the reverse of CUDADevices. A device CUDA would not
// see gives ErrNotFound.
func (l *Library) CUDAIndex(d *Device, env CUDAEnv) (int, error) {
	devs, err := l.CUDADevices(env)
	if err != nil {
		return -1, err
	}
	want := d.UUID().Or("")
	for _, c := range devs {
		if c.Device == d || want != "" && c.UUID().Or("") == want {
			return c.cudaIndex, nil
		}
	}
	return -1, fmt.Errorf("nvgo: %s is not visible to CUDA under %s: %w", d.label(), env, ErrNotFound)
}

// VisibleCUDADevices returns the devices CUDA would use in this process,
// from the default Library.
func VisibleCUDADevices() ([]*CudaDevice, error) {
	l, err := Default()
	if err != nil {
		return nil, err
	}
	return l.VisibleCUDADevices()
}
