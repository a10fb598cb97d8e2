package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

var errHelp = errors.New("help")

const usage = `usage: status [options]

One-shot view of the NVIDIA GPUs and their processes.

options:
  --only IDX [IDX ...]   show only these GPUs (NVML indices) and their MIG
                         devices; also --only=0,1 or --only 0 --only 1
  --only-visible         show only the devices CUDA would see here, in CUDA
                         order (from CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER)
  --compute              only compute processes (type C or C+G)
  --graphics             only graphics processes (type G or C+G)
  --user [NAME]          only processes of NAME (default: the current user)
  --pid PID [PID ...]    only these processes (repeat --pid to add more)
  --ascii                ASCII characters only (no box drawing, no Unicode bars)
  --no-color             no colours (also when NO_COLOR is set or stdout is not a terminal)
  --json                 print one JSON object: {"devices": [{…, "processes": […]}]}
  --fields LIST          with --json, the field groups to read (default all): a
                         list of memory, bar1, utilization, codec, clocks, fan,
                         temperature, power, pcie, nvlink, ecc,
                         performance_state, display, persistence_mode,
                         compute_mode, mig_mode, processes, mig_devices,
                         vgpu_instances, or status (what the table shows)
  --simulate NAME|FILE   use a fake GPU fleet: dgx-a100, dgx-h100, dgx-h200,
                         dgx-b200, dgx-a100-mig, dgx-h100-mig, vgpu-h100, or
                         a scenario JSON file (see the README)
  -h, --help             show this help

exit status: 0 ok, 1 no usable NVIDIA driver or bad scenario, 2 bad arguments,
             3 CUDA's device list cannot be determined (--only-visible)
`

type options struct {
	only              []int
	onlyVisible       bool
	compute, graphics bool
	userSet           bool
	user              string
	pids              []int
	ascii, noColor    bool
	json              bool
	fields            nvgo.Fields // what to read; 0 until --fields
	simulate          string
}

// readFields returns the field groups to read: what the table shows, or
// with --json what --fields names (default all).
func (o *options) readFields() nvgo.Fields {
	switch {
	case !o.json:
		return nvgo.FieldsStatus
	case o.fields != 0:
		return o.fields
	}
	return nvgo.FieldsAll
}

// parseArgs reads nvitop-style flags: a flag may take several values
// ("--only 0 1") and may be repeated to add more ("--only 0 --only 1"),
// "--flag=value" works for all, and --user's name is optional.
func parseArgs(args []string) (*options, error) {
	o := &options{noColor: os.Getenv("NO_COLOR") != ""}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, val, hasVal := strings.Cut(arg, "=")
		valueFollows := func() bool { return i+1 < len(args) && !tool.IsFlag(args[i+1]) }
		// values after a multi-value flag, up to the next flag
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
		case "--only", "-o":
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
			if o.pids, err = tool.AppendIndices(o.pids, name, vals); err != nil {
				return nil, err
			}
		case "--user", "-u":
			o.userSet = true
			if hasVal {
				o.user = val
			} else if valueFollows() {
				i++
				o.user = args[i]
			}
		case "--simulate":
			switch {
			case hasVal:
				o.simulate = val
			case valueFollows():
				// "--simulate --json" is a missing value, not a file named
				// "--json"; such a file can be given as ./--json
				i++
				o.simulate = args[i]
			}
			if o.simulate == "" {
				return nil, fmt.Errorf("--simulate needs a preset name or a scenario file")
			}
		case "--compute", "-c":
			err, o.compute = noValue(), true
		case "--graphics", "-g":
			err, o.graphics = noValue(), true
		case "--ascii", "-U":
			err, o.ascii = noValue(), true
		case "--no-color":
			err, o.noColor = noValue(), true
		case "--json":
			err, o.json = noValue(), true
		case "--fields":
			v := val
			if !hasVal {
				if !valueFollows() {
					return nil, fmt.Errorf("--fields needs a list of field groups")
				}
				i++
				v = args[i]
			}
			f, perr := nvgo.ParseFields(v)
			if perr != nil {
				return nil, fmt.Errorf("--fields: %w", perr)
			}
			if f == 0 {
				return nil, fmt.Errorf("--fields needs a list of field groups")
			}
			o.fields = f
		case "--only-visible":
			err, o.onlyVisible = noValue(), true
		default:
			return nil, fmt.Errorf("unknown argument %q", arg)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.fields != 0 && !o.json {
		// the table shows what it shows: reading less would print N/A
		return nil, fmt.Errorf("--fields applies to --json only")
	}
	if o.onlyVisible && len(o.only) > 0 {
		// NVML indices and CUDA's list are two different selections
		return nil, fmt.Errorf("--only and --only-visible cannot be used together")
	}
	return o, nil
}
