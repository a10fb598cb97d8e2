package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nvgo/nvgo"
)

// Widths of the device table, as nvidia-smi and nvitop lay it out.
const (
	colLeft  = 31
	colMid   = 22
	colRight = 22
	boxWidth = colLeft + colMid + colRight + 4 // with the borders
	// fullWidth is the narrowest terminal that gets the full layout (bars
	// and history beside the device table) in auto mode.
	fullWidth = boxWidth + 41
)

func (m *model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "nvgo-monitor"
	return v
}

// render draws the current screen, exactly m.height lines of at most
// m.width cells.
func (m *model) render() string {
	var lines []string
	switch m.screen {
	case screenTree:
		lines = m.viewTree()
	case screenMetrics:
		lines = m.viewMetrics()
	case screenEnv:
		lines = m.viewEnv()
	case screenHelp:
		lines = m.viewHelp()
	case screenDevice:
		lines = m.viewDevice()
	default:
		lines = m.viewMain()
	}
	if len(lines) > m.height {
		lines = lines[:m.height]
	}
	for len(lines) < m.height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// minTableRows is how many process rows the full layout must leave.
const minTableRows = 5

// full reports whether the full layout is asked for, or in auto mode fits:
// wide enough for the bars, and tall enough to leave the process table
// minTableRows rows.
func (m *model) full() bool {
	switch m.opts.mode {
	case "full":
		return true
	case "compact":
		return false
	}
	if m.width < fullWidth {
		return false
	}
	need := 5 + 1 + 2 + 3 + minTableRows + 1 // device table frame, title, host, table header, rows, status
	for i, d := range m.frame.devices {
		need += 2 + len(d.migs) + len(d.snap.VgpuInstances)
		if i > 0 {
			need++
		}
	}
	return m.height >= need
}

// line fits plain text to the width.
func (m *model) line(s string) string { return m.th.fit(s, m.width) }

// titleLine is the first line of every screen: the monitor, the screen
// (what), the driver, the time and what the figures are. Where it does not
// fit, the separators narrow, the date goes, then the driver, then the
// time; what the figures are ("means over 1s") goes last.
func (m *model) titleLine(what string) string {
	f := &m.frame
	var driver []string
	if f.driver != "" {
		driver = []string{"Driver " + f.driver, "CUDA " + f.cuda}
	}
	var date, clock string
	if !f.at.IsZero() {
		date, clock = f.at.Format("2006-01-02 15:04:05"), f.at.Format("15:04:05")
	}
	means := ""
	if f.interval > 0 {
		means = "means over " + f.interval.Round(10*time.Millisecond).String()
	} else if m.frames > 0 {
		means = "first sample"
	}
	wide, narrow := "  "+m.th.v+"  ", " "+m.th.v+" "
	layouts := []struct {
		sep, stamp string
		driver     bool
	}{{wide, date, true}, {narrow, date, true}, {narrow, clock, true}, {narrow, clock, false}, {narrow, "", false}}
	var text string
	for _, l := range layouts {
		parts := []string{"nvgo-monitor", what}
		if l.driver {
			parts = append(parts, driver...)
		}
		parts = slices.DeleteFunc(append(parts, l.stamp, means), func(s string) bool { return s == "" })
		text = " " + strings.Join(parts, l.sep)
		if displayWidth(text) <= m.width {
			return m.th.bold(text)
		}
	}
	// Narrower still: the screen's name is cut, so that what the figures
	// are stays in view as long as it can.
	if what != "" && means != "" {
		room := m.width - displayWidth(" nvgo-monitor"+narrow+narrow+means)
		if room >= 8 {
			text = " nvgo-monitor" + narrow + m.th.fit(what, room) + narrow + means
		}
	}
	return m.th.bold(m.line(text))
}

// statusLine is the last line: a confirmation, a message, or the keys.
func (m *model) statusLine() string {
	if c := m.confirm; c != nil {
		var names []string
		for _, p := range c.targets {
			names = append(names, fmt.Sprintf("%d (%s)", p.key.pid, p.snap.Name.Or("?")))
		}
		q := fmt.Sprintf(" Send %s to %s? [y/N]", signalName(c.sig), strings.Join(names, ", "))
		return m.th.paint(m.th.warn, m.line(q))
	}
	var state []string
	if m.sortBy != sortNatural {
		arrow := map[bool]string{false: "asc", true: "desc"}[m.reverse]
		state = append(state, "sort "+sortNames[m.sortBy]+" "+arrow)
	} else if m.reverse {
		state = append(state, "reversed")
	}
	if m.computeOnly {
		state = append(state, "compute only")
	}
	if m.userFilter != "" {
		state = append(state, "user "+m.userFilter)
	}
	if n := len(m.tags); n > 0 {
		state = append(state, fmt.Sprintf("%d tagged", n))
	}
	left := m.message
	if left == "" {
		left = hintLines[m.screen]
	}
	right := strings.Join(state, "  ")
	if f := m.frame.err; f != nil {
		right = "error: " + f.Error()
	}
	w := m.width - displayWidth(right) - 2
	if w < 10 {
		return m.th.faint(m.line(" " + left))
	}
	return m.th.faint(" "+m.th.fit(left, w)) + " " + m.th.paint(m.th.accent, right)
}

// layout works out where the process table goes: below the title, the
// devices and the host, taking the rest less its header and the status
// line.
func (m *model) layout() {
	m.tableTop = 1 + len(m.deviceLines()) + len(m.hostLines()) + 3
	m.tableRows = max(m.height-m.tableTop-1, 1)
	m.clampScroll()
}

// viewMain is the main screen: devices, host, processes.
func (m *model) viewMain() []string {
	lines := []string{m.titleLine("")}
	lines = append(lines, m.deviceLines()...)
	lines = append(lines, m.hostLines()...)
	m.tableTop = len(lines) + 3
	m.tableRows = max(m.height-m.tableTop-1, 1)
	m.clampScroll()
	lines = append(lines, m.processLines()...)
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	if len(lines) > m.height-1 {
		lines = lines[:max(m.height-1, 0)]
	}
	return append(lines, m.statusLine())
}

// deviceLines is the device table, drawn once per frame and terminal size:
// layout needs its height when a frame arrives, and the screen its lines.
func (m *model) deviceLines() []string {
	key := deviceLinesKey{frames: m.frames, width: m.width, height: m.height, mode: m.opts.mode}
	if m.devLines == nil || m.devKey != key {
		m.devLines, m.devKey = m.drawDeviceLines(), key
	}
	return m.devLines
}

// deviceLinesKey is what the device table depends on.
type deviceLinesKey struct {
	frames, width, height int
	mode                  string
}

// drawDeviceLines draws the device table, with bars and history beside it
// in the full layout.
func (m *model) drawDeviceLines() []string {
	if !m.full() {
		return m.compactDeviceLines()
	}
	th := &m.th
	full := true
	side := m.width - boxWidth - 1
	if !full {
		side = 0
	}
	rule := func(l, fill, mid, r string) string {
		return l + strings.Repeat(fill, colLeft) + mid + strings.Repeat(fill, colMid) + mid + strings.Repeat(fill, colRight) + r
	}
	row := func(a, b, c string) string {
		return th.v + th.fit(a, colLeft) + th.v + th.fit(b, colMid) + th.v + th.fit(c, colRight) + th.v
	}
	var out []string
	add := func(s string, beside string) {
		if side > 0 {
			s += " " + beside
		}
		out = append(out, m.cut(s))
	}
	add(rule(th.tl, th.hh, th.hh, th.tr), "")
	add(row(" GPU  Name        Persistence-M", " Bus-Id        Disp.A", " Volatile Uncorr. ECC"), "")
	add(row(" Fan  Temp  Perf  Pwr:Usage/Cap", "         Memory-Usage", " GPU-Util  Compute M."), "")
	add(rule(th.hl, th.hh, th.hcross, th.hr), "")
	if len(m.frame.devices) == 0 {
		msg := "No devices found."
		if m.frames == 0 {
			msg = "Reading the GPUs..."
		}
		add(th.v+th.fit(" "+msg, boxWidth-2)+th.v, "")
	}
	for i := range m.frame.devices {
		d := &m.frame.devices[i]
		if i > 0 {
			add(rule(th.ltee, th.h, th.cross, th.rtee), "")
		}
		out = append(out, m.gpuLines(d, side)...)
		for j := range d.migs {
			out = append(out, m.migLines(&d.migs[j], side)...)
		}
		for _, v := range d.snap.VgpuInstances {
			add(th.v+th.fit(fmt.Sprintf("   vGPU %d  %s  VM %s  FB %s / %s  SM %s", v.ID, v.TypeName.Or("?"), v.VMID.Or("?"),
				v.FramebufferUsed, v.FramebufferTotal, v.SMUtilization), boxWidth-2)+th.v, "")
		}
	}
	add(rule(th.bl, th.hh, th.bot, th.br), "")
	return out
}

// compactDeviceLines draw one line per device, for small terminals.
func (m *model) compactDeviceLines() []string {
	th := &m.th
	w := m.width // as wide as the process table below
	rule := func(l, fill, r string) string { return l + strings.Repeat(fill, max(w-2, 0)) + r }
	inner := max(w-2, 0)
	out := []string{m.cut(rule(th.tl, th.hh, th.tr)),
		m.cut(th.v + th.bold(th.fit(" GPU  Name             Temp  Perf   Power    Memory-Usage       Util", inner)) + th.v),
		m.cut(rule(th.hl, th.hh, th.hr))}
	if len(m.frame.devices) == 0 {
		out = append(out, m.cut(th.v+th.fit(" No devices found.", inner)+th.v))
	}
	var add func(d *deviceRow, indent string)
	add = func(d *deviceRow, indent string) {
		s := &d.snap
		var text string
		switch {
		case s.Err != nil:
			text = fmt.Sprintf(" %s%3s  %s: %v", indent, d.label(), s.Name.Or("GPU"), s.Err)
			out = append(out, m.cut(th.v+th.paint(th.bad, th.fit(text, inner))+th.v))
			return
		case !s.MIGIndex.IsNA():
			text = fmt.Sprintf(" %s%-5s MIG %-12s %28s", indent, d.label(), s.MIGProfile, memoryUsage(s))
		default:
			name := strings.TrimPrefix(s.Name.Or("N/A"), "NVIDIA ")
			text = fmt.Sprintf(" %3s  %s %s  %s %s  %s %s", d.label(), th.fit(name, 15), th.right(s.Temperature.String(), 4),
				th.right(s.PerformanceState.String(), 4), th.right(s.PowerUsage.String(), 6),
				th.right(memoryUsage(s), 20), th.right(d.gpuUtil.String(), 6))
		}
		out = append(out, m.cut(th.v+th.fit(text, inner)+th.v))
		for i := range d.migs {
			add(&d.migs[i], "  ")
		}
	}
	for i := range m.frame.devices {
		add(&m.frame.devices[i], "")
	}
	return append(out, m.cut(rule(th.bl, th.hh, th.br)))
}

// cut fits a drawn line (which may carry colours) to the width.
func (m *model) cut(s string) string {
	if displayWidth(s) <= m.width {
		return s
	}
	// Drawn lines are plain when they are too wide to matter: cut runes.
	return m.th.fit(stripANSI(s), m.width)
}

// gpuLines are a GPU's two lines (or one saying it is lost).
func (m *model) gpuLines(d *deviceRow, side int) []string {
	th := &m.th
	s := &d.snap
	label := fmt.Sprintf("%3d", s.Index)
	if d.cudaIndex >= 0 {
		label = fmt.Sprintf("cuda:%d=%d", d.cudaIndex, s.Index)
	}
	if s.Err != nil {
		text := fmt.Sprintf(" %s  %s: %v", label, s.Name.Or("GPU"), s.Err)
		return []string{m.cut(th.v + th.paint(th.bad, th.fit(text, boxWidth-2)) + th.v)}
	}
	name := strings.TrimPrefix(s.Name.Or("N/A"), "NVIDIA ")
	a1 := fmt.Sprintf(" %s  %s %s", label, th.fit(name, colLeft-len(label)-9), th.right(s.PersistenceMode.String(), 4))
	b1 := fmt.Sprintf(" %s %s", th.fit(s.BusID.Or("N/A"), 16), th.right(s.DisplayActive.String(), 3))
	c1 := th.right(s.TotalVolatileUncorrectedECCErrors.String(), colRight-1) + " "
	power := nvgo.PowerStatus(s.PowerUsage, s.PowerLimit)
	a2 := fmt.Sprintf(" %s  %s  %s %s", th.right(s.FanSpeed.String(), 3), th.right(s.Temperature.String(), 4),
		th.right(s.PerformanceState.String(), 4), th.right(power, 13))
	mem := memoryUsage(s)
	b2 := th.right(mem, colMid-1) + " "
	c2 := fmt.Sprintf(" %s %s", th.right(d.gpuUtil.String(), 7), th.right(s.ComputeMode.String(), 12))
	l1 := th.v + th.fit(a1, colLeft) + th.v + th.fit(b1, colMid) + th.v + th.fit(c1, colRight) + th.v
	l2 := th.v + th.fit(a2, colLeft) + th.v + th.fit(b2, colMid) + th.v + th.paint(th.load(pctOf(d.gpuUtil)), th.fit(c2, colRight)) + th.v
	if side > 0 {
		l1 += " " + m.sideBar("MEM", s.MemoryPercent, m.devHistory(s.UUID.Or(""), false), side)
		l2 += " " + m.sideBar("UTL", d.gpuUtil, m.devHistory(s.UUID.Or(""), true), side)
	}
	return []string{m.cut(l1), m.cut(l2)}
}

// migLines is a MIG device's line.
func (m *model) migLines(d *deviceRow, side int) []string {
	th := &m.th
	s := &d.snap
	text := fmt.Sprintf(" %s  MIG %s  %s", th.right(d.label(), 5), s.MIGProfile, memoryUsage(s))
	l := th.v + th.fit(text, boxWidth-2) + th.v
	if side > 0 {
		l += " " + m.sideBar("MEM", s.MemoryPercent, m.devHistory(s.UUID.Or(""), false), side)
	}
	return []string{m.cut(l)}
}

func memoryUsage(s *nvgo.DeviceSnapshot) string {
	if s.UnifiedMemory.Or(false) {
		return "unified memory"
	}
	return s.MemoryUsed.String() + " / " + s.MemoryTotal.String()
}

// devHistory returns a device's utilization (gpu) or memory history.
func (m *model) devHistory(uuid string, gpu bool) *series {
	h := m.hist.devices[uuid]
	if h == nil {
		return &series{}
	}
	if gpu {
		return &h.gpu
	}
	return &h.mem
}

// sideBar is "MEM: ████▌   45.3% ▁▂▃▅" in width cells: a bar of the
// latest value and the history.
func (m *model) sideBar(name string, v nvgo.Value[nvgo.Percent], hist *series, width int) string {
	th := &m.th
	val := th.right(v.String(), 6)
	barW := max(min(width/2-len(name)-9, 30), 0)
	histW := width - len(name) - 2 - barW - 1 - len(stripANSI(val)) - 1
	out := name + ": " + th.bar(pctOf(v), barW) + " " + th.paint(th.load(pctOf(v)), val)
	if histW > 0 {
		out += " " + th.sparkline(hist.last(histW), 100, histW)
	}
	return out
}

// pctOf is a percentage's value, 0 when N/A.
func pctOf(v nvgo.Value[nvgo.Percent]) float64 { return float64(v.Or(0)) }

// hostLines draw the host's CPU, memory and swap.
func (m *model) hostLines() []string {
	th := &m.th
	h := &m.frame.host
	barW := 20
	cpu := fmt.Sprintf("[ CPU: %s %s ]", th.bar(pctOf(h.CPUPercent), barW), th.right(h.CPUPercent.String(), 6))
	load := fmt.Sprintf("( Load Average: %s %s %s )", fmtLoad(h.Load1), fmtLoad(h.Load5), fmtLoad(h.Load15))
	mem := fmt.Sprintf("[ MEM: %s %s of %s ]", th.bar(pctOf(h.MemoryPercent), barW), th.right(h.MemoryPercent.String(), 6), h.MemoryTotal)
	swap := "[ SWP: " + swapPercent(h).String() + " ]"
	l1, l2 := cpu+"  "+load, mem+"  "+swap
	if !m.full() {
		return []string{m.cut(fmt.Sprintf("[ CPU: %s ]  [ MEM: %s ]  [ SWP: %s ]  %s", h.CPUPercent, h.MemoryPercent, swapPercent(h),
			fmt.Sprintf("Load %s %s %s", fmtLoad(h.Load1), fmtLoad(h.Load5), fmtLoad(h.Load15))))}
	}
	if m.full() {
		rest := m.width - max(displayWidth(l1), displayWidth(l2)) - 2
		if rest > 8 {
			pad1 := strings.Repeat(" ", m.width-rest-1-displayWidth(l1))
			pad2 := strings.Repeat(" ", m.width-rest-1-displayWidth(l2))
			l1 += pad1 + th.sparkline(m.hist.cpu.last(rest), 100, rest)
			l2 += pad2 + th.sparkline(m.hist.mem.last(rest), 100, rest)
		}
	}
	return []string{m.cut(l1), m.cut(l2)}
}

func fmtLoad(v nvgo.Value[float64]) string {
	if x, ok := v.Get(); ok {
		return fmt.Sprintf("%.2f", x)
	}
	return "N/A"
}

func swapPercent(h *nvgo.HostStats) nvgo.Value[nvgo.Percent] {
	total, ok1 := h.SwapTotal.Get()
	used, ok2 := h.SwapUsed.Get()
	if !ok1 || !ok2 || total == 0 {
		return nvgo.Some[nvgo.Percent](0)
	}
	return nvgo.Some(nvgo.Percent(math.Round(float64(used)/float64(total)*1000) / 10))
}

// Process table columns.
const (
	pcolGPU  = 6
	pcolPID  = 8
	pcolUser = 10
	pcolMem  = 9
	pcolSM   = 5
	pcolCPU  = 7
	pcolHMem = 6
	pcolTime = 10
)

// processHeader is the column line, the sorted column marked.
func (m *model) processHeader() string {
	th := &m.th
	mark := func(k sortKey, s string) string {
		if m.sortBy == k {
			return s + map[bool]string{false: "▲", true: "▼"}[m.reverse]
		}
		return s
	}
	if th.ascii {
		mark = func(k sortKey, s string) string {
			if m.sortBy == k {
				return s + map[bool]string{false: "^", true: "v"}[m.reverse]
			}
			return s
		}
	}
	return " " + th.right("GPU", pcolGPU) + th.right(mark(sortPID, "PID"), pcolPID) + " " +
		th.fit(mark(sortUser, "USER"), pcolUser) + th.right(mark(sortGPUMemory, "GPU-MEM"), pcolMem) +
		th.right(mark(sortSM, "%SM"), pcolSM) + th.right(mark(sortCPU, "%CPU"), pcolCPU) +
		th.right(mark(sortHostMemory, "%MEM"), pcolHMem) + th.right(mark(sortTime, "TIME"), pcolTime) + "  " +
		mark(sortCommand, "COMMAND")
}

// processLines draw the process table (its header, the visible rows and
// the bottom rule).
func (m *model) processLines() []string {
	th := &m.th
	w := m.width
	lines := []string{
		m.th.fit(th.tl+strings.Repeat(th.hh, max(w-2, 0))+th.tr, w),
		th.bold(m.line(m.processHeader())),
		m.th.fit(th.hl+strings.Repeat(th.hh, max(w-2, 0))+th.hr, w),
	}
	if len(m.rows) == 0 {
		msg := " No running processes found"
		if len(m.frame.procs) > 0 {
			msg = " No process passes the filters (c, u)"
		}
		return append(lines, m.line(msg))
	}
	end := min(m.offset+m.tableRows, len(m.rows))
	for i := m.offset; i < end; i++ {
		lines = append(lines, m.processRow(i))
	}
	return lines
}

// processRow draws row i of the table.
func (m *model) processRow(i int) string {
	th := &m.th
	p := m.rows[i]
	s := p.snap
	tag := " "
	if m.tags[p.key] {
		tag = "*"
	}
	user := s.Username.Or("N/A")
	cmd := s.Command.Or(s.Name.Or(""))
	if !s.IsRunning {
		cmd = "No Such Process"
	}
	text := tag + th.right(p.device, pcolGPU) + th.right(fmt.Sprint(s.PID), pcolPID) + " " +
		th.fit(user, pcolUser) + th.right(p.mem.String(), pcolMem) + th.right(p.sm.String(), pcolSM) +
		th.right(fmtPct(s.CPUPercent), pcolCPU) + th.right(fmtPct(s.HostMemoryPercent), pcolHMem) +
		th.right(fmtDuration(s.RunningTime), pcolTime) + "  " + cmd
	text = m.line(text)
	switch {
	case i == m.sel:
		return th.reverse(text)
	case !m.mayAct(*p):
		return th.faint(text)
	}
	return text
}

// fmtPct prints a host percentage to a tenth, as nvitop does.
func fmtPct(v nvgo.Value[nvgo.Percent]) string {
	if x, ok := v.Get(); ok {
		return fmt.Sprintf("%.1f", float64(x))
	}
	return "N/A"
}

// fmtDuration prints a running time as nvitop does.
func fmtDuration(v nvgo.Value[time.Duration]) string {
	if d, ok := v.Get(); ok {
		return nvgo.HumanDuration(d)
	}
	return "N/A"
}

// viewTree is the tree screen: the table's processes under their
// ancestors.
func (m *model) viewTree() []string {
	th := &m.th
	lines := []string{m.titleLine("Tree of the GPU processes")}
	lines = append(lines, th.bold(m.line(" "+th.right("PID", pcolPID)+" "+th.fit("USER", pcolUser)+"  COMMAND")))
	body := max(m.height-3, 1)
	// Keep the selected process in view.
	selLine := 0
	for i, l := range m.tree {
		if l.row == m.sel {
			selLine = i
			break
		}
	}
	start := max(min(selLine-body/2, len(m.tree)-body), 0)
	if len(m.tree) == 0 {
		lines = append(lines, m.line(" No running processes found"))
	}
	for i := start; i < min(start+body, len(m.tree)); i++ {
		l := m.tree[i]
		text := m.line(" " + th.right(fmt.Sprint(l.pid), pcolPID) + " " + th.fit(l.user, pcolUser) + "  " + l.prefix + l.text)
		switch {
		case l.row >= 0 && l.row == m.sel:
			text = th.reverse(text)
		case l.row < 0:
			text = th.faint(text)
		}
		lines = append(lines, text)
	}
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return append(lines[:min(len(lines), max(m.height-1, 0))], m.statusLine())
}

// viewMetrics is the selected process's figures over time.
func (m *model) viewMetrics() []string {
	th := &m.th
	p := &m.subject
	title := fmt.Sprintf("Process %d (%s, %s) on GPU %s", p.key.pid, p.snap.Name.Or("?"), p.snap.Username.Or("?"), p.device)
	lines := []string{m.titleLine(title)}
	ph := m.hist.procs[p.key]
	if ph == nil {
		return append(lines, m.line(" No history for this process yet."))
	}
	alive := false
	for _, r := range m.frame.procs {
		if r.key == p.key {
			alive = true
		}
	}
	if !alive {
		lines = append(lines, th.paint(th.warn, m.line(" The process has left the GPU; its history is kept.")))
	}
	charts := []struct {
		name string
		s    *series
		top  float64
		unit func(float64) string
	}{
		{"GPU memory (mean over each interval)", &ph.gpuMem, 0, fmtBytes},
		{"SM utilization (mean over each interval)", &ph.sm, 100, fmtPercentF},
		{"CPU utilization", &ph.cpu, 0, fmtPercentF},
		{"Resident memory (RSS)", &ph.rss, 0, fmtBytes},
	}
	chartH := max((m.height-len(lines)-1)/len(charts)-1, 1)
	for _, c := range charts {
		lines = append(lines, m.chart(c.name, c.s, c.top, c.unit, chartH)...)
	}
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return append(lines[:min(len(lines), max(m.height-1, 0))], m.statusLine())
}

func fmtBytes(v float64) string    { return nvgo.Bytes(v).String() }
func fmtPercentF(v float64) string { return fmt.Sprintf("%.1f%%", v) }

// chart is a title line (latest, mean, maximum) over height rows of
// columns, one column per refresh, newest on the right. top 0 scales to the
// maximum.
func (m *model) chart(name string, s *series, top float64, unit func(float64) string, height int) []string {
	th := &m.th
	last, mean, peak := s.stats()
	show := func(v float64) string {
		if v != v {
			return "N/A"
		}
		return unit(v)
	}
	title := fmt.Sprintf(" %s: now %s  mean %s  max %s", name, show(last), show(mean), show(peak))
	lines := []string{th.bold(m.line(title))}
	if top <= 0 {
		top = peak * 1.1
	}
	width := max(m.width-2, 1)
	vals := s.last(width)
	levels := th.spark
	for row := height - 1; row >= 0; row-- {
		var b strings.Builder
		b.WriteString(" " + strings.Repeat(" ", width-len(vals)))
		for _, v := range vals {
			if v != v || top <= 0 {
				b.WriteString(" ")
				continue
			}
			// How much of this cell the column fills, in levels.
			fill := min(max(v/top*float64(height)-float64(row), 0), 1)
			switch {
			case fill <= 0:
				b.WriteString(" ")
			case fill >= 1:
				b.WriteString(levels[len(levels)-1])
			default:
				b.WriteString(levels[int(fill*float64(len(levels)-1))])
			}
		}
		lines = append(lines, th.paint(th.accent, b.String()))
	}
	return lines
}

// readings are the device readings the device screen lists, in nvgo's
// order.
var readings = nvgo.DeviceMetrics()

// viewDevice is every reading of one device: the metrics nvgo defines, by
// loop, each with its value and what it is.
func (m *model) viewDevice() []string {
	th := &m.th
	d := m.deviceRow(m.device)
	if d == nil {
		lines := []string{m.titleLine("Device"), m.line(" No device to show.")}
		return append(lines, m.statusLine())
	}
	s := &d.snap
	kind := "GPU"
	if !s.MIGIndex.IsNA() {
		kind = "MIG"
	}
	lines := []string{m.titleLine(fmt.Sprintf("%s %s (%s)", kind, m.device, s.Name.Or("?")))}
	if s.Err != nil {
		lines = append(lines, th.paint(th.warn, m.line(" Cannot read the device: "+s.Err.Error())))
	}
	values := make([]string, len(readings))
	nameW, valueW := 0, 0
	for i, r := range readings {
		values[i] = r.Text(s)
		if v := r.Value(s); v.IsNA() && v.Reason() != nvgo.NotReported {
			values[i] += " (" + v.Reason().String() + ")"
		}
		nameW, valueW = max(nameW, len(r.Name)), max(valueW, len(values[i]))
	}
	helpW := max(m.width-nameW-valueW-5, 0)
	var body []string
	for i, r := range readings {
		body = append(body, " "+th.paint(th.accent, th.fit(r.Name, nameW))+"  "+th.fit(values[i], valueW)+"  "+th.fit(r.Help, helpW))
	}
	room := max(m.height-1-len(lines), 0)
	start := min(m.subScroll, max(len(body)-room, 0))
	for _, l := range body[start:] {
		lines = append(lines, m.line(l))
	}
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return append(lines[:min(len(lines), max(m.height-1, 0))], m.statusLine())
}

// viewEnv is the selected process's environment.
func (m *model) viewEnv() []string {
	th := &m.th
	p := &m.subject
	lines := []string{m.titleLine(fmt.Sprintf("Environment of process %d (%s)", p.key.pid, p.snap.Name.Or("?")))}
	if m.envErr != nil {
		text := fmt.Sprintf("Cannot show the environment of process %d: %s.", p.key.pid, reason(m.envErr))
		for _, l := range wrapWords(text, max(m.width-2, 1)) {
			lines = append(lines, th.paint(th.warn, m.line(" "+l)))
		}
	}
	body := max(m.height-2, 1)
	m.subScroll = max(min(m.subScroll, len(m.env)-body), 0)
	for i := m.subScroll; i < min(m.subScroll+body, len(m.env)); i++ {
		k, v, _ := strings.Cut(m.env[i], "=")
		lines = append(lines, " "+th.paint(th.accent, th.fit(k, min(len(k), m.width-2)))+m.th.fit("="+v, max(m.width-2-len(k), 0)))
	}
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return append(lines[:min(len(lines), max(m.height-1, 0))], m.statusLine())
}

// viewHelp lists every key.
func (m *model) viewHelp() []string {
	th := &m.th
	lines := []string{m.titleLine("Help")}
	lines = append(lines, m.line(" Utilization and GPU memory are means over each refresh interval, from the"),
		m.line(" driver's sample buffers (nvgo's accumulator), not one reading per refresh."), "")
	textWidth := max(m.width-18, 20)
	for _, b := range bindings {
		if b.help == "" {
			continue
		}
		for i, text := range wrapWords(b.help, textWidth) {
			key := ""
			if i == 0 {
				key = b.label
			}
			lines = append(lines, " "+th.paint(th.accent, th.fit(key, 16))+" "+th.fit(text, max(m.width-18, 0)))
		}
	}
	body := m.height - 1
	if m.subScroll > 0 && len(lines) > body {
		start := min(m.subScroll, len(lines)-body)
		lines = append(lines[:1], lines[1+start:]...)
	}
	for len(lines) < m.height-1 {
		lines = append(lines, "")
	}
	return append(lines[:min(len(lines), max(m.height-1, 0))], m.statusLine())
}

// wrapWords breaks text at spaces into lines of at most width columns (a
// word wider than width stands alone, to be cut).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case displayWidth(line)+1+displayWidth(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	return append(lines, line)
}

// stripANSI removes SGR escape sequences.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
