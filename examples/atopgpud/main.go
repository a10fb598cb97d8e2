// Command atopgpud is a drop-in replacement for atop's GPU daemon, built
// only on nvgo's public API. atop cannot average a GPU's busy percentage
// over its own interval, because the driver reports only the latest second;
// so a daemon samples every GPU once a second into cumulative counters and
// atop takes their differences. This one keeps them with an nvgo
// Accumulator and serves them on 127.0.0.1:59123, speaking the same wire
// protocol (version 1) as upstream's Python daemon: what atop 2.8.1 to 2.12
// expect.
//
//	atopgpud [-v] [--listen ADDR] [--interval DURATION] [--simulate NAME|FILE]
//
// Then, with Debian's atop 2.8.1 (which connects only when asked):
//
//	atop -k                  # GPU lines, and per-process GPU use with 'e'
//	atop -k -P GPU,PRE 5     # the same, parseable
//	atopsar -g 5             # connects without -k
//
// The protocol: atop opens one connection when it starts and sends
// two-byte requests, a command and the API version. 'T' is answered with
// the GPU inventory, "N@busid name tasks…", and 'S', once per atop
// interval, with each GPU's counters,
//
//	@gpupercnow mempercnow memtotKiB memusedKiB samples gpuperccum memperccum memusedcumKiB
//
// each followed by "#A pid gpubusy membusy timems memnowKiB memcumKiB
// sample" for its running processes and "#E …" for those that exited since
// the client's previous 'S'. Every reply starts with the 4-byte big-endian
// header (1<<24 | body length); atop rejects a body over 8192 bytes, so
// process entries are dropped to fit (see statsBody for which). -1 means
// that the GPU does not report the figure; atop shows N/A.
//
// The per-process busy percentages come from the driver's accounting mode,
// which the daemon turns on at start when it runs as root (as upstream
// does, and it leaves it on); otherwise they are -1.
//
// Memory used is served as upstream serves it: total − free, the driver's
// reserved memory included (nvmlDeviceGetMemoryInfo v1, 579 MiB on an idle
// H100), where nvgo's own figures leave the reservation out (see
// countReservedAsUsed).
//
// One rule for a machine the daemon cannot serve: with no usable NVIDIA
// driver (none installed or loaded, a driver/library version mismatch, no
// permission to use it, a binary built without cgo) or no GPU, it logs one
// line naming the cause and exits 0, as atopgpud does, so that a service
// unit on such a machine neither fails nor restarts forever.
//
// A connection must send its first complete request within 5 s (atop
// sends it at once). When all 1024 client slots are taken, the least
// recently active connection is closed to admit a new client: one that has
// not sent a request, the oldest first, else the one whose latest request
// is the oldest. atop, which asks once per interval, keeps its connection
// however many idle ones others open.
//
// --simulate serves a fake fleet (nvgo's fakegpu), whose clock the daemon
// moves in step with real time, for trying atop without a GPU.
//
// SIGINT, SIGTERM and SIGHUP stop it cleanly; it has no configuration to
// reload.
//
// Exit status: 0 when stopped by SIGINT, SIGTERM or SIGHUP, or with no usable
// NVIDIA driver or no GPU; 1 when it cannot listen, a --simulate file is
// bad, the driver fails otherwise, or --help cannot be written; 2 on bad
// arguments.
package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseArgs(args)
	out := tool.NewOutput(stdout) // --help's: a failed write is an error
	if code, done := tool.ArgsDone(err, usage, out, stderr, "atopgpud: %v\n\n%s", usage); done {
		return out.Finish("atopgpud", code, stderr)
	}
	level := slog.LevelInfo
	if opts.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	// A simulated fleet's clock follows real time, so that each tick finds
	// fresh samples as on a real GPU.
	lib, err := tool.Open(opts.simulate, true, nvgo.WithLogger(log))
	if err != nil && opts.simulate != "" {
		log.Error("cannot simulate", "err", err)
		return 1
	}
	if err != nil {
		return fail(log, err)
	}
	defer lib.Close()

	// SIGHUP too: a daemon whose terminal hangs up, or that is sent it to
	// reload, stops cleanly (it has nothing to reload), where the default
	// would kill it with status 129.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	d, err := startDaemon(ctx, lib, config{listen: opts.listen, interval: opts.interval, log: log})
	if err != nil {
		return fail(log, err)
	}
	if err := d.serve(ctx); err != nil {
		log.Error("serving failed", "err", err)
		return 1
	}
	log.Info("stopped", "by", context.Cause(ctx))
	return 0
}

// fail logs why the daemon cannot run and returns its exit status: 0 when
// there is no usable NVIDIA driver (see noUsableDriver) or no GPU, as
// upstream atopgpud exits, so that a service unit with Restart=on-failure
// does not restart it forever on a machine it cannot serve; 1 otherwise.
func fail(log *slog.Logger, err error) int {
	switch {
	case noUsableDriver(err):
		log.Info("no usable NVIDIA driver; nothing to serve", "err", err)
		return 0
	case errors.Is(err, errNoGPU):
		log.Info("no NVIDIA GPU found; nothing to serve")
		return 0
	}
	log.Error("cannot start", "err", err)
	return 1
}

// noUsableDriver reports whether err means that this daemon cannot use an
// NVIDIA driver here: nvgo.IsNVMLUnavailable's causes (no library, driver
// not loaded, version mismatch, no cgo) and no permission to use it
// (ERROR_NO_PERMISSION, e.g. /dev/nvidia* not readable by the daemon's
// user), which that predicate leaves out. Upstream exits 0 on any nvmlInit
// failure; other errors (e.g. ERROR_UNKNOWN) stay failures here, for the
// service manager to report.
func noUsableDriver(err error) bool {
	return nvgo.IsNVMLUnavailable(err) || errors.Is(err, nvgo.ErrNoPermission)
}
