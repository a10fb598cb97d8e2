package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"

	tea "charm.land/bubbletea/v2"

	"github.com/nvgo/nvgo"
)

// screen is what the monitor shows.
type screen int

const (
	screenMain screen = iota
	screenTree
	screenMetrics
	screenEnv
	screenHelp
	screenDevice
)

// sortKey orders the process table.
type sortKey int

const (
	sortNatural sortKey = iota // by device, then PID
	sortPID
	sortUser
	sortGPUMemory
	sortSM
	sortCPU
	sortHostMemory
	sortTime
	sortCommand
	numSortKeys
)

var sortNames = [numSortKeys]string{"natural", "PID", "USER", "GPU-MEM", "%SM", "%CPU", "%MEM", "TIME", "COMMAND"}

// sortLetters are the letters that follow 'o'.
var sortLetters = map[string]sortKey{
	"n": sortNatural, "p": sortPID, "u": sortUser, "g": sortGPUMemory, "s": sortSM,
	"c": sortCPU, "m": sortHostMemory, "t": sortTime, "a": sortCommand,
}

// signaller sends signals to host processes, checking their identity.
type signaller interface {
	// signal sends sig to the process k names, refusing when its PID now
	// holds another process.
	signal(k procKey, sig syscall.Signal) error
	// host returns the process k names (for its tree), or an error when it
	// is gone.
	host(k procKey) (*nvgo.HostProcess, error)
	// environ returns the environment of the process k names.
	environ(k procKey) ([]string, error)
}

// confirmation is a signal waiting for y or n.
type confirmation struct {
	sig     syscall.Signal
	targets []procRow
}

// frameMsg delivers a frame.
type frameMsg frame

// model is the monitor's state.
type model struct {
	ctx  context.Context
	src  frameSource
	sig  signaller
	opts *options
	th   theme

	width, height int
	screen        screen
	// backTo holds the screens to go back to, the latest last: each screen
	// opened from another returns to it (q, Esc), at most maxBack deep.
	backTo []screen

	frame  frame
	frames int
	hist   *history

	rows   []*procRow // the process table, filtered and sorted: rows of frame.procs
	sel    int        // the selected row
	selKey procKey    // the selected process, kept across refreshes
	offset int        // the table's first visible row
	tags   map[procKey]bool

	sortBy      sortKey
	reverse     bool
	awaitSort   bool // 'o' was pressed
	computeOnly bool
	userFilter  string // "" shows everyone

	confirm *confirmation
	message string

	// The sub-screens' subject and contents.
	subject   procRow
	device    string // the device screen's device, by label ("0", "0:1")
	tree      []treeLine
	env       []string
	envErr    error
	subScroll int

	// Layout of the latest view, for the mouse.
	tableTop, tableRows int

	root bool   // signals may go to anyone's processes
	me   string // the current user's name
	// devLines caches the device table drawn for devKey (deviceLines).
	devLines []string
	devKey   deviceLinesKey
}

func newModel(ctx context.Context, src frameSource, sig signaller, o *options) *model {
	m := &model{ctx: ctx, src: src, sig: sig, opts: o, th: newTheme(o), hist: newHistory(),
		tags: map[procKey]bool{}, width: 80, height: 24, root: os.Geteuid() == 0}
	if u, err := user.Current(); err == nil {
		m.me = u.Username
	}
	return m
}

// nextFrame reads the next frame in a goroutine of Bubble Tea's.
func (m *model) nextFrame() tea.Cmd {
	src, ctx := m.src, m.ctx
	return func() tea.Msg { return frameMsg(src.next(ctx)) }
}

func (m *model) Init() tea.Cmd { return m.nextFrame() }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case frameMsg:
		if m.ctx.Err() != nil {
			return m, tea.Quit
		}
		m.setFrame(frame(msg))
		return m, m.nextFrame()
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
		m.layout()
	case tea.KeyPressMsg:
		return m, m.key(msg.String())
	case tea.MouseClickMsg:
		m.click(msg.Mouse())
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.move(-3)
		case tea.MouseWheelDown:
			m.move(3)
		}
	}
	return m, nil
}

// setFrame takes a new frame: history, table and the sub-screens' data.
func (m *model) setFrame(f frame) {
	m.frame = f
	m.frames++
	m.hist.add(&m.frame)
	m.layout()
	m.rebuildRows()
	if m.screen == screenTree {
		m.buildTree()
	}
	if len(m.tags) > 0 {
		live := make(map[procKey]bool, len(m.frame.procs))
		for i := range m.frame.procs {
			live[m.frame.procs[i].key] = true
		}
		for k := range m.tags {
			if !live[k] {
				delete(m.tags, k) // a process gone is untagged
			}
		}
	}
}

// rebuildRows filters and sorts the frame's processes, keeping the
// selection on the same process when it is still there.
func (m *model) rebuildRows() {
	m.rows = m.rows[:0]
	for i := range m.frame.procs {
		p := &m.frame.procs[i]
		if m.computeOnly && p.snap.Type&nvgo.ProcessCompute == 0 {
			continue
		}
		if m.userFilter != "" && p.snap.Username.Or("") != m.userFilter {
			continue
		}
		m.rows = append(m.rows, p)
	}
	slices.SortStableFunc(m.rows, m.less)
	m.sel = 0
	for i, p := range m.rows {
		if p.key == m.selKey {
			m.sel = i
			break
		}
	}
	m.selectRow(m.sel)
}

// less compares two rows by the sort key, then naturally.
func (m *model) less(a, b *procRow) int {
	c := 0
	switch m.sortBy {
	case sortPID:
		c = cmp.Compare(a.snap.PID, b.snap.PID)
	case sortUser:
		c = cmp.Compare(a.snap.Username.Or(""), b.snap.Username.Or(""))
	case sortGPUMemory:
		c = cmp.Compare(a.mem.Or(0), b.mem.Or(0))
	case sortSM:
		c = cmp.Compare(a.sm.Or(0), b.sm.Or(0))
	case sortCPU:
		c = cmp.Compare(a.snap.CPUPercent.Or(0), b.snap.CPUPercent.Or(0))
	case sortHostMemory:
		c = cmp.Compare(a.snap.HostMemory.Or(0), b.snap.HostMemory.Or(0))
	case sortTime:
		c = cmp.Compare(a.snap.RunningTime.Or(0), b.snap.RunningTime.Or(0))
	case sortCommand:
		c = cmp.Compare(a.snap.Command.Or(""), b.snap.Command.Or(""))
	}
	if m.reverse {
		c = -c
	}
	if c != 0 {
		return c
	}
	if c := cmp.Compare(a.gpu, b.gpu); c != 0 {
		return c
	}
	if c := cmp.Compare(a.device, b.device); c != 0 {
		return c
	}
	return cmp.Compare(a.snap.PID, b.snap.PID)
}

// selectRow selects row i (clamped) and scrolls it into view.
func (m *model) selectRow(i int) {
	if len(m.rows) == 0 {
		m.sel, m.offset = 0, 0
		return
	}
	m.sel = min(max(i, 0), len(m.rows)-1)
	m.selKey = m.rows[m.sel].key
	m.clampScroll()
}

func (m *model) clampScroll() {
	visible := max(m.tableRows, 1)
	if m.sel < m.offset {
		m.offset = m.sel
	}
	if m.sel >= m.offset+visible {
		m.offset = m.sel - visible + 1
	}
	m.offset = max(min(m.offset, len(m.rows)-visible), 0)
}

// move moves the selection (main screen) or scrolls (sub-screens).
func (m *model) move(delta int) {
	switch m.screen {
	case screenMain, screenTree:
		m.selectRow(m.sel + delta)
	default:
		m.subScroll = max(m.subScroll+delta, 0)
	}
}

// selected returns the selected process, if any.
func (m *model) selected() (procRow, bool) {
	if m.sel < len(m.rows) {
		return *m.rows[m.sel], true
	}
	return procRow{}, false
}

// maxBack bounds the screens kept to go back to. The bindings open at most
// four screens on top of each other (table, tree, figures, environment,
// help); beyond maxBack the oldest is forgotten, and going back past it
// reaches the main screen.
const maxBack = 8

// open shows screen s, to go back from to the current one.
func (m *model) open(s screen) {
	if len(m.backTo) == maxBack {
		m.backTo = slices.Delete(m.backTo, 0, 1)
	}
	m.backTo = append(m.backTo, m.screen)
	m.show(s)
}

// back returns to the screen the current one was opened from, or to the
// main screen.
func (m *model) back() {
	s := screenMain
	if n := len(m.backTo); n > 0 {
		s, m.backTo = m.backTo[n-1], m.backTo[:n-1]
	}
	m.show(s)
}

// show makes s the current screen, at its top. Every reading is read while
// a device screen is shown or waits under another.
func (m *model) show(s screen) {
	m.screen, m.subScroll = s, 0
	m.src.readAll(s == screenDevice || slices.Contains(m.backTo, screenDevice))
	if s == screenTree {
		m.buildTree()
	}
}

// key handles one key press: a confirmation's answer, the letter after
// 'o', or what bindings say the key does on this screen.
func (m *model) key(k string) tea.Cmd {
	if k == "ctrl+c" {
		return tea.Quit
	}
	if m.confirm != nil {
		m.answer(k)
		return nil
	}
	if m.awaitSort {
		m.awaitSort = false
		if s, ok := sortLetters[k]; ok {
			m.setSort(s)
		} else {
			m.message = "o then p, u, g, s, c, m, t, a or n (see h)"
		}
		return nil
	}
	if b := bindingOf(m.screen, k); b != nil {
		return b.do(m, k)
	}
	return nil
}

// toggleTag tags or untags the selected process, and selects the next.
func (m *model) toggleTag() {
	if p, ok := m.selected(); ok {
		if m.tags[p.key] {
			delete(m.tags, p.key)
		} else {
			m.tags[p.key] = true
		}
		m.move(1)
	}
}

// openDevice shows the device screen of the selected process's device, or
// of the first device.
func (m *model) openDevice() {
	m.device = ""
	if p, ok := m.selected(); ok {
		m.device = p.device
	}
	if m.deviceRow(m.device) == nil {
		m.device = m.nextDevice("")
	}
	m.open(screenDevice)
}

func (m *model) setSort(s sortKey) {
	m.sortBy = s
	m.rebuildRows()
	m.message = "sorted by " + sortNames[s]
}

// toggleUserFilter shows only the selected process's user, or everyone
// again.
func (m *model) toggleUserFilter() {
	if m.userFilter != "" {
		m.userFilter = ""
		m.message = "every user's processes"
	} else if p, ok := m.selected(); ok {
		if u, ok := p.snap.Username.Get(); ok {
			m.userFilter = u
			m.message = "only " + u + "'s processes (u again: everyone's)"
		}
	}
	m.rebuildRows()
}

// targets are what a signal key acts on: the tagged processes, else the
// selected one.
func (m *model) targets() []procRow {
	var out []procRow
	for _, p := range m.rows {
		if m.tags[p.key] && !slices.ContainsFunc(out, func(q procRow) bool { return q.key == p.key }) {
			out = append(out, *p)
		}
	}
	if len(out) == 0 {
		if p, ok := m.selected(); ok {
			out = append(out, p)
		}
	}
	return out
}

// mayAct reports whether this user may signal p: its own processes, or
// any when root.
func (m *model) mayAct(p procRow) bool {
	return m.root || p.snap.Username.Or("") == m.me && m.me != ""
}

// ask starts a confirmation for sig on the targets this user may signal.
func (m *model) ask(sig syscall.Signal) {
	var ok []procRow
	skipped := 0
	for _, p := range m.targets() {
		if m.mayAct(p) {
			ok = append(ok, p)
		} else {
			skipped++
		}
	}
	switch {
	case len(ok) == 0 && skipped > 0:
		m.message = "not your process: only root may signal other users' processes"
		return
	case len(ok) == 0:
		m.message = "no process selected"
		return
	}
	m.confirm = &confirmation{sig: sig, targets: ok}
	if skipped > 0 {
		m.message = fmt.Sprintf("%d of another user left out", skipped)
	}
}

// answer handles the key pressed at a confirmation.
func (m *model) answer(k string) {
	c := m.confirm
	m.confirm = nil
	if k != "y" && k != "Y" {
		m.message = "not sent"
		return
	}
	var sent []int
	var reasons []string         // in the order first met
	failed := map[string][]int{} // by reason
	for _, p := range c.targets {
		if err := m.sig.signal(p.key, c.sig); err != nil {
			r := reason(err)
			if failed[r] == nil {
				reasons = append(reasons, r)
			}
			failed[r] = append(failed[r], p.key.pid)
		} else {
			sent = append(sent, p.key.pid)
			delete(m.tags, p.key)
		}
	}
	var sentences []string
	if len(sent) > 0 {
		sentences = append(sentences, fmt.Sprintf("%s sent to %s.", signalName(c.sig), processes(sent)))
	}
	for _, r := range reasons {
		sentences = append(sentences, fmt.Sprintf("Could not send %s to %s: %s.", signalName(c.sig), processes(failed[r]), r))
	}
	m.message = strings.Join(sentences, " ")
}

// processes names PIDs: "process 42", "processes 42, 43".
func processes(pids []int) string {
	if len(pids) == 1 {
		return fmt.Sprintf("process %d", pids[0])
	}
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return "processes " + strings.Join(s, ", ")
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return s.String()
}

// openEnv shows the environment of p.
func (m *model) openEnv(p procRow) {
	m.subject = p
	m.open(screenEnv)
	env, err := m.sig.environ(p.key)
	m.env, m.envErr = slices.Sorted(slices.Values(env)), err
}

// click selects the process row under the mouse.
func (m *model) click(mouse tea.Mouse) {
	if m.screen != screenMain || mouse.Button != tea.MouseLeft {
		return
	}
	if row := mouse.Y - m.tableTop; row >= 0 && row < m.tableRows {
		m.selectRow(m.offset + row)
	}
}

// deviceRow returns the frame's device (GPU or MIG device) labelled label,
// or nil.
func (m *model) deviceRow(label string) *deviceRow {
	for i := range m.frame.devices {
		d := &m.frame.devices[i]
		if d.label() == label {
			return d
		}
		for j := range d.migs {
			if d.migs[j].label() == label {
				return &d.migs[j]
			}
		}
	}
	return nil
}

// nextDevice returns the label of the device after label in the frame's
// order (GPUs, each followed by its MIG devices), the first after the
// last or an unknown one; "" when there is none.
func (m *model) nextDevice(label string) string {
	var labels []string
	for i := range m.frame.devices {
		d := &m.frame.devices[i]
		labels = append(labels, d.label())
		for j := range d.migs {
			labels = append(labels, d.migs[j].label())
		}
	}
	if len(labels) == 0 {
		return ""
	}
	i := slices.Index(labels, label)
	return labels[(i+1)%len(labels)]
}
