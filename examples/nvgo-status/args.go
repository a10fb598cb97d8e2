package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

const usage = `usage: nvgo-status [options]

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

exit status: 0 ok, 1 no usable NVIDIA driver, a bad scenario or output that
             cannot be written, 2 bad arguments, 3 CUDA's device list cannot
             be determined (--only-visible)
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

// parseArgs reads nvitop-style flags (tool.CommonFlags): a flag may take several
// values ("--only 0 1") and may be repeated to add more ("--only 0 --only
// 1"), "--flag=value" works for all, and --user's name is optional.
func parseArgs(args []string) (*options, error) {
	o := &options{noColor: os.Getenv("NO_COLOR") != ""}
	common := tool.CommonFlags{
		Only: &o.only, OnlyVisible: &o.onlyVisible,
		Compute: &o.compute, Graphics: &o.graphics, UserSet: &o.userSet, User: &o.user, PIDs: &o.pids,
		ASCII: &o.ascii, NoColor: &o.noColor,
	}
	if err := common.Parse(args, o.readFlag, o.check); err != nil {
		return nil, err
	}
	return o, nil
}

// check checks nvgo-status's own flags together.
func (o *options) check() error {
	if o.fields != 0 && !o.json {
		// the table shows what it shows: reading less would print N/A
		return fmt.Errorf("--fields applies to --json only")
	}
	return nil
}

// readFlag reads a flag that tool.CommonFlags leaves to nvgo-status.
func (o *options) readFlag(a *tool.Args) (err error) {
	switch a.Name() {
	case "--simulate":
		// Not tool.CommonFlags.Simulate: a bare --simulate after one with
		// a value keeps that value here, as it always has in nvgo-status.
		if v, ok := a.OptionalValue(); ok {
			o.simulate = v
		}
		if o.simulate == "" {
			err = tool.ErrNoSimulation
		}
	case "--json":
		err, o.json = a.NoValue(), true
	case "--fields":
		o.fields, err = parseFields(a.OptionalValue())
	default:
		err = a.Unknown()
	}
	return err
}

// parseFields reads the value of --fields, if given: a list of field
// groups, at least one.
func parseFields(v string, given bool) (nvgo.Fields, error) {
	errNone := errors.New("--fields needs a list of field groups")
	if !given {
		return 0, errNone
	}
	f, err := nvgo.ParseFields(v)
	if err != nil {
		return 0, fmt.Errorf("--fields: %w", err)
	}
	if f == 0 {
		return 0, errNone
	}
	return f, nil
}
