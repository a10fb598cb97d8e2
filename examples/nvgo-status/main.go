// Command nvgo-status prints a one-shot view of the GPUs and the processes on
// them, like nvitop's one-shot mode (and nvidia-smi, enriched): a device
// table colour-coded by load, with bars, then the processes with their host
// information. It is built only on nvgo's public API.
//
//	nvgo-status [--only IDX… | --only-visible] [--compute] [--graphics]
//	       [--user [NAME]] [--pid PID…] [--ascii] [--no-color] [--json]
//	       [--simulate NAME|FILE]
//
// Under a GPU with MIG mode on, one row per MIG device shows its MIG index,
// GPU and compute instance IDs, profile, memory and UUID; processes on MIG
// devices are listed as GPU "0:1" (GPU index:MIG index), with SM
// utilization N/A, since NVML keeps none per process on MIG.
//
// Under a vGPU host's GPU, two rows per vGPU instance show its ID, type,
// VM, license, utilization (SM, framebuffer, encoder, decoder) and
// framebuffer use, then one row per busy guest process ("guest" PID, name,
// SM and memory utilization). Guest processes stay out of the process
// table, whose PIDs are the host's; --json has them under each device's
// "vgpu_instances". A bare-metal GPU shows no vGPU rows.
//
// --only-visible shows the devices CUDA would see in this process (whole
// GPUs and MIG devices), in CUDA order, each labelled with its CUDA index
// ("cuda_index" in --json), as nvgo reads CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER without initialising CUDA.
//
// Exit status: 0 on success, 1 when there is no usable NVIDIA driver (or a
// simulation file is bad, or the output cannot be written), 2 on bad flags,
// 3 when CUDA's device list cannot be determined for --only-visible
// (nvgo.ErrUndetermined).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs nvgo-status with args and returns its exit status. Its output
// goes to stdout through a buffer: a write that fails (a full disk, a
// closed file) fails the run, with exit status 1 and a line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	checked := tool.NewOutput(stdout)
	out := bufio.NewWriter(checked)
	code := status(args, out, stdout, stderr)
	out.Flush() // its error is checked's
	return checked.Finish("nvgo-status", code, stderr)
}

// status writes what args ask for to out, which goes to stdout, and
// returns the exit status.
func status(args []string, out, stdout, stderr io.Writer) int {
	opts, err := parseArgs(args)
	if code, done := tool.ArgsDone(err, usage, out, stderr, "nvgo-status: %v\n(see nvgo-status --help)\n"); done {
		return code
	}
	lib, sel, err := tool.OpenDevices(opts.simulate, false, opts.only, opts.onlyVisible)
	if err != nil {
		if errors.Is(err, nvgo.ErrUndetermined) {
			err = fmt.Errorf("%w; %s", err, undeterminedHint(err))
		}
		fmt.Fprintf(stderr, "nvgo-status: %v\n", err)
		return tool.ExitStatus(err)
	}
	defer lib.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if opts.onlyVisible && len(sel.Devices) == 0 {
		return noVisibleDevice(lib, opts, out, stderr)
	}
	snap, err := lib.Snapshot(ctx, nvgo.WithDevices(sel.Devices...), nvgo.WithFields(opts.readFields()))
	if err != nil {
		return fail(stderr, err)
	}
	for i := range snap.Devices {
		d := &snap.Devices[i]
		d.Processes = opts.filter(d.Processes)
		for j := range d.MIGDevices {
			d.MIGDevices[j].Processes = opts.filter(d.MIGDevices[j].Processes)
		}
	}
	if opts.json {
		return writeJSON(out, stderr, jsonOf(snap, sel.CUDA))
	}
	host := nvgo.ReadHost(ctx)
	r := newRenderer(out, stdout, opts)
	r.cuda = sel.CUDA
	r.render(snap, host)
	return 0
}

// undeterminedHint says how to make CUDA's device list decidable.
func undeterminedHint(err error) string {
	if errors.Is(err, nvgo.ErrOrderUndetermined) {
		return "name the devices by UUID in CUDA_VISIBLE_DEVICES, or set CUDA_DEVICE_ORDER=PCI_BUS_ID if the GPUs differ in model"
	}
	return "name MIG devices, and GPUs with MIG off, by UUID in CUDA_VISIBLE_DEVICES"
}

// noVisibleDevice reports an empty CUDA device list: one line, or with
// --json a document with no devices. (A snapshot of no devices would be a
// snapshot of all of them.)
func noVisibleDevice(lib *nvgo.Library, opts *options, out, stderr io.Writer) int {
	if !opts.json {
		fmt.Fprintf(out, "No device is visible to CUDA under %s\n", nvgo.CurrentCUDAEnv())
		return 0
	}
	snap := &nvgo.Snapshot{Timestamp: time.Now()}
	snap.DriverVersion = nvgo.FromErr(lib.DriverVersion())
	snap.CUDADriverVersion = nvgo.FromErr(lib.CUDADriverVersion())
	snap.NVMLVersion = nvgo.FromErr(lib.NVMLVersion())
	return writeJSON(out, stderr, jsonOf(snap, nil))
}

// writeJSON writes doc to out; a document that cannot be encoded is an
// error (run reports one that cannot be written).
func writeJSON(out, stderr io.Writer, doc jsonSnapshot) int {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		fmt.Fprintf(stderr, "nvgo-status: %v\n", err)
		return tool.ExitFailure
	}
	out.Write(append(b, '\n'))
	return 0
}

// jsonSnapshot is the --json document: the snapshot, with "processes" on
// every GPU and MIG device, [] when none runs and null when they could not
// be read ("processes_error" says why). The snapshot alone omits an empty
// list, which a reader cannot tell from a list that was not collected. A GPU
// with MIG devices lists its processes under them ("mig_devices"), and its
// own list is []. With --only-visible each device has its "cuda_index".
type jsonSnapshot struct {
	*nvgo.Snapshot
	// Fields are the groups read (--fields); the values of the others are
	// null.
	Fields  []string     `json:"fields"`
	Devices []jsonDevice `json:"devices"`
}

type jsonDevice struct {
	CUDAIndex *int `json:"cuda_index,omitempty"`
	nvgo.DeviceSnapshot
	MIGDevices []jsonDevice              `json:"mig_devices,omitempty"`
	Processes  []nvgo.GpuProcessSnapshot `json:"processes"`
}

// jsonOf builds the --json document; cuda, when not nil, holds the CUDA
// index of each device.
func jsonOf(s *nvgo.Snapshot, cuda []int) jsonSnapshot {
	doc := jsonSnapshot{Snapshot: s, Fields: strings.Split(s.Fields.String(), "|"), Devices: make([]jsonDevice, len(s.Devices))}
	for i, d := range s.Devices {
		doc.Devices[i] = jsonDeviceOf(d)
		if cuda != nil {
			doc.Devices[i].CUDAIndex = &cuda[i]
		}
	}
	return doc
}

func jsonDeviceOf(d nvgo.DeviceSnapshot) jsonDevice {
	procs := d.Processes
	if procs == nil && d.ProcessesErr == nil && d.Fields&nvgo.FieldProcesses != 0 {
		procs = []nvgo.GpuProcessSnapshot{} // read, and none: not "unknown"
	}
	jd := jsonDevice{DeviceSnapshot: d, Processes: procs}
	for _, m := range d.MIGDevices {
		jd.MIGDevices = append(jd.MIGDevices, jsonDeviceOf(m))
	}
	return jd
}

// fail reports an error of the library in one line, explaining a missing
// driver; exit status 1.
func fail(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "nvgo-status: %v\n", tool.ExplainNoDriver(err))
	return 1
}

// filter keeps the processes the flags ask for.
func (o *options) filter(ps []nvgo.GpuProcessSnapshot) []nvgo.GpuProcessSnapshot {
	f := tool.ProcessFilter{Compute: o.compute, Graphics: o.graphics, UserSet: o.userSet, User: o.user, PIDs: o.pids}
	return f.Filter(ps)
}
