package main

import (
	"slices"
	"strings"
	"syscall"

	tea "charm.land/bubbletea/v2"
)

// screens is a set of screens, one bit each.
type screens uint8

func on(ss ...screen) screens {
	var set screens
	for _, s := range ss {
		set |= 1 << s
	}
	return set
}

func (set screens) has(s screen) bool { return set&(1<<s) != 0 }

var (
	everyScreen = on(screenMain, screenTree, screenMetrics, screenEnv, screenHelp, screenDevice)
	// tables are the screens with a process table to select in.
	tables = on(screenMain, screenTree)
	// scrolled are the screens whose text scrolls.
	scrolled = on(screenEnv, screenHelp, screenDevice)
)

// binding is what a key does, on the screens where it does it. The keys
// handled, the bottom bar's hints and the help screen are all read from
// bindings, so that no screen advertises a key it ignores.
type binding struct {
	keys []string // as Bubble Tea names them: "q", "enter", "ctrl+c"
	on   screens
	// hint is the key in the bottom bar, "" for none.
	hint string
	// label and help are the key's line on the help screen; "" for none.
	label, help string
	do          func(m *model, key string) tea.Cmd
}

// bindings are every key the monitor handles. No two bind one key on one
// screen (TestNoKeyIsBoundTwiceOnAScreen).
var bindings = []binding{
	{keys: []string{"q"}, on: on(screenMain), hint: "q quit", label: "q", help: "quit",
		do: func(*model, string) tea.Cmd { return tea.Quit }},
	{keys: []string{"q", "esc"}, on: everyScreen &^ on(screenMain), hint: "q back", label: "q  Esc",
		help: "on any other screen: back to the one it was opened from", do: act((*model).back)},
	{keys: []string{"esc"}, on: on(screenMain), label: "Esc", help: "clear the message",
		do: act(func(m *model) { m.message = "" })},
	{keys: []string{"ctrl+c"}, on: everyScreen, label: "Ctrl-C", help: "quit",
		do: func(*model, string) tea.Cmd { return tea.Quit }},
	{keys: []string{"h", "?"}, on: everyScreen &^ on(screenHelp), hint: "h help", label: "h  ?", help: "this help",
		do: act(func(m *model) { m.open(screenHelp) })},
	{keys: []string{"t"}, on: on(screenMain), hint: "t tree", label: "t", help: "tree of the processes and their parents",
		do: act(func(m *model) { m.open(screenTree) })},
	{keys: []string{"t"}, on: on(screenTree), hint: "t back", label: "t (tree)", help: "back to the table",
		do: act((*model).back)},
	{keys: []string{"enter"}, on: tables, hint: "Enter metrics", label: "Enter", help: "the selected process's figures over time",
		do: act(func(m *model) {
			if p, ok := m.selected(); ok {
				m.subject = p
				m.open(screenMetrics)
			}
		})},
	{keys: []string{"e"}, on: tables, hint: "e env", label: "e", help: "the selected process's environment",
		do: act(func(m *model) {
			if p, ok := m.selected(); ok {
				m.openEnv(p)
			}
		})},
	{keys: []string{"e"}, on: on(screenMetrics), hint: "e env", label: "e (figures)", help: "that process's environment",
		do: act(func(m *model) { m.openEnv(m.subject) })},
	{keys: []string{"d"}, on: tables, hint: "d device", label: "d",
		help: "every reading of the selected process's device (Tab: the next device)", do: act((*model).openDevice)},
	{keys: []string{"tab"}, on: on(screenDevice), hint: "Tab next device", label: "Tab (device)", help: "the next device",
		do: act(func(m *model) { m.device, m.subScroll = m.nextDevice(m.device), 0 })},
	{keys: []string{"o"}, on: tables, hint: "o/,/. sort", label: "o then a letter",
		help: "sort by p PID, u user, g GPU memory, s SM, c CPU, m host memory, t time, a command, n natural (by GPU, then PID)",
		do: act(func(m *model) {
			m.awaitSort = true
			m.message = "sort by: p PID, u user, g GPU memory, s SM, c CPU, m memory, t time, a command, n natural"
		})},
	{keys: []string{",", "."}, on: tables, label: ",  .", help: "previous or next sort key",
		do: func(m *model, k string) tea.Cmd {
			m.setSort((m.sortBy + map[bool]sortKey{true: numSortKeys - 1, false: 1}[k == ","]) % numSortKeys)
			return nil
		}},
	{keys: []string{"/"}, on: tables, hint: "/ reverse", label: "/", help: "reverse the order",
		do: act(func(m *model) { m.reverse = !m.reverse; m.rebuildRows() })},
	{keys: []string{"c"}, on: tables, hint: "c compute", label: "c", help: "compute processes only (again: all)",
		do: act(func(m *model) {
			m.computeOnly = !m.computeOnly
			m.rebuildRows()
			m.message = map[bool]string{true: "compute processes only", false: "all processes"}[m.computeOnly]
		})},
	{keys: []string{"u"}, on: tables, hint: "u user", label: "u", help: "only the selected process's user (again: everyone)",
		do: act((*model).toggleUserFilter)},
	{keys: []string{"space"}, on: tables, hint: "Space tag", label: "Space", help: "tag or untag the selected process",
		do: act((*model).toggleTag)},
	{keys: []string{"I", "T", "K"}, on: tables, hint: "I/T/K signal", label: "I  T  K",
		help: "send SIGINT, SIGTERM or SIGKILL to the tagged, else the selected, processes after y (only your own unless you are root; never to a PID that now holds another process)",
		do: func(m *model, k string) tea.Cmd {
			m.ask(map[string]syscall.Signal{"I": syscall.SIGINT, "T": syscall.SIGTERM, "K": syscall.SIGKILL}[k])
			return nil
		}},
	{keys: []string{"up", "k", "down", "j"}, on: tables | scrolled, label: "Up Down  j k",
		help: "select a process (in the tree too); on the help, environment and device screens: scroll",
		do: func(m *model, k string) tea.Cmd {
			m.move(map[bool]int{true: -1, false: 1}[k == "up" || k == "k"])
			return nil
		}},
	{keys: []string{"pgup", "pgdown"}, on: tables | scrolled, label: "PgUp PgDn", help: "a page up or down",
		do: func(m *model, k string) tea.Cmd {
			page := max(m.tableRows-1, 1)
			if m.screen != screenMain {
				page = max(m.height-4, 1)
			}
			m.move(map[bool]int{true: -page, false: page}[k == "pgup"])
			return nil
		}},
	{keys: []string{"home", "g", "end", "G"}, on: tables | scrolled, label: "Home End  g G",
		help: "first or last process (or line)", do: func(m *model, k string) tea.Cmd {
			first := k == "home" || k == "g"
			switch {
			case tables.has(m.screen) && first:
				m.selectRow(0)
			case tables.has(m.screen):
				m.selectRow(len(m.rows) - 1)
			case first:
				m.subScroll = 0
			default:
				m.subScroll = 1 << 30 // clamped when drawn
			}
			return nil
		}},
	{on: on(screenMain), label: "mouse", help: "click selects, the wheel scrolls"},
}

// act makes a binding's do of f, which returns no command.
func act(f func(m *model)) func(*model, string) tea.Cmd {
	return func(m *model, _ string) tea.Cmd {
		f(m)
		return nil
	}
}

// bindingOf returns what key does on screen s, or nil.
func bindingOf(s screen, key string) *binding {
	for i := range bindings {
		if b := &bindings[i]; b.on.has(s) && b.do != nil && slices.Contains(b.keys, key) {
			return b
		}
	}
	return nil
}

// hintLines are the bottom bar of each screen: the hints of the keys it
// handles.
var hintLines = func() (lines [screenDevice + 1]string) {
	for s := range lines {
		var hints []string
		for _, b := range bindings {
			if b.hint != "" && b.on.has(screen(s)) {
				hints = append(hints, b.hint)
			}
		}
		lines[s] = strings.Join(hints, "  ")
	}
	return lines
}()
