//go:build cgo

package fakegpu

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/nvgo/nvgo/fakegpu/internal/libnvml"
)

// A Mirror keeps a fleet's state in a file that nvgo's drop-in
// libnvidia-ml.so.1 reads (see the package documentation, "The C door"):
// point NVGO_FAKE_FLEET at Path and any NVML client, in this process or
// another, sees the fleet as a driver. Sync publishes the fleet as it is
// now; Run keeps publishing it as it changes, with the fleet's clock
// following the system clock.
//
// Readers never wait for Sync and never see half of one: the file holds
// two copies of the state and Sync rewrites the one readers are not using
// before switching them to it.
//
// A Mirror is safe for concurrent use.
type Mirror struct {
	fleet *Fleet
	path  string

	mu     sync.Mutex // serialises Sync and Close
	mem    []byte
	hdr    *libnvml.Header
	slots  [2]*libnvml.State
	migs   map[*MIG]uint32
	next   uint32
	closed bool
}

// stateLayout is where the header and the two slots lie in a state file.
func stateLayout() (slots [2]uint64, size uint64) {
	round := func(n uint64) uint64 { return (n + libnvml.Page - 1) / libnvml.Page * libnvml.Page }
	slot := round(uint64(unsafe.Sizeof(libnvml.State{})))
	slots[0] = round(uint64(unsafe.Sizeof(libnvml.Header{})))
	slots[1] = slots[0] + slot
	return slots, slots[1] + slot
}

// NewMirror creates (or truncates) the state file at path, publishes the
// fleet's current state in it and returns the Mirror that keeps it. The
// file is about 10 MB, sparse: only what the fleet uses is written. Close
// the Mirror when done; the file stays until its creator removes it.
func NewMirror(f *Fleet, path string) (*Mirror, error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fakegpu: mirror: %w", err)
	}
	defer file.Close() // the mapping outlives the descriptor
	offsets, size := stateLayout()
	if err := file.Truncate(int64(size)); err != nil {
		return nil, fmt.Errorf("fakegpu: mirror: %w", err)
	}
	mem, err := syscall.Mmap(int(file.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("fakegpu: mirror: mapping %s: %w", path, err)
	}
	m := &Mirror{fleet: f, path: path, mem: mem, migs: map[*MIG]uint32{}}
	m.hdr = (*libnvml.Header)(unsafe.Pointer(&mem[0]))
	for i, off := range offsets {
		m.slots[i] = (*libnvml.State)(unsafe.Pointer(&mem[off]))
	}
	h := m.hdr
	h.Layout = libnvml.Layout
	h.Header_size = uint32(unsafe.Sizeof(libnvml.Header{}))
	h.Slot_size = uint64(unsafe.Sizeof(libnvml.State{}))
	h.Slot_offset = offsets
	h.File_size = size
	h.Writer_pid = uint32(os.Getpid())
	if err := m.Sync(); err != nil && !errors.Is(err, errStateFull) {
		syscall.Munmap(mem)
		return nil, err
	}
	// The magic goes last: a reader that finds it finds a published state.
	for i := 0; i < len(h.Magic); i++ {
		h.Magic[i] = int8(libnvml.Magic[i])
	}
	return m, nil
}

// Path returns the state file's path, the value for NVGO_FAKE_FLEET.
func (m *Mirror) Path() string { return m.path }

// ErrMirrorClosed is returned by Sync after Close.
var ErrMirrorClosed = errors.New("fakegpu: mirror closed")

// Sync publishes the fleet as it is now: from the next NVML call on,
// readers of the file see it. If the fleet holds more than a state file
// can (16384 processes, 256 GPU and MIG devices, …; see the error), what
// fits is published and the error says what was cut.
func (m *Mirror) Sync() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrMirrorClosed
	}
	seq := (*uint64)(unsafe.Pointer(&m.hdr.Seq))
	s := atomic.LoadUint64(seq) // even: this is the only writer
	slot := m.slots[((s>>1)+1)&1]
	atomic.StoreUint64(seq, s+1) // writing the slot readers are not using
	x := exporter{f: m.fleet, st: slot, migs: m.migs, next: &m.next}
	err := x.run()
	atomic.StoreUint64(seq, s+2) // published
	return err
}

// Run keeps the file up to date until ctx ends: every interval (a tenth
// of a second when interval is not positive) it moves the fleet's clock to
// the system clock's time, as a driver's sample buffers move, and
// publishes the fleet. It returns ctx's error, or the first error of Sync
// other than a fleet too large for the file.
func (m *Mirror) Run(ctx context.Context, interval time.Duration) error {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		m.fleet.Advance(time.Since(m.fleet.Now()))
		if err := m.Sync(); err != nil && !errors.Is(err, errStateFull) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// Close unmaps the file; readers that mapped it keep the last published
// state. Close is idempotent.
func (m *Mirror) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	return syscall.Munmap(m.mem)
}
