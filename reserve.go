package nvgo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nvgo/nvgo/internal/reserve"
)

// testHookBeforeLock runs between the selection and the locking, in tests.
var testHookBeforeLock func()

// lockRetries bounds how often ReserveDevices tries again after coming up
// short against other launchers.
const lockRetries = 8

// lockBackoff is a random pause before retry attempt, growing with it:
// launchers that collided spread out instead of colliding again.
func lockBackoff(attempt int) time.Duration {
	return 500*time.Microsecond + rand.N(time.Duration(attempt)*2*time.Millisecond)
}

// pause waits d unless ctx ends first; it reports whether it waited.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ErrReserved is the error for a device another process has reserved.
var ErrReserved = reserve.ErrBusy

// ErrLockDir is matched by the errors of a lock directory that cannot be
// used (it cannot be created, is not a directory, or refuses new files):
// a filesystem problem, not an NVML one.
var ErrLockDir = errors.New("lock directory unusable")

// WithLockDir sets the directory of ReserveDevices' lock files. The default
// is $NVGO_LOCK_DIR, else /run/lock/nvgo, else nvgo-locks in the temporary
// directory: one directory every user of the machine shares, since
// reservations only protect launchers that see each other's locks. A
// directory named here or in $NVGO_LOCK_DIR is created if missing (mode
// 1777, parents too). A GPU whose lock file is unusable (a FIFO or a link
// planted at its path) is left out of a reservation, which names it in
// Reservation.LeftOut.
func WithLockDir(dir string) SelectOption { return func(o *selectOptions) { o.lockDir = dir } }

// lockDirectory returns the lock directory, resolving the default once per
// selection (DefaultDir creates and probes a file on every call).
func (o *selectOptions) lockDirectory() (string, error) {
	if !o.lockDirReady {
		dir, err := reserve.Dir(o.lockDir)
		if err != nil {
			return "", fmt.Errorf("nvgo: %w: %w", ErrLockDir, err)
		}
		o.lockDir, o.lockDirReady = dir, true
	}
	return o.lockDir, nil
}

// reserved reports whether another holder has d reserved now. Without a
// usable lock directory nothing can be reserved, so nothing is.
func (o *selectOptions) reserved(d *Device) bool {
	uuid, ok := d.UUID().Get()
	if !ok {
		return false
	}
	dir, err := o.lockDirectory()
	if err != nil {
		return false
	}
	_, _, held, err := reserve.Holder(dir, uuid)
	return err == nil && held
}

// Reservation holds selected devices so that other launchers using nvgo
// (in any process, of any user sharing the lock directory) do not select
// them. It is one flock(2) per device UUID: the kernel drops it when every
// process holding it has exited, so a crashed launcher leaves nothing to
// clean up. Hand it to the job with Command (or Files), and it lasts exactly
// as long as the job.
//
// Reservations are advisory: they keep nvgo launchers apart, not processes
// that ignore them. Keep a Reservation reachable for as long as it should
// hold (or hand its files to the job): like an *os.File, one the garbage
// collector takes closes its lock files, which ends the reservation. A
// Reservation is safe for concurrent use.
type Reservation struct {
	devices []*Device
	leftOut DeviceErrors
	mu      sync.Mutex
	locks   []*reserve.Lock
}

// ReserveDevices selects devices as SelectDevices does and reserves them:
// it walks the ranked candidates, takes each free one's lock without
// waiting, re-reads the device under the lock and keeps it only if it still
// satisfies the constraints (so two launchers that read the same snapshot
// cannot both take a GPU). It reserves WithMaxCount devices (all that pass,
// without a maximum); with fewer than WithMinCount it reserves none and
// returns an error matching ErrTooFewDevices.
//
// Launchers started together walk the same ranking and can leave each
// other short: each holds part of what the others need. So when it comes up
// short while other launchers held some of the candidates, it lets go of
// everything and tries again, up to lockRetries times, a few randomly
// spread milliseconds apart (or until ctx ends), which lets one of them
// take a whole set.
func (l *Library) ReserveDevices(ctx context.Context, opts ...SelectOption) (*Reservation, error) {
	o, err := l.selectOptions(opts)
	if err != nil {
		return nil, err
	}
	dir, err := o.lockDirectory()
	if err != nil {
		return nil, err
	}
	cands, err := l.judge(ctx, o)
	if err != nil {
		return nil, err
	}
	limit := o.maxCount
	o.maxCount = -1
	devs := l.pick(o, cands)
	n := len(devs)
	if limit >= 0 {
		n = min(n, limit)
	}
	if n < o.minCount {
		return nil, o.withUnread(fmt.Errorf("nvgo: %d of %d devices wanted satisfy the constraints: %w", n, o.minCount, ErrTooFewDevices))
	}
	byUUID := make(map[string]*Device, len(devs))
	keys := make([]string, 0, len(devs))
	for _, d := range devs {
		u, ok := d.UUID().Get()
		if !ok {
			continue // cannot be named, so cannot be reserved
		}
		byUUID[u] = d
		keys = append(keys, u)
	}
	want := n // at least o.minCount, checked above
	if want == 0 {
		return &Reservation{leftOut: o.unread}, nil
	}
	if testHookBeforeLock != nil {
		testHookBeforeLock()
	}
	accept := func(uuid string) bool {
		if ctx.Err() != nil {
			return false
		}
		c := o.read(byUUID[uuid])
		o.score(c)
		return c.passes
	}
	var locks []*reserve.Lock
	var unusable DeviceErrors
	for attempt := 1; ; attempt++ {
		unusable = unusable[:0]
		locks, err = reserve.TryLockFirst(dir, keys, want, accept, func(uuid string, err error) {
			l.log.Debug("nvgo: a device left out of the reservation: its lock file cannot be locked", "uuid", uuid, "err", err)
			unusable = append(unusable, DeviceError{Index: byUUID[uuid].Index(), UUID: uuid, Err: err})
		})
		var short *reserve.ShortError
		if !errors.As(err, &short) || short.Busy == 0 || short.Free+short.Busy < want ||
			attempt > lockRetries || !pause(ctx, lockBackoff(attempt)) {
			break
		}
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		if errors.Is(err, reserve.ErrNotEnough) {
			return nil, o.withUnread(errors.Join(fmt.Errorf("nvgo: reserving %d devices: %w (%w)", want, ErrTooFewDevices, err), unusable.orNil()))
		}
		return nil, fmt.Errorf("nvgo: reserving devices: %w", err)
	}
	r := &Reservation{locks: locks, leftOut: append(slices.Clip(o.unread), unusable...)}
	for _, lk := range locks {
		r.devices = append(r.devices, byUUID[lk.Key()])
	}
	return r, nil
}

// Devices returns the reserved devices, best first.
func (r *Reservation) Devices() []*Device { return r.devices }

// LeftOut names the devices that could not be considered, each with why:
// GPUs that could not be read, and devices whose lock file cannot be locked
// (a FIFO or a symbolic link planted at its path, say). It is empty when
// every device was considered. The reservation stands without them.
func (r *Reservation) LeftOut() DeviceErrors { return r.leftOut }

// CUDAVisibleDevices returns the value of CUDA_VISIBLE_DEVICES that gives a
// job exactly the reserved devices: their UUIDs, which mean the same devices
// whatever CUDA_DEVICE_ORDER says.
func (r *Reservation) CUDAVisibleDevices() string {
	return strings.Join(DeviceUUIDs(r.devices), ",")
}

// Files returns the open lock files, for exec.Cmd.ExtraFiles: the child
// inherits the locks and holds them until it and every process it passes
// them to has exited, even if this process dies first.
func (r *Reservation) Files() []*os.File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return reserve.ExtraFiles(r.locks)
}

// Command returns an exec.Cmd that runs name with CUDA_VISIBLE_DEVICES set
// to the reserved devices and the reservation's lock files inherited, so
// the reservation lives as long as the command. Call Release after Start
// (or after Wait); the locks stay with the child.
func (r *Reservation) Command(ctx context.Context, name string, arg ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, arg...)
	cmd.Env = append(os.Environ(), "CUDA_VISIBLE_DEVICES="+r.CUDAVisibleDevices())
	cmd.ExtraFiles = r.Files()
	return cmd
}

// Release drops this process's hold on the reservation. Children that
// inherited the lock files keep the devices reserved until they exit.
// Release is idempotent.
func (r *Reservation) Release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, lk := range r.locks {
		errs = append(errs, lk.Unlock())
	}
	r.locks = nil
	return errors.Join(errs...)
}

// ReserveDevices reserves devices of the default Library (Library.ReserveDevices).
func ReserveDevices(ctx context.Context, opts ...SelectOption) (*Reservation, error) {
	l, err := Default()
	if err != nil {
		return nil, err
	}
	return l.ReserveDevices(ctx, opts...)
}
