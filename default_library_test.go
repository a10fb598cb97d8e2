//go:build cgo

package nvgo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nvgo/nvgo"
)

// describeDevices names each device by index, UUID and identity, so two
// lists compare equal only when they hold the same *Device in the same
// order.
func describeDevices(devs []*nvgo.Device) string {
	var b strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&b, "[%d %s %p]", d.Index(), d.UUID(), d)
	}
	return b.String()
}

func describeSnapshot(s *nvgo.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "driver %v cuda %v nvml %v fields %v:", s.DriverVersion, s.CUDADriverVersion, s.NVMLVersion, s.Fields)
	for _, d := range s.Devices {
		fmt.Fprintf(&b, "[%d %s used %v util %v err %v]", d.Index, d.UUID, d.MemoryUsed, d.GPUUtilization, d.Err)
	}
	return b.String()
}

func describeCUDA(devs []*nvgo.CudaDevice) string {
	var b strings.Builder
	for _, d := range devs {
		fmt.Fprintf(&b, "[cuda:%d %s %p]", d.CUDAIndex(), d.UUID(), d.Device)
	}
	return b.String()
}

// describeReservation reserves, describes what was reserved and releases
// it, so that the next reservation finds the same devices free.
func describeReservation(r *nvgo.Reservation, err error) (string, error) {
	if err != nil {
		return "", err
	}
	defer r.Release()
	return describeDevices(r.Devices()) + " CUDA_VISIBLE_DEVICES=" + r.CUDAVisibleDevices(), nil
}

// shortcut is one package-level function over Default() and the Library
// method it must agree with.
type shortcut struct {
	name string
	pkg  func(ctx context.Context) (string, error)
	lib  func(ctx context.Context, l *nvgo.Library) (string, error)
}

// shortcuts lists every package-level function that uses Default(), each
// called with arguments that would tell a wrong forwarding apart (a
// non-zero index, options that change the answer, a context that is
// passed on).
func shortcuts(t *testing.T) []shortcut {
	lockDir := t.TempDir()
	devices := func(devs []*nvgo.Device, err error) (string, error) { return describeDevices(devs), err }
	device := func(d *nvgo.Device, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return describeDevices([]*nvgo.Device{d}), nil
	}
	snapshot := func(s *nvgo.Snapshot, err error) (string, error) {
		if err != nil {
			return "", err
		}
		return describeSnapshot(s), nil
	}
	cuda := func(devs []*nvgo.CudaDevice, err error) (string, error) { return describeCUDA(devs), err }
	count := func(n int, err error) (string, error) { return fmt.Sprint(n), err }
	version := func(v string, err error) (string, error) { return v, err }
	selectOpts := func() []nvgo.SelectOption {
		return []nvgo.SelectOption{nvgo.WithMaxGPUUtilization(10), nvgo.WithMaxCount(2)}
	}
	reserveOpts := func() []nvgo.SelectOption {
		return []nvgo.SelectOption{nvgo.WithCount(2), nvgo.WithMinFreeMemory(60 * giB), nvgo.WithLockDir(lockDir)}
	}
	// Two devices out of order, and one field group: a shortcut that
	// dropped its options would snapshot all four with every metric.
	snapOpts := func(l *nvgo.Library) []nvgo.SnapshotOption {
		d3, err := l.DeviceByIndex(3)
		must(t, err)
		d1, err := l.DeviceByIndex(1)
		must(t, err)
		return []nvgo.SnapshotOption{nvgo.WithDevices(d3, d1), nvgo.WithFields(nvgo.FieldMemory)}
	}
	return []shortcut{
		{
			name: "Devices",
			pkg:  func(context.Context) (string, error) { return devices(nvgo.Devices()) },
			lib:  func(_ context.Context, l *nvgo.Library) (string, error) { return devices(l.Devices()) },
		},
		{
			name: "DeviceCount",
			pkg:  func(context.Context) (string, error) { return count(nvgo.DeviceCount()) },
			lib:  func(_ context.Context, l *nvgo.Library) (string, error) { return count(l.DeviceCount()) },
		},
		{
			name: "DeviceByIndex",
			pkg:  func(context.Context) (string, error) { return device(nvgo.DeviceByIndex(2)) },
			lib:  func(_ context.Context, l *nvgo.Library) (string, error) { return device(l.DeviceByIndex(2)) },
		},
		{
			name: "DriverVersion",
			pkg:  func(context.Context) (string, error) { return version(nvgo.DriverVersion()) },
			lib:  func(_ context.Context, l *nvgo.Library) (string, error) { return version(l.DriverVersion()) },
		},
		{
			name: "TakeSnapshot",
			pkg: func(ctx context.Context) (string, error) {
				var opts []nvgo.SnapshotOption
				if l, err := nvgo.Default(); err == nil {
					opts = snapOpts(l)
				}
				return snapshot(nvgo.TakeSnapshot(ctx, opts...))
			},
			lib: func(ctx context.Context, l *nvgo.Library) (string, error) {
				return snapshot(l.Snapshot(ctx, snapOpts(l)...))
			},
		},
		{
			name: "VisibleCUDADevices",
			pkg:  func(context.Context) (string, error) { return cuda(nvgo.VisibleCUDADevices()) },
			lib:  func(_ context.Context, l *nvgo.Library) (string, error) { return cuda(l.VisibleCUDADevices()) },
		},
		{
			name: "SelectDevices",
			pkg:  func(ctx context.Context) (string, error) { return devices(nvgo.SelectDevices(ctx, selectOpts()...)) },
			lib: func(ctx context.Context, l *nvgo.Library) (string, error) {
				return devices(l.SelectDevices(ctx, selectOpts()...))
			},
		},
		{
			name: "ReserveDevices",
			pkg: func(ctx context.Context) (string, error) {
				return describeReservation(nvgo.ReserveDevices(ctx, reserveOpts()...))
			},
			lib: func(ctx context.Context, l *nvgo.Library) (string, error) {
				return describeReservation(l.ReserveDevices(ctx, reserveOpts()...))
			},
		},
	}
}

// Each package-level shortcut answers as the same call on Default()'s
// Library does: same devices (the very same *Device), same figures, its
// arguments and options passed on.
func TestPackageShortcutsAnswerAsTheDefaultLibrary(t *testing.T) {
	lib, _ := selectFleet(t)
	t.Cleanup(nvgo.SetDefaultLibrary(lib, nil))
	t.Setenv("CUDA_VISIBLE_DEVICES", "3,1")
	if got, err := nvgo.Default(); got != lib || err != nil {
		t.Fatalf("Default() = %p, %v; want the Library set for the test (%p)", got, err, lib)
	}
	ctx := context.Background()
	for _, sc := range shortcuts(t) {
		t.Run(sc.name, func(t *testing.T) {
			want, wantErr := sc.lib(ctx, lib)
			if wantErr != nil || want == "" {
				t.Fatalf("the Library's %s = %q, %v; want an answer to compare with", sc.name, want, wantErr)
			}
			t.Logf("%s", want)
			got, err := sc.pkg(ctx)
			if err != nil || got != want {
				t.Errorf("nvgo.%s = %q, %v\nwant the Library's %q", sc.name, got, err, want)
			}
		})
	}
}

// The shortcuts that take a context pass it on: a cancelled one fails
// them as it fails the Library's call.
func TestPackageShortcutsPassTheirContextOn(t *testing.T) {
	lib, _ := selectFleet(t)
	t.Cleanup(nvgo.SetDefaultLibrary(lib, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, sc := range shortcuts(t) {
		switch sc.name {
		case "TakeSnapshot", "SelectDevices", "ReserveDevices":
		default:
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			if _, err := sc.lib(ctx, lib); !errors.Is(err, context.Canceled) {
				t.Fatalf("the Library's %s with a cancelled context: %v; want context.Canceled", sc.name, err)
			}
			if got, err := sc.pkg(ctx); !errors.Is(err, context.Canceled) {
				t.Errorf("nvgo.%s with a cancelled context = %q, %v; want context.Canceled", sc.name, got, err)
			}
		})
	}
}

// When Default() cannot open NVML, every shortcut returns that error
// (matching it with errors.Is) and no result.
func TestPackageShortcutsReturnDefaultsError(t *testing.T) {
	errNoNVML := fmt.Errorf("test: %w", nvgo.ErrBuiltWithoutCGO)
	t.Cleanup(nvgo.SetDefaultLibrary(nil, errNoNVML))
	ctx := context.Background()
	for _, sc := range shortcuts(t) {
		t.Run(sc.name, func(t *testing.T) {
			got, err := sc.pkg(ctx)
			if !errors.Is(err, errNoNVML) {
				t.Errorf("nvgo.%s = %q, %v; want Default()'s error %v", sc.name, got, err, errNoNVML)
			}
			if got != "" && got != "0" {
				t.Errorf("nvgo.%s = %q along with its error; want no result", sc.name, got)
			}
		})
	}
	// Each shortcut's error also answers IsNVMLUnavailable, as Default()'s does.
	if _, err := nvgo.Devices(); !nvgo.IsNVMLUnavailable(err) {
		t.Errorf("IsNVMLUnavailable(%v) = false, want true", err)
	}
}
