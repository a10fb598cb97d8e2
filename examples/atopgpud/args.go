package main

import (
	"fmt"
	"time"

	"github.com/nvgo/nvgo/examples/internal/tool"
)

// defaultListen is where atop connects: IPv4 loopback, port 59123, fixed in
// atop's gpucom.c.
const defaultListen = "127.0.0.1:59123"

// usage is the --help text. The --simulate presets come from
// tool.PresetNames, so that each one nvgo ships is listed.
var usage = fmt.Sprintf(`usage: atopgpud [-v] [--listen ADDR] [--interval DURATION] [--simulate NAME|FILE]

A drop-in replacement for atop's GPU daemon (atopgpud), built on nvgo. It
samples every NVIDIA GPU once a second into cumulative counters (busy %%,
memory, and per process GPU memory) and serves them to atop over TCP, so
that atop shows GPU figures averaged over its own interval. It runs in the
foreground; SIGINT, SIGTERM and SIGHUP stop it (exit status 0).

Use it with atop:
  atopgpud &                 # or as a systemd service
  atop -k                    # Debian's atop 2.8.1 connects only with -k
  atop -k -P GPU,PRE 5       # parseable GPU and per-process GPU lines
  atopsar -g 5               # GPU report (connects without -k)

atop connects to 127.0.0.1:59123 only, once, when it starts: start the
daemon first. Run it as root to get per-process GPU and memory busy
percentages (it turns accounting mode on); otherwise atop shows them as
N/A. Figures a GPU does not report are sent as -1 (N/A in atop). Memory
used is total - free, the driver's reserved memory included, as atopgpud
serves it (nvidia-smi shows it without the reservation).

options:
  -v                    log debug messages (to stderr)
  --listen ADDR         TCP address to listen on (default 127.0.0.1:59123)
  --interval DURATION   time between samples (default 1s, what atop assumes)
%s
  -h, --help            show this help

exit status: 0 stopped by a signal, or no usable NVIDIA driver (none
             installed or loaded, a version mismatch, no permission to use
             it) or no GPU: one log line names the cause, as atopgpud exits;
             1 cannot listen, a bad --simulate file, another driver
             failure, or this help cannot be written; 2 bad arguments
`, tool.SimulateHelp("  --simulate NAME|FILE  ", "serve", "or a scenario JSON file (see the README)"))

type options struct {
	verbose  bool
	listen   string
	interval time.Duration
	simulate string
}

// parseArgs reads the flags (tool.ParseFlags); both -flag and --flag work,
// as does --flag=value.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	fs := tool.NewFlagSet("atopgpud")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.StringVar(&o.listen, "listen", defaultListen, "")
	fs.DurationVar(&o.interval, "interval", time.Second, "")
	fs.StringVar(&o.simulate, "simulate", "", "")
	if err := tool.ParseFlags(fs, args); err != nil {
		return nil, err
	}
	switch {
	case o.interval < 10*time.Millisecond:
		return nil, fmt.Errorf("--interval %s: want at least 10ms", o.interval)
	case o.listen == "":
		return nil, fmt.Errorf("--listen needs an address, e.g. %s", defaultListen)
	case tool.Given(fs, "simulate") && o.simulate == "":
		return nil, tool.ErrNoSimulation
	}
	return o, nil
}
