//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/examples/internal/tool"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
	"github.com/nvgo/nvgo/nvgotest"
)

// rig is a monitor on a simulated fleet, stepped by the test: frames are
// read on demand, the clock moves only when told to.
type rig struct {
	t     *testing.T
	fleet *fakegpu.Fleet
	clock *fleetclock.Stepped
	lib   *nvgo.Library
	s     *sampler
	m     *model
	sig   *recordingSignaller
}

// recordingSignaller records signals instead of sending them.
type recordingSignaller struct {
	sent    []string
	fail    error         // every signal fails with it
	failPID map[int]error // or, for these PIDs, with theirs
	real    hostSignaller
}

func (r *recordingSignaller) signal(k procKey, sig syscall.Signal) error {
	if err := r.failPID[k.pid]; err != nil {
		return err
	}
	if r.fail != nil {
		return r.fail
	}
	r.sent = append(r.sent, fmt.Sprintf("%s %d", signalName(sig), k.pid))
	return nil
}

func (r *recordingSignaller) host(k procKey) (*nvgo.HostProcess, error) { return r.real.host(k) }

func (r *recordingSignaller) environ(k procKey) ([]string, error) { return r.real.environ(k) }

func newRig(t *testing.T, fleet *fakegpu.Fleet, o *options) *rig {
	t.Helper()
	lib, clock := nvgotest.Simulated(t, fleet)
	if o == nil {
		o = &options{interval: time.Second, mode: "auto", noColor: true}
	}
	sel, err := tool.ChooseDevices(lib, o.only, o.onlyVisible)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := newSampler(ctx, lib, sel, o.interval, o.filter)
	if err != nil {
		t.Fatal(err)
	}
	sig := &recordingSignaller{real: hostSignaller{lib}}
	m := newModel(ctx, s, sig, o)
	r := &rig{t: t, fleet: fleet, clock: clock, lib: lib, s: s, m: m, sig: sig}
	r.resize(160, 50)
	r.refresh()
	return r
}

func presetRig(t *testing.T, preset string) *rig {
	t.Helper()
	fleet, err := fakegpu.Preset(preset)
	if err != nil {
		t.Fatal(err)
	}
	return newRig(t, fleet, nil)
}

// refresh takes one frame, a tick later than the previous one.
func (r *rig) refresh() {
	r.t.Helper()
	if r.s.started {
		ch := r.s.acc.Updated()
		r.clock.Advance(time.Second)
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			r.t.Fatal("the accumulator did not tick")
		}
	}
	r.s.started = true
	r.m.Update(frameMsg(r.s.read(context.Background())))
}

func (r *rig) resize(w, h int) { r.m.Update(tea.WindowSizeMsg{Width: w, Height: h}) }

// press sends keys; "ctrl+c" and the like are single keys.
func (r *rig) press(keys ...string) tea.Cmd {
	var cmd tea.Cmd
	for _, k := range keys {
		_, cmd = r.m.Update(keyPress(k))
	}
	return cmd
}

// keyPress builds the key message a terminal would send for k.
func keyPress(k string) tea.KeyPressMsg {
	special := map[string]rune{
		"up": tea.KeyUp, "down": tea.KeyDown, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"home": tea.KeyHome, "end": tea.KeyEnd, "enter": tea.KeyEnter, "esc": tea.KeyEscape, "space": tea.KeySpace,
		"tab": tea.KeyTab,
	}
	if c, ok := special[k]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if k == "ctrl+c" {
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)[0]
	return tea.KeyPressMsg{Code: r, Text: k}
}

// screen returns the rendered screen.
func (r *rig) screen() string { return r.m.render() }

// pids returns the table's PIDs in order.
func (r *rig) pids() []int {
	var out []int
	for _, p := range r.m.rows {
		out = append(out, p.snap.PID)
	}
	return out
}

func (r *rig) selectedPID() int {
	p, ok := r.m.selected()
	if !ok {
		return -1
	}
	return p.snap.PID
}

func wantContains(t *testing.T, screen string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(screen, p) {
			t.Errorf("the screen lacks %q:\n%s", p, screen)
		}
	}
}

func TestTheMainScreenShowsDevicesHostAndProcesses(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.refresh()
	s := r.screen()
	wantContains(t, s, "nvgo-monitor", "Driver 580.95.05", "means over 1s", "H100 80GB HBM3", "00000000:18:00.0",
		"62.09GiB / 80.00GiB", "97%", "MEM:", "UTL:", "[ CPU:", "[ MEM:", "alice", "bob", "carol",
		"python3 train.py --model llama-7b", "GPU     PID USER")
	if lines := strings.Split(s, "\n"); len(lines) != 50 {
		t.Errorf("%d lines; want the terminal's 50", len(lines))
	}
}

// Every figure the table shows for a process comes from the accumulator's
// mean over the interval.
func TestProcessFiguresAreIntervalMeans(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.refresh()
	for _, p := range r.m.rows {
		if !p.averaged {
			t.Errorf("pid %d: not averaged", p.snap.PID)
		}
	}
	if !r.m.frame.devices[0].averaged || r.m.frame.interval != time.Second {
		t.Errorf("GPU 0 averaged %v over %v; want the accumulator's mean over 1s", r.m.frame.devices[0].averaged, r.m.frame.interval)
	}
	// Half the interval at 97%, half at 10%: the mean, not the last reading.
	g := r.fleet.GPU(0)
	r.clock.Advance(400 * time.Millisecond)
	r.clock.Advance(100 * time.Millisecond)
	g.SetUtilization(10, 5)
	ch := r.s.acc.Updated()
	r.clock.Advance(500 * time.Millisecond)
	<-ch
	r.m.Update(frameMsg(r.s.read(context.Background())))
	if got := r.m.frame.devices[0].gpuUtil.Or(-1); got < 40 || got > 70 {
		t.Errorf("GPU 0 utilization %v after half an interval at 97%% and half at 10%%; want the mean", got)
	}
}

func TestNavigationKeys(t *testing.T) {
	fleet, _ := fakegpu.Preset("dgx-h100")
	for i := 3; i < 8; i++ {
		for j := 0; j < 6; j++ {
			must(t, fleet.GPU(i).StartProcess(fakegpu.Process{PID: uint32(4195000 + i*10 + j), UsedMemory: 1 << 30,
				Host: &fakegpu.Host{User: "dan", Command: []string{"job", fmt.Sprint(j)}}}))
		}
	}
	r := newRig(t, fleet, nil)
	r.resize(120, 24)
	n := len(r.m.rows)
	for _, tt := range []struct {
		keys []string
		want int // selected row
	}{
		{nil, 0},
		{[]string{"down"}, 1},
		{[]string{"j", "j"}, 3},
		{[]string{"k"}, 2},
		{[]string{"up", "up", "up"}, 0},
		{[]string{"end"}, n - 1},
		{[]string{"home"}, 0},
		{[]string{"G"}, n - 1},
		{[]string{"g"}, 0},
		{[]string{"pgdown"}, r.m.tableRows - 1},
		{[]string{"pgup"}, 0},
	} {
		r.press(tt.keys...)
		if r.m.sel != tt.want {
			t.Errorf("after %v: row %d selected; want %d", tt.keys, r.m.sel, tt.want)
		}
		if r.m.sel < r.m.offset || r.m.sel >= r.m.offset+r.m.tableRows {
			t.Errorf("after %v: row %d is out of view (rows %d..%d)", tt.keys, r.m.sel, r.m.offset, r.m.offset+r.m.tableRows-1)
		}
	}
	// The selection stays on its process across refreshes.
	r.press("down", "down")
	pid := r.selectedPID()
	r.refresh()
	if r.selectedPID() != pid {
		t.Errorf("after a refresh pid %d is selected; want %d", r.selectedPID(), pid)
	}
}

func TestSortKeys(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	// alice: GPU 0, 62 GiB, SM 97, CPU 98.5; bob: GPU 1, 41 GiB, 88, 101.3;
	// carol: GPU 2, 18 GiB, 64, 23.7.
	for _, tt := range []struct {
		keys []string
		want []int
	}{
		{nil, []int{4194401, 4194402, 4194403}},
		{[]string{"o", "g"}, []int{4194403, 4194402, 4194401}},
		{[]string{"/"}, []int{4194401, 4194402, 4194403}},
		{[]string{"/", "o", "c"}, []int{4194403, 4194401, 4194402}},
		{[]string{"o", "u"}, []int{4194401, 4194402, 4194403}},
		{[]string{"o", "s"}, []int{4194403, 4194402, 4194401}},
		{[]string{"o", "p"}, []int{4194401, 4194402, 4194403}},
		{[]string{"o", "m"}, []int{4194403, 4194401, 4194402}},
		{[]string{"o", "a"}, []int{4194402, 4194403, 4194401}},
		{[]string{"o", "n"}, []int{4194401, 4194402, 4194403}},
		{[]string{"."}, []int{4194401, 4194402, 4194403}},      // PID
		{[]string{".", "."}, []int{4194403, 4194402, 4194401}}, // user, then GPU memory
		{[]string{","}, []int{4194401, 4194402, 4194403}},      // back to user
	} {
		r.press(tt.keys...)
		if got := r.pids(); !slices.Equal(got, tt.want) {
			t.Errorf("after %v (sort %s, reverse %v): %v; want %v", tt.keys, sortNames[r.m.sortBy], r.m.reverse, got, tt.want)
		}
	}
	r.press("o", "z")
	if !strings.Contains(r.m.message, "o then") {
		t.Errorf("o then an unknown letter: message %q", r.m.message)
	}
	if !strings.Contains(r.screen(), "USER▲") {
		t.Errorf("the sorted column is not marked:\n%s", r.screen())
	}
}

func TestFilters(t *testing.T) {
	fleet, _ := fakegpu.Preset("dgx-h100")
	must(t, fleet.GPU(5).StartProcess(fakegpu.Process{PID: 4195100, Type: fakegpu.Graphics, UsedMemory: 64 << 20,
		Host: &fakegpu.Host{User: "bob", Command: []string{"Xorg"}}}))
	r := newRig(t, fleet, nil)
	if len(r.m.rows) != 4 {
		t.Fatalf("%d rows; want 4", len(r.m.rows))
	}
	r.press("c")
	if got := r.pids(); slices.Contains(got, 4195100) || len(got) != 3 {
		t.Errorf("compute only: %v", got)
	}
	r.press("c")
	r.press("down") // bob
	r.press("u")
	if got := r.pids(); !slices.Equal(got, []int{4194402, 4195100}) {
		t.Errorf("bob's only: %v", got)
	}
	wantContains(t, r.screen(), "user bob")
	r.press("u")
	if len(r.m.rows) != 4 {
		t.Errorf("u again: %d rows; want everyone's 4", len(r.m.rows))
	}
	// --compute and --user from the command line filter in the sampler.
	fleet2, _ := fakegpu.Preset("dgx-h100")
	r2 := newRig(t, fleet2, &options{interval: time.Second, mode: "auto", noColor: true,
		filter: tool.ProcessFilter{UserSet: true, User: "carol"}})
	if got := r2.pids(); !slices.Equal(got, []int{4194403}) {
		t.Errorf("--user carol: %v", got)
	}
}

func TestTaggingAndSignals(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.m.root = true
	r.press("space", "space") // tags alice and bob
	if len(r.m.tags) != 2 || r.m.sel != 2 {
		t.Fatalf("tags %v, selected %d; want 2 tagged and carol selected", r.m.tags, r.m.sel)
	}
	wantContains(t, r.screen(), "2 tagged", "*     0 4194401")
	r.press("T")
	wantContains(t, r.screen(), "Send SIGTERM to 4194401 (python3), 4194402 (python3)? [y/N]")
	r.press("n")
	if len(r.sig.sent) != 0 || r.m.message != "not sent" {
		t.Errorf("n: sent %v, message %q", r.sig.sent, r.m.message)
	}
	r.press("K", "y")
	if !slices.Equal(r.sig.sent, []string{"SIGKILL 4194401", "SIGKILL 4194402"}) || len(r.m.tags) != 0 {
		t.Errorf("K y: sent %v, tags %v", r.sig.sent, r.m.tags)
	}
	r.sig.sent = nil
	r.press("I", "y") // no tags: the selected process, carol's
	if !slices.Equal(r.sig.sent, []string{"SIGINT 4194403"}) {
		t.Errorf("I y: sent %v", r.sig.sent)
	}
	r.sig.fail = fmt.Errorf("pid 4194403: %w: %w", errPIDReused, nvgo.ErrProcessGone)
	r.press("T", "y")
	if r.m.message != "Could not send SIGTERM to process 4194403: its PID now holds another process." {
		t.Errorf("a refused signal: message %q", r.m.message)
	}
	// Not root: another user's processes are dimmed and not signalled.
	r.m.root, r.m.me = false, "alice"
	r.sig.sent, r.sig.fail = nil, nil
	r.press("T")
	if r.m.confirm != nil || !strings.Contains(r.m.message, "not your process") {
		t.Errorf("T on carol's process as alice: confirm %v, message %q", r.m.confirm, r.m.message)
	}
	r.press("home", "T", "y")
	if !slices.Equal(r.sig.sent, []string{"SIGTERM 4194401"}) {
		t.Errorf("T on alice's own process: sent %v", r.sig.sent)
	}
}

// The identity check: a signal goes to the process the monitor showed and
// to no other that took its PID since.
func TestSignalsCheckTheProcessIdentity(t *testing.T) {
	child := exec.Command("sleep", "60")
	must(t, child.Start())
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	t.Cleanup(func() { child.Process.Kill() })
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(child.Process.Pid), UsedMemory: 1 << 30}))
	r := newRig(t, fleet, nil)
	r.m.sig = r.sig.real // signals for real
	r.m.root = true
	p, ok := r.m.selected()
	if !ok || p.snap.PID != child.Process.Pid {
		t.Fatalf("selected %+v; want the child", p)
	}
	// A key whose start time is not the process's: another process's PID.
	stale := p.key
	stale.created = stale.created.Add(-time.Second)
	if err := r.sig.real.signal(stale, syscall.SIGTERM); err == nil || !strings.Contains(err.Error(), "now holds another process") {
		t.Errorf("signal to a reused PID: %v; want it refused", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the child ended (%v) although the signal was refused", err)
	case <-time.After(100 * time.Millisecond):
	}
	r.press("T", "y")
	select {
	case err := <-done:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("the child ended with %v; want SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the child did not get SIGTERM; message %q", r.m.message)
	}
}

func TestScreens(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.refresh()
	r.press("t")
	wantContains(t, r.screen(), "Tree of the GPU processes", "[GPU 0] python3 train.py", "alice")
	if !strings.Contains(r.screen(), r.m.th.last) && !strings.Contains(r.screen(), r.m.th.branch) {
		t.Errorf("the tree has no branches:\n%s", r.screen())
	}
	r.press("down") // the selection moves in the tree too
	if r.selectedPID() != 4194402 {
		t.Errorf("down in the tree selected %d; want bob's 4194402", r.selectedPID())
	}
	r.press("q")
	if r.m.screen != screenMain {
		t.Fatalf("q in the tree: screen %d; want main", r.m.screen)
	}
	r.press("enter")
	wantContains(t, r.screen(), "Process 4194402 (python3, bob) on GPU 1", "GPU memory (mean over each interval): now 41.39GiB",
		"SM utilization (mean over each interval): now 88.0%", "CPU utilization", "Resident memory (RSS): now 10035MiB")
	r.press("esc")
	r.press("e")
	wantContains(t, r.screen(), "Environment of process 4194402", "Cannot show the environment of process 4194402: it is simulated and has none")
	r.press("q", "h")
	wantContains(t, r.screen(), "Help", "means over each refresh interval", "I  T  K", "o then a letter")
	r.press("?") // help again stays
	r.press("q")
	if r.m.screen != screenMain {
		t.Errorf("q in help: screen %d; want main", r.m.screen)
	}
	if cmd := r.press("q"); cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.Quit()) {
		t.Errorf("q on the main screen did not quit")
	}
	if cmd := r.press("ctrl+c"); cmd == nil || fmt.Sprint(cmd()) != fmt.Sprint(tea.Quit()) {
		t.Errorf("ctrl+c did not quit")
	}
}

// The device screen lists every reading nvgo defines for the selected
// process's device, read in full while it is open.
func TestDeviceScreenListsEveryReading(t *testing.T) {
	r := presetRig(t, "dgx-h100-mig")
	r.fleet.GPU(2).SetTemperature(57)
	r.refresh()
	for r.m.rows[r.m.sel].device != "2" {
		r.press("down")
	}
	r.press("d")
	r.refresh()
	screen := r.screen()
	wantContains(t, screen, "GPU 2 (NVIDIA H100 80GB HBM3)", "temperature", "57C", "memory_temperature", "60C",
		"sm_clock", "bar1_memory_total", "fan_speed", "N/A (not supported)")
	for _, m := range nvgo.DeviceMetrics() {
		if !strings.Contains(screen, m.Name) {
			t.Errorf("the device screen lacks %s", m.Name)
		}
	}
	r.press("tab")
	wantContains(t, r.screen(), "GPU 3")
	for r.m.device != "0:0" {
		r.press("tab")
	}
	r.refresh()
	wantContains(t, r.screen(), "MIG 0:0", "memory_used", "12288MiB")
	r.press("q")
	if r.m.screen != screenMain || r.s.all.Load() {
		t.Errorf("q on the device screen: screen %d, reading all %v; want main, and only what it shows", r.m.screen, r.s.all.Load())
	}
}

// The environment screen reads a real process's environment.
func TestEnvironmentOfARealProcess(t *testing.T) {
	child := exec.Command("sleep", "60")
	child.Env = []string{"NVGO_TEST_MARK=monitor", "CUDA_VISIBLE_DEVICES=0"}
	must(t, child.Start())
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	must(t, fleet.GPU(0).StartProcess(fakegpu.Process{PID: uint32(child.Process.Pid), UsedMemory: 1 << 30}))
	r := newRig(t, fleet, nil)
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(r.m.rows[0].snap.Command.Or(""), "sleep"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the child did not exec")
		}
		r.refresh()
	}
	r.m.sig = r.sig.real
	r.press("e")
	wantContains(t, r.screen(), "CUDA_VISIBLE_DEVICES=0", "NVGO_TEST_MARK=monitor")
}

func TestMouse(t *testing.T) {
	r := presetRig(t, "dgx-h100")
	r.screen() // lays the table out
	r.m.Update(tea.MouseClickMsg{X: 10, Y: r.m.tableTop + 2, Button: tea.MouseLeft})
	if r.m.sel != 2 {
		t.Errorf("a click on the third row selected %d", r.m.sel)
	}
	r.m.Update(tea.MouseWheelMsg{X: 10, Y: 5, Button: tea.MouseWheelUp})
	if r.m.sel != 0 {
		t.Errorf("the wheel up selected %d; want 0", r.m.sel)
	}
}

// The screen fits any terminal, down to one cell, and never panics.
func TestResizes(t *testing.T) {
	r := presetRig(t, "dgx-h100-mig")
	for range 30 { // history enough to fill the charts' columns in part
		r.refresh()
	}
	for _, size := range [][2]int{{160, 50}, {200, 60}, {121, 40}, {80, 24}, {79, 24}, {60, 20}, {20, 5}, {1, 1}} {
		r.resize(size[0], size[1])
		for _, sc := range []screen{screenMain, screenTree, screenMetrics, screenEnv, screenHelp, screenDevice} {
			r.m.screen = sc
			if sc == screenMetrics || sc == screenEnv {
				r.m.subject = *r.m.rows[0]
			}
			r.m.device = "0:0"
			s := r.m.render()
			lines := strings.Split(s, "\n")
			if len(lines) != size[1] {
				t.Errorf("%dx%d screen %d: %d lines", size[0], size[1], sc, len(lines))
			}
			for i, l := range lines {
				if !utf8.ValidString(l) {
					t.Errorf("%dx%d screen %d line %d is not valid UTF-8 (a character cut): %q", size[0], size[1], sc, i, l)
					break
				}
				if w := displayWidth(l); w > size[0] {
					t.Errorf("%dx%d screen %d line %d is %d wide: %q", size[0], size[1], sc, i, w, l)
					break
				}
			}
		}
		r.m.screen = screenMain
	}
	r.resize(80, 24)
	if r.m.full() {
		t.Error("80 columns got the full layout")
	}
	wantContains(t, r.screen(), "0:0", "MIG 3g.40gb", "dave")
}

func TestLostGPUAndVGPU(t *testing.T) {
	fleet, _ := fakegpu.Preset("dgx-h100")
	r := newRig(t, fleet, nil)
	fleet.GPU(7).Lose()
	r.refresh()
	wantContains(t, r.screen(), "GPU is lost")
	if !strings.Contains(r.screen(), "alice") {
		t.Error("the other GPUs' processes are gone with GPU 7")
	}
	v := presetRig(t, "vgpu-h100")
	wantContains(t, v.screen(), "vGPU", "NVIDIA H100-20C")
}

func TestASCIIAndColours(t *testing.T) {
	fleet, _ := fakegpu.Preset("dgx-h100")
	r := newRig(t, fleet, &options{interval: time.Second, mode: "full", ascii: true, noColor: true})
	s := r.screen()
	for _, c := range s {
		if c > 0x7e && c != '…' {
			t.Fatalf("--ascii screen has %q:\n%s", c, s)
		}
	}
	// The selected row stays in reverse video; nothing else is styled.
	if plain := strings.NewReplacer("\x1b[7m", "", "\x1b[m", "").Replace(s); strings.Contains(plain, "\x1b[") {
		t.Error("--no-color screen has colour codes")
	}
	c := newRig(t, fleet, &options{interval: time.Second, mode: "auto"})
	if !strings.Contains(c.screen(), "\x1b[") {
		t.Error("the default screen has no colours")
	}
	l := newRig(t, fleet, &options{interval: time.Second, mode: "auto", light: true})
	if l.screen() == c.screen() {
		t.Error("--light draws as the dark theme does")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
