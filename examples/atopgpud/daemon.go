package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/nvgo/nvgo"
)

// errNoGPU is why a daemon does not start on a machine whose driver sees no
// GPU.
var errNoGPU = errors.New("no NVIDIA GPU found")

// config is what startDaemon needs besides the Library.
type config struct {
	listen   string
	interval time.Duration
	log      *slog.Logger
}

// daemon is a started atopgpud: the accumulator sampling the GPUs and the
// server answering atop from it.
type daemon struct {
	acc   *nvgo.Accumulator
	srv   *server
	types []gpuType
}

// startDaemon prepares every GPU (at most maxGPUs; accounting mode on where
// allowed), listens on cfg.listen and starts the accumulator, which runs
// until ctx ends. Serve the clients with serve. It fails with errNoGPU when
// there is no GPU.
func startDaemon(ctx context.Context, lib *nvgo.Library, cfg config) (*daemon, error) {
	log := cfg.log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	devs, err := lib.Devices()
	if err != nil {
		return nil, err
	}
	if len(devs) == 0 {
		return nil, errNoGPU
	}
	if len(devs) > maxGPUs {
		log.Warn("atop takes at most 32 GPUs; serving the first 32", "gpus", len(devs))
		devs = devs[:maxGPUs]
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return nil, err
	}
	tasks := prepareGPUs(ctx, devs, log)
	acc, err := lib.StartAccumulator(ctx, nvgo.WithAccumulatorInterval(cfg.interval), nvgo.WithAccumulatorDevices(devs...))
	if err != nil {
		ln.Close()
		return nil, err
	}
	d := &daemon{acc: acc}
	reservedByIndex := reservedMemory(devs, log)
	var reserved []nvgo.Bytes // by GPU position
	first := acc.Counters()
	for _, g := range first.GPUs {
		d.types = append(d.types, gpuType{BusID: g.BusID.Or(""), Name: g.Name.Or(""), Tasks: tasks[g.Index]})
		reserved = append(reserved, reservedByIndex[g.Index])
	}
	typesReply := frame(typesBody(d.types))
	d.srv = newServer(ln, log, func() (*session, func()) {
		r := acc.NewReader()
		return &session{types: typesReply, read: r.Read, reserved: reserved}, r.Close
	})
	accounted := 0
	for _, t := range tasks {
		if t&taskAccounting != 0 {
			accounted++
		}
	}
	log.Info("serving atop", "addr", ln.Addr().String(), "gpus", len(d.types), "accounting_on", accounted, "interval", acc.Interval())
	return d, nil
}

// addr is the address the daemon listens on.
func (d *daemon) addr() string { return d.srv.ln.Addr().String() }

// serve answers clients until ctx (the one given to startDaemon) ends, then
// waits for the connections and the accumulator to stop.
func (d *daemon) serve(ctx context.Context) error {
	err := d.srv.serve(ctx)
	<-d.acc.Done()
	return err
}

// prepareGPUs turns accounting mode on where it can (as root), as upstream
// does, and returns each GPU's task-support bits by NVML index: whether its
// process list can be read, and whether accounting is on (already, or now).
func prepareGPUs(ctx context.Context, devs []*nvgo.Device, log *slog.Logger) map[int]int {
	tasks := make(map[int]int, len(devs))
	for _, d := range devs {
		bits := 0
		if _, err := d.Processes(ctx); err == nil {
			bits |= taskProcesses
		} else {
			log.Debug("cannot read the process list", "gpu", d.Index(), "err", err)
		}
		if err := d.SetAccountingMode(true); err != nil {
			log.Debug("cannot turn accounting mode on; per-process busy % will be -1", "gpu", d.Index(), "err", err)
		}
		if on, ok := d.AccountingMode().Get(); ok && bool(on) {
			bits |= taskAccounting
		}
		tasks[d.Index()] = bits
	}
	return tasks
}

// reservedMemory returns, by NVML index, the memory each GPU's driver keeps
// for itself, which the atop protocol counts as used, as upstream does (see
// countReservedAsUsed): then used + reserved = total − free. Drivers before
// R510 do not report it, and count it as used already: 0.
func reservedMemory(devs []*nvgo.Device, log *slog.Logger) map[int]nvgo.Bytes {
	reserved := make(map[int]nvgo.Bytes, len(devs))
	for _, d := range devs {
		r := d.MemoryReserved()
		if r.IsNA() {
			log.Debug("no reserved memory reported; serving used memory as the driver reports it", "gpu", d.Index(), "reason", r.Reason())
		}
		reserved[d.Index()] = r.Or(0)
	}
	return reserved
}
