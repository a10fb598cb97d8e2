package main

import (
	"fmt"
	"slices"
)

// treeLine is one line of the tree screen: a host process, or a GPU
// process (row >= 0, its index in the process table).
type treeLine struct {
	prefix string
	pid    int
	user   string
	text   string
	row    int
}

// maxTreeDepth bounds the walk up the parents.
const maxTreeDepth = 64

// treeNode is a process in the tree.
type treeNode struct {
	pid      int
	user     string
	text     string
	rows     []int // GPU-process rows of this PID (one per device)
	children []*treeNode
}

// buildTree lays the table's processes out under their ancestors, as the
// host sees them (parents read when the tree is built).
func (m *model) buildTree() {
	nodes := map[int]*treeNode{}
	node := func(pid int, user, text string) (*treeNode, bool) {
		if n := nodes[pid]; n != nil {
			return n, false
		}
		n := &treeNode{pid: pid, user: user, text: text}
		nodes[pid] = n
		return n, true
	}
	for i, p := range m.rows {
		n, isNew := node(p.snap.PID, p.snap.Username.Or("?"), p.snap.Command.Or(p.snap.Name.Or("")))
		n.rows = append(n.rows, i)
		if !isNew {
			continue
		}
		// Walk up until a known ancestor or the top.
		child := n
		if hp, err := m.sig.host(p.key); err == nil {
			for depth := 0; depth < maxTreeDepth; depth++ {
				parent, err := hp.Parent()
				if err != nil || parent == nil {
					break
				}
				pn, fresh := node(parent.PID(), parent.Username().Or("?"), parent.Command().Or(parent.Name().Or("")))
				pn.children = append(pn.children, child)
				if !fresh {
					break
				}
				child, hp = pn, parent
			}
		}
	}
	hasParent := map[*treeNode]bool{}
	for _, n := range nodes {
		for _, c := range n.children {
			hasParent[c] = true
		}
	}
	var roots []*treeNode
	for _, n := range nodes {
		if !hasParent[n] {
			roots = append(roots, n)
		}
	}
	m.tree = m.tree[:0]
	slices.SortFunc(roots, func(a, b *treeNode) int { return a.pid - b.pid })
	for i, r := range roots {
		m.flatten(r, "", i == len(roots)-1, true)
	}
}

// flatten appends n and its descendants to the tree's lines.
func (m *model) flatten(n *treeNode, indent string, last, top bool) {
	prefix := indent
	if !top {
		prefix += map[bool]string{true: m.th.last, false: m.th.branch}[last] + " "
	}
	if len(n.rows) == 0 {
		m.tree = append(m.tree, treeLine{prefix: prefix, pid: n.pid, user: n.user, text: n.text, row: -1})
	}
	for _, r := range n.rows {
		p := m.rows[r]
		text := fmt.Sprintf("[GPU %s] %s", p.device, n.text)
		m.tree = append(m.tree, treeLine{prefix: prefix, pid: n.pid, user: n.user, text: text, row: r})
	}
	childIndent := indent
	if !top {
		childIndent += map[bool]string{true: m.th.stem, false: m.th.pipe}[last] + " "
	}
	slices.SortFunc(n.children, func(a, b *treeNode) int { return a.pid - b.pid })
	for i, c := range n.children {
		m.flatten(c, childIndent, i == len(n.children)-1, false)
	}
}
