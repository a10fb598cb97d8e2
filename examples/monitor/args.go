package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nvgo/nvgo/examples/internal/tool"
)

var errHelp = errors.New("help")

// usage is --help's text; presets are filled in from the fake fleet.
const usage = `usage: monitor [options]

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

exit status: 0 ok, 1 no usable NVIDIA driver or a bad scenario, 2 bad arguments
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
	text := "use a fake GPU fleet (in a binary built with cgo only)"
	if presets := tool.PresetNames(); len(presets) > 0 {
		text = "use a fake GPU fleet: " + strings.Join(presets, ", ") + ", or a scenario file"
	}
	return fmt.Sprintf(usage, tool.WrapOption("  --simulate NAME|FILE     ", text))
}

// parseArgs reads nvitop-style flags, as examples/status does.
func parseArgs(args []string) (*options, error) {
	o := &options{interval: time.Second, mode: "auto", noColor: os.Getenv("NO_COLOR") != ""}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, val, hasVal := strings.Cut(arg, "=")
		valueFollows := func() bool { return i+1 < len(args) && !tool.IsFlag(args[i+1]) }
		takeMany := func() []string {
			if hasVal {
				return []string{val}
			}
			var vals []string
			for valueFollows() {
				i++
				vals = append(vals, args[i])
			}
			return vals
		}
		takeOne := func() (string, error) {
			switch {
			case hasVal:
				return val, nil
			case valueFollows():
				i++
				return args[i], nil
			}
			return "", fmt.Errorf("%s needs a value", name)
		}
		noValue := func() error {
			if hasVal {
				return fmt.Errorf("%s takes no value", name)
			}
			return nil
		}
		var err error
		switch name {
		case "-h", "--help":
			return nil, errHelp
		case "-o", "--only":
			vals := takeMany()
			if len(vals) == 0 {
				return nil, fmt.Errorf("%s needs at least one GPU index", name)
			}
			if o.only, err = tool.AppendIndices(o.only, name, vals); err != nil {
				return nil, err
			}
		case "--pid":
			vals := takeMany()
			if len(vals) == 0 {
				return nil, fmt.Errorf("%s needs at least one PID", name)
			}
			if o.filter.PIDs, err = tool.AppendIndices(o.filter.PIDs, name, vals); err != nil {
				return nil, err
			}
		case "-u", "--user":
			o.filter.UserSet = true
			if hasVal {
				o.filter.User = val
			} else if valueFollows() {
				i++
				o.filter.User = args[i]
			}
		case "--interval":
			var v string
			if v, err = takeOne(); err != nil {
				return nil, err
			}
			d, perr := time.ParseDuration(v)
			switch {
			case perr != nil:
				return nil, fmt.Errorf("--interval: %q is not a duration such as 1s or 500ms", v)
			case d < minInterval:
				return nil, fmt.Errorf("--interval: %s is shorter than %s", d, minInterval)
			}
			o.interval = d
		case "-m", "--mode":
			var v string
			if v, err = takeOne(); err != nil {
				return nil, err
			}
			switch v {
			case "full", "compact", "auto":
				o.mode = v
			default:
				return nil, fmt.Errorf("%s: %q is not full, compact or auto", name, v)
			}
		case "--simulate":
			if o.simulate, err = takeOne(); err != nil || o.simulate == "" {
				return nil, fmt.Errorf("--simulate needs a preset name or a scenario file")
			}
		case "-c", "--compute":
			err, o.filter.Compute = noValue(), true
		case "--only-visible":
			err, o.onlyVisible = noValue(), true
		case "--ascii", "-U":
			err, o.ascii = noValue(), true
		case "--light":
			err, o.light = noValue(), true
		case "--no-color":
			err, o.noColor = noValue(), true
		default:
			return nil, fmt.Errorf("unknown argument %q", arg)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.onlyVisible && len(o.only) > 0 {
		return nil, fmt.Errorf("--only and --only-visible cannot be used together")
	}
	return o, nil
}
