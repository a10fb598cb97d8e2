package main

import (
	"fmt"
	"os"
	"time"

	"github.com/nvgo/nvgo/examples/internal/tool"
)

// usage is --help's text; presets are filled in from the fake fleet.
const usage = `usage: nvgo-monitor [options]

Live view of the NVIDIA GPUs and their processes, as nvitop -m shows them,
with every figure averaged over each refresh interval from the driver's
sample buffers (not one instantaneous read per refresh).

options:
  -o, --only IDX [IDX ...] show only these GPUs (NVML indices); repeat to add
  --only-visible           show only the devices CUDA would see here, in CUDA
                           order (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER)
  --interval DURATION      refresh interval (default 1s; at least 100ms)
  -m, --mode MODE          full, compact or auto (default auto: by terminal size)
  --ascii                  ASCII characters only
  --light                  colours for a light terminal background
  --no-color               no colours (also when NO_COLOR is set)
  -c, --compute            only compute processes
  -u, --user [NAME]        only processes of NAME (default: the current user)
  --pid PID [PID ...]      only these processes
%s
  -h, --help               show this help (inside the monitor: h or ?)

exit status: 0 ok, 1 no usable NVIDIA driver, a bad scenario or this help cannot
             be written, 2 bad arguments, 3 CUDA's device list cannot be
             determined (--only-visible), 128+N ended by signal N (129: the
             terminal hung up)
`

// options are the command line's settings.
type options struct {
	only        []int
	onlyVisible bool
	interval    time.Duration
	mode        string // "full", "compact" or "auto"
	ascii       bool
	light       bool
	noColor     bool
	filter      tool.ProcessFilter
	simulate    string
}

// minInterval keeps the monitor from sampling faster than the driver does.
const minInterval = 100 * time.Millisecond

// usageText is the --help, its --simulate line listing tool.PresetNames.
func usageText() string {
	return fmt.Sprintf(usage, tool.SimulateHelp("  --simulate NAME|FILE     ", "use", "or a scenario file"))
}

// parseArgs reads nvitop-style flags (tool.CommonFlags), as nvgo-status
// does.
func parseArgs(args []string) (*options, error) {
	o := &options{interval: time.Second, mode: "auto", noColor: os.Getenv("NO_COLOR") != ""}
	common := tool.CommonFlags{
		Only: &o.only, OnlyVisible: &o.onlyVisible,
		Compute: &o.filter.Compute, UserSet: &o.filter.UserSet, User: &o.filter.User, PIDs: &o.filter.PIDs,
		ASCII: &o.ascii, NoColor: &o.noColor, Simulate: &o.simulate,
	}
	if err := common.Parse(args, o.readFlag, nil); err != nil {
		return nil, err
	}
	return o, nil
}

// readFlag reads a flag that tool.CommonFlags leaves to the monitor.
func (o *options) readFlag(a *tool.Args) error {
	switch a.Name() {
	case "--interval":
		v, err := a.Value()
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return fmt.Errorf("--interval: %q is not a duration such as 1s or 500ms", v)
		case d < minInterval:
			return fmt.Errorf("--interval: %s is shorter than %s", d, minInterval)
		}
		o.interval = d
	case "-m", "--mode":
		v, err := a.Value()
		if err != nil {
			return err
		}
		switch v {
		case "full", "compact", "auto":
			o.mode = v
		default:
			return fmt.Errorf("%s: %q is not full, compact or auto", a.Name(), v)
		}
	case "--light":
		o.light = true
		return a.NoValue()
	default:
		return a.Unknown()
	}
	return nil
}
