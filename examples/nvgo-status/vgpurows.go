package main

import (
	"fmt"
	"strconv"

	"github.com/nvgo/nvgo"
)

// vgpuRows prints, under a vGPU host's GPU, a section for its vGPU
// instances, as migRows does for MIG devices: a dashed rule, then two rows
// per instance, as a GPU has two:
//
//	│   0  vGPU 7 H100-20C          │ VM db085366-52f1-a0… │ SM    40%  FB    25% │ UTL: bar of SM
//	│      licensed till 2027-06-30 │  12288MiB / 20.00GiB │ ENC    0%  DEC    0% │ MEM: bar of FB used
//	│      ├─ guest 2817            │ python3              │ SM    28%  MEM   18% │
//	│      └─ guest 2854            │ python3              │ SM    12%  MEM    7% │
//
// The busy guest processes of an instance are listed here, under it, and
// not in the process table: their PIDs are the VM's, not the host's (there
// is no host user, CPU or command line to show, and two VMs can have the
// same PID), and "guest" says so on each row. The process filters (--pid,
// --user, --compute, --graphics) are about host processes and leave them be.
//
// A vGPU host with no instances gets one "No vGPU instances" row, one whose
// instances could not be listed one "vGPU instances unreadable" row ("vgpu_
// instances_error" in --json says why); any other GPU, bare metal included,
// gets no section at all.
func (r *renderer) vgpuRows(d nvgo.DeviceSnapshot) {
	if d.Err != nil || d.Fields&nvgo.FieldVgpuInstances == 0 {
		return
	}
	host := d.VirtualizationMode.Or(nvgo.VirtualizationNone).IsVgpuHost()
	if !host && len(d.VgpuInstances) == 0 && d.VgpuInstancesError == "" {
		return
	}
	b := r.box
	fmt.Fprintln(r.w, r.rule(b.ltee, b.cross, b.rtee, b.dash, r.widths()...))
	switch {
	case d.VgpuInstancesError != "":
		r.labelRow(fmt.Sprintf(" %3s  vGPU instances unreadable", deviceLabel(d)))
	case len(d.VgpuInstances) == 0:
		r.labelRow(fmt.Sprintf(" %3s  No vGPU instances", deviceLabel(d)))
	}
	for _, v := range d.VgpuInstances {
		r.vgpuRow(d, v)
	}
}

// vgpuRow prints one instance, then its busy guest processes.
func (r *renderer) vgpuRow(d nvgo.DeviceSnapshot, v nvgo.VgpuInstanceSnapshot) {
	what := fmt.Sprintf(" %3s  vGPU %d %s", deviceLabel(d), v.ID, short(v.TypeName.Or("")))
	if v.Err != nil {
		// destroyed after it was listed (or its GPU lost): nothing else holds
		r.row(r.vgpuCells(what, "ERROR: "+nvgo.ReasonOf(v.Err).String(), ""), nil)
		return
	}
	utilColor := loadColor(v.SMUtilization, 10, 75)
	memColor := loadColor(v.FramebufferPercent, 10, 80)
	licColor := ""
	if licensed, ok := v.Licensed.Get(); ok && !licensed {
		licColor = yellow
	}

	cells1 := []string{
		r.pad(what, colLeft, false),
		" " + r.pad("VM "+v.VMID.Or("N/A"), colMid-2, false) + " ",
		r.pad(utilPair("SM", v.SMUtilization, "FB", v.FramebufferUtilization), colRight, false),
	}
	cells2 := []string{
		r.pad("      "+license(v), colLeft, false),
		r.pad(fmt.Sprintf("%s / %s ", v.FramebufferUsed, v.FramebufferTotal), colMid, true),
		r.pad(utilPair("ENC", v.EncoderUtilization, "DEC", v.DecoderUtilization), colRight, false),
	}
	colors1 := []string{"", "", utilColor}
	colors2 := []string{licColor, memColor, ""}
	if r.bars {
		cells1 = append(cells1, r.bar(" UTL:", v.SMUtilization))
		cells2 = append(cells2, r.bar(" MEM:", v.FramebufferPercent))
		colors1 = append(colors1, utilColor)
		colors2 = append(colors2, memColor)
	}
	r.row(cells1, colors1)
	r.row(cells2, colors2)

	if v.ProcessesError != "" {
		r.labelRow("      " + r.box.elbow + " guest processes unreadable")
	}
	for i, p := range v.Processes {
		branch := r.box.tee2
		if i == len(v.Processes)-1 {
			branch = r.box.elbow
		}
		util := utilPair("SM", nvgo.Some(p.SMUtilization), "MEM", nvgo.Some(p.MemoryUtilization))
		r.row(r.vgpuCells("      "+branch+" guest "+strconv.Itoa(p.PID), p.Name, util), nil)
	}
}

// vgpuCells makes a row of left text, a middle text (margins kept, cut to
// fit) and a right text, with the bars column empty.
func (r *renderer) vgpuCells(left, mid, right string) []string {
	cells := []string{
		r.pad(left, colLeft, false),
		" " + r.pad(mid, colMid-2, false) + " ",
		r.pad(right, colRight, false),
	}
	if r.bars {
		cells = append(cells, r.pad("", colBars, false))
	}
	return cells
}

// utilPair writes two utilizations aligned as a column: " SM    45%  FB    12%".
func utilPair(a string, x nvgo.Value[nvgo.Percent], b string, y nvgo.Value[nvgo.Percent]) string {
	return fmt.Sprintf(" %-3s %5s  %-3s %5s", a, x, b, y)
}

// license says whether the instance is licensed, and until when if the
// driver gave a date: "licensed till 2026-01-31", "unlicensed
// (restricted)", "license N/A".
func license(v nvgo.VgpuInstanceSnapshot) string {
	licensed, ok := v.Licensed.Get()
	switch {
	case !ok:
		return "license N/A"
	case licensed:
		if t, ok := v.LicenseExpiry.Get(); ok {
			return "licensed till " + t.UTC().Format("2006-01-02")
		}
		if v.LicensePermanent.Or(false) {
			return "licensed (permanent)"
		}
		return "licensed"
	}
	switch s := v.LicenseState.Or(nvgo.LicenseUnknown); s {
	case nvgo.LicenseUnlicensedRestricted, nvgo.LicenseUnlicensedUnrestricted:
		return s.String() // "unlicensed (restricted)"
	}
	return "unlicensed"
}

// guestProcesses counts the busy guest processes the vGPU sections list.
func guestProcesses(s *nvgo.Snapshot) int {
	n := 0
	for _, d := range s.Devices {
		for _, v := range d.VgpuInstances {
			n += len(v.Processes)
		}
	}
	return n
}
