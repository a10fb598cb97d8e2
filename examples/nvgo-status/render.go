package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
)

// Column widths of the device table, as nvidia-smi and nvitop lay it out.
const (
	colLeft  = 31
	colMid   = 22
	colRight = 22
	colBars  = 42
)

type renderer struct {
	w     io.Writer
	color bool
	ascii bool
	bars  bool
	box   boxChars
	// cuda holds the CUDA index of each device of the snapshot, with
	// --only-visible; nil otherwise.
	cuda []int
}

type boxChars struct {
	h, v, hh                        string
	tl, tr, bl, br, tee, cross, bot string
	thinTee                         string
	ltee, rtee, hl, hr, hcross      string
	full                            string
	partial                         []string
	ellipsis                        string // ends a cut text
	dash                            string // rule between a GPU and its MIG devices or vGPUs
	arrow                           string // "cuda:0 → GPU 3"
	tee2, elbow                     string // before a vGPU's guest processes, the last
}

var unicodeBox = boxChars{
	h: "─", v: "│", hh: "═",
	tl: "╒", tr: "╕", bl: "╘", br: "╛", tee: "╤", cross: "┼", bot: "╧", thinTee: "┬",
	ltee: "├", rtee: "┤", hl: "╞", hr: "╡", hcross: "╪",
	full: "█", partial: []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"},
	ellipsis: "…",
	dash:     "╌", arrow: "→",
	tee2: "├─", elbow: "└─",
}

var asciiBox = boxChars{
	h: "-", v: "|", hh: "=",
	tl: "+", tr: "+", bl: "+", br: "+", tee: "+", cross: "+", bot: "+", thinTee: "+",
	ltee: "+", rtee: "+", hl: "+", hr: "+", hcross: "+",
	full: "#", partial: []string{""},
	ellipsis: "...",
	dash:     "-", arrow: "->",
	tee2: "|-", elbow: "`-",
}

// newRenderer returns a renderer that writes to w, in colour and with bars
// as stdout, where w goes, allows: a terminal, and how wide.
func newRenderer(w, stdout io.Writer, o *options) *renderer {
	r := &renderer{w: w, ascii: o.ascii, box: unicodeBox}
	if o.ascii {
		r.box = asciiBox
	}
	f, isFile := stdout.(*os.File)
	tty := isFile && isTerminal(f)
	r.color = tty && !o.noColor
	width := terminalWidth(f, tty)
	r.bars = width >= colLeft+colMid+colRight+colBars+5
	return r
}

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	return err == nil
}

func terminalWidth(f *os.File, tty bool) int {
	if c, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && c > 0 {
		return c
	}
	if tty {
		if ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
			return int(ws.Col)
		}
	}
	return 80
}

// ANSI colours by load, with nvitop's default thresholds.
const (
	green  = "32"
	yellow = "33"
	red    = "31"
)

func loadColor(p nvgo.Value[nvgo.Percent], light, heavy float64) string {
	v, ok := p.Get()
	switch {
	case !ok:
		return ""
	case float64(v) < light:
		return green
	case float64(v) < heavy:
		return yellow
	}
	return red
}

func (r *renderer) paint(s, color string) string {
	if !r.color || color == "" {
		return s
	}
	return "\x1b[" + color + "m" + s + "\x1b[0m"
}

// pad fits s into width display columns, left- or right-aligned, cutting a
// text too long with the renderer's ellipsis.
func (r *renderer) pad(s string, width int, right bool) string {
	return tool.Fit(s, width, right, r.box.ellipsis)
}

func (r *renderer) rule(left, mid, right, fill string, widths ...int) string {
	parts := make([]string, len(widths))
	for i, w := range widths {
		parts[i] = strings.Repeat(fill, w)
	}
	return left + strings.Join(parts, mid) + right
}

func (r *renderer) widths() []int {
	w := []int{colLeft, colMid, colRight}
	if r.bars {
		w = append(w, colBars)
	}
	return w
}

func (r *renderer) render(s *nvgo.Snapshot, host nvgo.HostStats) {
	b := r.box
	ws := r.widths()
	total := len(ws) - 1
	for _, w := range ws {
		total += w
	}
	fmt.Fprintln(r.w, s.Timestamp.Format(time.ANSIC))
	fmt.Fprintln(r.w, b.tl+strings.Repeat(b.hh, total)+b.tr)
	title := fmt.Sprintf(" nvgo-status   Driver Version: %s   CUDA Driver Version: %s", s.DriverVersion, s.CUDADriverVersion)
	fmt.Fprintln(r.w, b.v+r.pad(title, total, false)+b.v)
	fmt.Fprintln(r.w, r.rule(b.ltee, b.thinTee, b.rtee, b.h, ws...))
	head1 := []string{" GPU  Name        Persistence-M", " Bus-Id        Disp.A ", " Volatile Uncorr. ECC "}
	head2 := []string{" Fan  Temp  Perf  Pwr:Usage/Cap", "         Memory-Usage ", " GPU-Util  Compute M. "}
	if r.bars {
		head1 = append(head1, r.pad(" MEM:", colBars, false))
		head2 = append(head2, r.pad(" UTL:", colBars, false))
	}
	r.row(head1, nil)
	r.row(head2, nil)
	fmt.Fprintln(r.w, r.rule(b.hl, b.hcross, b.hr, b.hh, ws...))
	for i, d := range s.Devices {
		if r.cuda != nil {
			r.cudaLabel(r.cuda[i], d)
		}
		if !d.MIGIndex.IsNA() {
			r.migRow(d) // --only-visible shows a MIG device as itself
		} else {
			r.device(d)
			r.migRows(d)
			r.vgpuRows(d)
		}
		if i < len(s.Devices)-1 {
			fmt.Fprintln(r.w, r.rule(b.ltee, b.cross, b.rtee, b.h, ws...))
		}
	}
	if len(s.Devices) == 0 {
		fmt.Fprintln(r.w, b.v+r.pad("  No visible devices found", total, false)+b.v)
	}
	fmt.Fprintln(r.w, r.rule(b.bl, b.bot, b.br, b.hh, ws...))
	r.hostLine(host)
	fmt.Fprintln(r.w)
	r.processes(s)
}

// row prints cells separated by vertical bars; colors paints cell i.
func (r *renderer) row(cells []string, colors []string) {
	var sb strings.Builder
	sb.WriteString(r.box.v)
	for i, c := range cells {
		if i < len(colors) {
			c = r.paint(c, colors[i])
		}
		sb.WriteString(c)
		sb.WriteString(r.box.v)
	}
	fmt.Fprintln(r.w, sb.String())
}

func short(name string) string {
	return strings.TrimPrefix(strings.TrimPrefix(name, "NVIDIA "), "GeForce ")
}

func (r *renderer) device(d nvgo.DeviceSnapshot) {
	memColor := loadColor(d.MemoryPercent, 10, 80)
	utilColor := loadColor(d.GPUUtilization, 10, 75)
	name := short(d.Name.Or("N/A"))
	if d.Err != nil {
		name = "ERROR: " + nvgo.ReasonOf(d.Err).String()
	}
	l1 := fmt.Sprintf(" %3d  %s %4s ", d.Index, r.pad(name, 18, false), d.PersistenceMode)
	bus := d.BusID.Or("N/A")
	m1 := fmt.Sprintf(" %-16s %3s ", bus, d.DisplayActive)
	// The GPU's own count, MIG mode on or off, as nvidia-smi shows it
	// (the MIG rows below say that MIG is on).
	r1 := r.pad(d.TotalVolatileUncorrectedECCErrors.String()+" ", colRight, true)
	temp := d.Temperature.String()
	l2 := fmt.Sprintf(" %3s %5s  %4s %12s ", fanString(d.FanSpeed), temp, d.PerformanceState, nvgo.PowerStatus(d.PowerUsage, d.PowerLimit))
	mem := memoryUsage(d)
	m2 := r.pad(mem+" ", colMid, true)
	r2 := fmt.Sprintf(" %7s %12s ", d.GPUUtilization, d.ComputeMode)
	cells1 := []string{r.pad(l1, colLeft, false), r.pad(m1, colMid, false), r1}
	cells2 := []string{r.pad(l2, colLeft, false), m2, r.pad(r2, colRight, false)}
	colors1 := []string{"", "", ""}
	colors2 := []string{"", memColor, utilColor}
	if r.bars {
		cells1 = append(cells1, r.bar(" MEM:", d.MemoryPercent))
		cells2 = append(cells2, r.bar(" UTL:", d.GPUUtilization))
		colors1 = append(colors1, memColor)
		colors2 = append(colors2, utilColor)
	}
	r.row(cells1, colors1)
	r.row(cells2, colors2)
}

func fanString(v nvgo.Value[nvgo.Percent]) string {
	if p, ok := v.Get(); ok {
		return fmt.Sprintf("%d%%", int(p))
	}
	return "N/A"
}

func memoryUsage(d nvgo.DeviceSnapshot) string {
	if d.UnifiedMemory.Or(false) {
		return "Unified Memory"
	}
	return fmt.Sprintf("%s / %s", d.MemoryUsed, d.MemoryTotal)
}

// bar draws "MEM: ████▍ 12.3%" in the bars column.
func (r *renderer) bar(label string, v nvgo.Value[nvgo.Percent]) string {
	text := v.String()
	width := colBars - len(label) - len(text) - 3
	p, ok := v.Get()
	var sb strings.Builder
	sb.WriteString(label + " ")
	if ok {
		cells := float64(width) * min(float64(p), 100) / 100
		full := int(cells)
		sb.WriteString(strings.Repeat(r.box.full, full))
		drawn := full
		if frac := int((cells - float64(full)) * float64(len(r.box.partial))); frac > 0 && len(r.box.partial) > 1 && full < width {
			sb.WriteString(r.box.partial[frac])
			drawn++
		}
		sb.WriteString(strings.Repeat(" ", width-drawn))
	} else {
		sb.WriteString(strings.Repeat(" ", width))
	}
	sb.WriteString(" " + text + " ")
	return r.pad(sb.String(), colBars, false)
}

func (r *renderer) hostLine(h nvgo.HostStats) {
	load := "N/A"
	if l1, ok := h.Load1.Get(); ok {
		load = fmt.Sprintf("%.2f %.2f %.2f", l1, h.Load5.Or(0), h.Load15.Or(0))
	}
	fmt.Fprintf(r.w, "[ CPU: %s ]  ( Load Average: %s )\n", r.paint(h.CPUPercent.String(), loadColor(h.CPUPercent, 10, 80)), load)
	fmt.Fprintf(r.w, "[ MEM: %s of %s ]  [ SWP: %s ]\n", r.paint(h.MemoryPercent.String(), loadColor(h.MemoryPercent, 10, 80)), h.MemoryTotal, h.SwapPercent)
}

func (r *renderer) processes(s *nvgo.Snapshot) {
	b := r.box
	total := colLeft + colMid + colRight + 2
	if r.bars {
		total += colBars + 1
	}
	fmt.Fprintln(r.w, b.tl+strings.Repeat(b.hh, total)+b.tr)
	fmt.Fprintln(r.w, b.v+r.pad(" Processes:", total, false)+b.v)
	head := fmt.Sprintf(" GPU %7s %-4s %-10s %8s %4s %5s %5s %8s  %s", "PID", "TYPE", "USER", "GPU-MEM", "%SM", "%CPU", "%MEM", "TIME", "COMMAND")
	fmt.Fprintln(r.w, b.v+r.pad(head, total, false)+b.v)
	fmt.Fprintln(r.w, b.hl+strings.Repeat(b.hh, total)+b.hr)
	n := 0
	for _, d := range s.Devices {
		n += r.processesOf(d, total)
		for _, m := range d.MIGDevices {
			n += r.processesOf(m, total)
		}
	}
	if n == 0 {
		none := "  No running processes found"
		if guestProcesses(s) > 0 {
			// a vGPU host runs none itself; its VMs' are under their vGPU
			none = "  No host processes found (guest processes are listed under their vGPU)"
		}
		fmt.Fprintln(r.w, b.v+r.pad(none, total, false)+b.v)
	}
	fmt.Fprintln(r.w, b.bl+strings.Repeat(b.hh, total)+b.br)
}

// processesOf prints the processes of one GPU or MIG device, labelled "0"
// or "0:1" (GPU index:MIG index), and returns how many it printed.
func (r *renderer) processesOf(d nvgo.DeviceSnapshot, total int) int {
	b := r.box
	gpu := deviceLabel(d)
	if d.ProcessesErr != nil {
		line := fmt.Sprintf(" %3s  processes: %s", gpu, nvgo.ReasonOf(d.ProcessesErr))
		fmt.Fprintln(r.w, b.v+r.pad(line, total, false)+b.v)
		return 0
	}
	for _, p := range d.Processes {
		cmd := p.Command.Or("")
		if p.Command.IsNA() {
			cmd = unreadable(p.Command.Reason())
		}
		line := fmt.Sprintf(" %3s %7d %-4s %s %8s %4s %5s %5s %8s  %s",
			gpu, p.PID, p.Type, r.pad(p.Username.Or("N/A"), 10, false), p.GPUMemory,
			p.GPUSMUtilization, pctNum(p.CPUPercent), pctNum(p.HostMemoryPercent), duration(p.RunningTime), cmd)
		fmt.Fprintln(r.w, b.v+r.pad(line, total, false)+b.v)
	}
	return len(d.Processes)
}

// deviceLabel names a device as the process table does: "3" for GPU 3,
// "0:1" for MIG device 1 of GPU 0, as nvitop writes it.
func deviceLabel(d nvgo.DeviceSnapshot) string {
	if mig, ok := d.MIGIndex.Get(); ok {
		return fmt.Sprintf("%d:%d", d.Index, mig)
	}
	return strconv.Itoa(d.Index)
}

// unreadable says, as nvitop does, why a process has no command line.
func unreadable(r nvgo.Reason) string {
	switch r {
	case nvgo.ProcessGone:
		return "No Such Process"
	case nvgo.NoPermission:
		return "No Permissions"
	case nvgo.Zombie:
		return "Zombie Process"
	case nvgo.OtherPIDNamespace:
		return "Not In This PID Namespace (NVML gives host PIDs)"
	}
	return "N/A"
}

func pctNum(v nvgo.Value[nvgo.Percent]) string {
	if p, ok := v.Get(); ok {
		return strconv.FormatFloat(float64(p), 'f', 1, 64)
	}
	return "N/A"
}

func duration(v nvgo.Value[time.Duration]) string {
	if d, ok := v.Get(); ok {
		return nvgo.HumanDuration(d)
	}
	return "N/A"
}
