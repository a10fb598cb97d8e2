// Command status prints a one-shot view of the GPUs and the processes on
// them, like nvitop's one-shot mode (and nvidia-smi, enriched): a device
// table colour-coded by load, with bars, then the processes with their host
// information. It is built only on nvgo's public API.
//
//	status [--only IDX…] [--compute] [--graphics] [--user [NAME]] [--pid PID…]
//	       [--ascii] [--no-color] [--json] [--simulate NAME|FILE]
//
// Exit status: 0 on success, 1 when there is no usable NVIDIA driver (or a
// simulation file is bad), 2 on bad flags.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"time"

	"github.com/nvgo/nvgo"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	opts, err := parseArgs(args)
	if errors.Is(err, errHelp) {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "status: %v\n(see status --help)\n", err)
		return 2
	}
	lib, err := open(opts.simulate)
	if err != nil {
		fmt.Fprintf(stderr, "status: %v\n", err)
		return 1
	}
	defer lib.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	devs, err := lib.Devices()
	if err != nil {
		return fail(stderr, err)
	}
	if len(opts.only) > 0 {
		var picked []*nvgo.Device
		for _, i := range opts.only {
			if i < 0 || i >= len(devs) {
				fmt.Fprintf(stderr, "status: --only %d: no such GPU (there are %d)\n", i, len(devs))
				return 2
			}
			if !slices.Contains(picked, devs[i]) { // "--only 1 1" shows GPU 1 once
				picked = append(picked, devs[i])
			}
		}
		devs = picked
	}
	snap, err := lib.Snapshot(ctx, nvgo.WithDevices(devs...))
	if err != nil {
		return fail(stderr, err)
	}
	for i := range snap.Devices {
		snap.Devices[i].Processes = opts.filter(snap.Devices[i].Processes)
	}
	if opts.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(jsonOf(snap)); err != nil {
			fmt.Fprintf(stderr, "status: %v\n", err)
			return 1
		}
		return 0
	}
	host := nvgo.ReadHost(ctx)
	r := newRenderer(stdout, opts)
	r.render(snap, host)
	return 0
}

// jsonSnapshot is the --json document: the snapshot, with "processes" on
// every GPU, [] when none runs and null when they could not be read
// ("processes_error" says why). The snapshot alone omits an empty list,
// which a reader cannot tell from a list that was not collected.
type jsonSnapshot struct {
	*nvgo.Snapshot
	Devices []jsonDevice `json:"devices"`
}

type jsonDevice struct {
	nvgo.DeviceSnapshot
	Processes []nvgo.GpuProcessSnapshot `json:"processes"`
}

func jsonOf(s *nvgo.Snapshot) jsonSnapshot {
	doc := jsonSnapshot{Snapshot: s, Devices: make([]jsonDevice, len(s.Devices))}
	for i, d := range s.Devices {
		procs := d.Processes
		if procs == nil && d.ProcessesErr == nil {
			procs = []nvgo.GpuProcessSnapshot{}
		}
		doc.Devices[i] = jsonDevice{DeviceSnapshot: d, Processes: procs}
	}
	return doc
}

func fail(stderr io.Writer, err error) int {
	if nvgo.IsNVMLUnavailable(err) {
		fmt.Fprintf(stderr, "status: no usable NVIDIA driver: %v (try --simulate dgx-h100)\n", err)
		return 1
	}
	fmt.Fprintf(stderr, "status: %v\n", err)
	return 1
}

// filter keeps the processes the flags ask for.
func (o *options) filter(ps []nvgo.GpuProcessSnapshot) []nvgo.GpuProcessSnapshot {
	return slices.DeleteFunc(ps, func(p nvgo.GpuProcessSnapshot) bool {
		if o.compute && p.Type&nvgo.ProcessCompute == 0 {
			return true
		}
		if o.graphics && p.Type&nvgo.ProcessGraphics == 0 {
			return true
		}
		if o.userSet {
			name := o.user
			if name == "" {
				if u, err := user.Current(); err == nil {
					name = u.Username
				}
			}
			if p.Username.Or("") != name {
				return true
			}
		}
		if len(o.pids) > 0 && !slices.Contains(o.pids, p.PID) {
			return true
		}
		return false
	})
}
