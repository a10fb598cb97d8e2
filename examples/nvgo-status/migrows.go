package main

import (
	"fmt"

	"github.com/nvgo/nvgo"
)

// migRows prints, under a GPU with MIG mode on, one row per MIG device, as
// nvidia-smi's "MIG devices" section and nvitop's MIG rows do, or one row
// saying there is none. A dashed rule ties them to their GPU.
func (r *renderer) migRows(d nvgo.DeviceSnapshot) {
	listed := d.Fields&nvgo.FieldMIGDevices != 0
	if d.Err != nil || !listed || !bool(d.MIGMode.Or(false)) && d.MIGDevicesError == "" {
		return
	}
	b := r.box
	fmt.Fprintln(r.w, r.rule(b.ltee, b.cross, b.rtee, b.dash, r.widths()...))
	switch {
	case d.MIGDevicesError != "":
		// the text is in --json's "mig_devices_error"
		r.migNote(d, "MIG devices unreadable")
	case len(d.MIGDevices) == 0:
		r.migNote(d, "No MIG devices")
	}
	for _, m := range d.MIGDevices {
		r.migRow(m)
	}
}

// migRow prints one MIG device in one row: "0:1" (GPU index:MIG index),
// profile, GPU and compute instance IDs, memory, UUID (cut where it does
// not fit; what shows is still a prefix CUDA_VISIBLE_DEVICES accepts) and,
// where bars are shown, a memory bar. Utilization is kept per GPU, not per
// MIG device, so there is no utilization bar.
func (r *renderer) migRow(m nvgo.DeviceSnapshot) {
	memColor := loadColor(m.MemoryPercent, 10, 80)
	what := fmt.Sprintf("MIG %-7s  GI %s CI %s", m.MIGProfile, m.GPUInstanceID, m.ComputeInstanceID)
	if m.Err != nil {
		what = "ERROR: " + nvgo.ReasonOf(m.Err).String()
	}
	cells := []string{
		r.pad(fmt.Sprintf(" %3s  %s", deviceLabel(m), what), colLeft, false),
		r.pad(memoryUsage(m)+" ", colMid, true),
		" " + r.pad(m.UUID.String(), colRight-2, false) + " ",
	}
	colors := []string{"", memColor, ""}
	if r.bars {
		cells = append(cells, r.bar(" MEM:", m.MemoryPercent))
		colors = append(colors, memColor)
	}
	r.row(cells, colors)
}

// migNote prints a row about a GPU's MIG devices as a whole.
func (r *renderer) migNote(d nvgo.DeviceSnapshot, note string) {
	r.labelRow(fmt.Sprintf(" %3s  %s", deviceLabel(d), note))
}

// cudaLabel prints, with --only-visible, the row that names a device as
// CUDA numbers it: "cuda:0 → GPU 3", "cuda:1 → MIG 0:1".
func (r *renderer) cudaLabel(cudaIndex int, d nvgo.DeviceSnapshot) {
	kind := "GPU"
	if !d.MIGIndex.IsNA() {
		kind = "MIG"
	}
	r.labelRow(fmt.Sprintf(" cuda:%d %s %s %s", cudaIndex, r.box.arrow, kind, deviceLabel(d)))
}

// labelRow prints text in the first cell of a row whose other cells are empty.
func (r *renderer) labelRow(text string) {
	ws := r.widths()
	cells := make([]string, len(ws))
	for i, w := range ws {
		cells[i] = r.pad("", w, false)
	}
	cells[0] = r.pad(text, ws[0], false)
	r.row(cells, nil)
}
