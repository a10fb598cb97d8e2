package main

import (
	"context"
	"fmt"
	"time"
)

// fleetRead is one read of the fleet, shared by the views that ask while
// it runs and for shareFor after.
type fleetRead struct {
	done chan struct{} // closed when v, err and at are set
	v    fleetView
	err  error
	at   time.Time // when it ended
}

// view returns the fleet as the latest read found it, when that read is
// running or ended less than shareFor ago; else it reads anew, in the
// caller, for the views that come meanwhile too. A read outlives the view
// that started it (its client may leave; others wait on it) but never
// readTimeout. A view waits no longer than ctx allows.
func (f *fleet) view(ctx context.Context) (fleetView, error) {
	f.mu.Lock()
	r := f.last
	if r != nil && !r.staleAt(f.now(), f.shareFor) {
		f.mu.Unlock()
		select {
		case <-r.done:
			return r.v, r.err
		case <-ctx.Done():
			return fleetView{Time: f.now()}, fmt.Errorf("waiting for Prometheus's answers: %w", ctx.Err())
		}
	}
	r = &fleetRead{done: make(chan struct{})}
	f.last = r
	f.mu.Unlock()

	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readTimeout)
	v, err := f.read(rctx)
	cancel()
	f.mu.Lock()
	r.v, r.err, r.at = v, err, f.now()
	close(r.done)
	f.mu.Unlock()
	return v, err
}

// staleAt reports whether r ended more than shareFor before now; f.mu is
// held, under which r ends.
func (r *fleetRead) staleAt(now time.Time, shareFor time.Duration) bool {
	select {
	case <-r.done:
		return now.Sub(r.at) >= shareFor
	default:
		return false
	}
}
