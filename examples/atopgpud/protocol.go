package main

// The atopgpud wire protocol, version 1, as atop 2.8.1 to 2.12 speak it:
// pure functions from counters to reply bodies, and the request loop of one
// client over an io.ReadWriter. Nothing here touches NVML or the network.

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nvgo/nvgo"
)

const (
	// apiVersion is the only protocol version atop 2.8.1 accepts: it goes
	// into every reply header, whatever version the request names.
	apiVersion = 1
	// maxBody is the longest reply body atop accepts (gpucom.c).
	maxBody = 8192
	// maxGPUs is the most GPUs atop accepts in a T reply (MAXGPU).
	maxGPUs = 32
	// maxCarriedExits bounds the exited processes a client keeps for its
	// next S reply when they did not fit in the last one.
	maxCarriedExits = nvgo.DefaultMaxPendingExits
)

// Requests: one command byte, then the API version byte.
const (
	requestTypes = 'T' // the GPU inventory
	requestStats = 'S' // the counters
)

// Task-support bits of a T entry, as upstream's daemon sets them. atop 2.8.1
// stores only the digit and never uses it.
const (
	taskProcesses  = 1 << 0 // the GPU's process list can be read
	taskAccounting = 1 << 1 // accounting mode is on: per-process busy %
)

// frame returns the reply for body: the 4-byte big-endian header
// (version<<24 | length), then the body, in one slice so that it goes out in
// one Write.
func frame(body []byte) []byte {
	out := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(out, apiVersion<<24|uint32(len(body)))
	return append(out, body...)
}

// gpuType is one GPU as the T reply lists it.
type gpuType struct {
	BusID, Name string
	Tasks       int // taskProcesses | taskAccounting
}

// typesBody formats the T reply body: the GPU count, then
// "@busid name tasks" per GPU, at most maxGPUs of them, with no trailing
// space. atop rejects a count of 0, so there must be at least one GPU.
func typesBody(gpus []gpuType) []byte {
	gpus = gpus[:min(len(gpus), maxGPUs)]
	b := strconv.AppendInt(nil, int64(len(gpus)), 10)
	for _, g := range gpus {
		b = append(b, '@')
		b = append(b, field(g.BusID)...)
		b = append(b, ' ')
		b = append(b, field(g.Name)...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(g.Tasks&(taskProcesses|taskAccounting)), 10)
	}
	return b
}

// field makes s safe as one field of a T entry: atop splits entries at '@'
// and fields at spaces and expects exactly three non-empty fields, so every
// character that is not printable ASCII, and '@' and '#', becomes '_'; an
// empty s becomes "-".
func field(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' || r == '@' || r == '#' {
			return '_'
		}
		return r
	}, s)
}

// statsBody formats the S reply body for the GPUs (at most maxGPUs; the
// caller passes them in T order): per GPU
//
//	@gpupercnow mempercnow memtotKiB memusedKiB samples gpuperccum memperccum memusedcumKiB
//
// then "#A …" per running process and "#E …" per process in Exited (see
// newEntry). Every section of every GPU is kept; process entries are
// dropped to keep the body within maxBody, in this order of preference:
//
//  1. exited processes, oldest exit first: atop sees each exit once, so
//     one dropped here would be lost to the client; those that do not fit
//     are returned in unsent, per GPU position, for the next reply;
//  2. running processes by GPU memory, largest first, then by accounted GPU
//     busy %, then by PID: atop ranks its process list by GPU busy or
//     memory, so the processes at the top of it survive, and the choice is
//     stable from one reply to the next. The counters are cumulative, so an
//     entry left out of one reply costs atop nothing but that interval's
//     split: the next one that carries it shows the whole difference.
//
// Within a GPU, the kept entries are in PID order, running ones first.
func statsBody(gpus []nvgo.GPUCounters) (body []byte, unsent [][]nvgo.ProcessCounters) {
	gpus = gpus[:min(len(gpus), maxGPUs)]
	sections := make([][]byte, len(gpus))
	budget := maxBody
	var cands []*entry
	for i := range gpus {
		g := &gpus[i]
		// At most 1+8·20+7 = 168 bytes, 5376 for 32 GPUs: they always fit.
		sections[i] = gpuSection(g)
		budget -= len(sections[i])
		for j := range g.Processes {
			p := &g.Processes[j]
			cands = append(cands, newEntry(i, p, false))
		}
		for j := range g.Exited {
			p := &g.Exited[j]
			e := newEntry(i, p, true)
			e.seq = j
			cands = append(cands, e)
		}
	}
	slices.SortStableFunc(cands, compareEntries)
	kept := make([][]*entry, len(gpus))
	for _, e := range cands {
		if len(e.text) <= budget {
			budget -= len(e.text)
			kept[e.gpu] = append(kept[e.gpu], e)
		} else if e.exited {
			if unsent == nil {
				unsent = make([][]nvgo.ProcessCounters, len(gpus))
			}
			unsent[e.gpu] = append(unsent[e.gpu], *e.p)
		}
	}
	for i := range unsent {
		slices.SortFunc(unsent[i], func(a, b nvgo.ProcessCounters) int { return a.LastSeen.Compare(b.LastSeen) })
	}
	body = make([]byte, 0, maxBody-budget)
	for i, sec := range sections {
		body = append(body, sec...)
		slices.SortFunc(kept[i], func(a, b *entry) int {
			if a.exited != b.exited {
				return boolCmp(a.exited, b.exited)
			}
			return a.p.PID - b.p.PID
		})
		for _, e := range kept[i] {
			body = append(body, e.text...)
		}
	}
	return body, unsent
}

// gpuSection formats the "@…" section of a GPU. A utilization the GPU has
// never reported is -1 in both its now and cum fields, as atop expects;
// one that failed only at the latest tick is -1 in now alone.
func gpuSection(g *nvgo.GPUCounters) []byte {
	b := []byte{'@'}
	b = appendInts(b,
		percent(g.GPUUtilization.Last, g.GPUUtilization.Sum),
		percent(g.MemoryUtilization.Last, g.MemoryUtilization.Sum),
		kib(g.MemoryTotal),
		kib(g.MemoryUsed.Last),
		clampInt(g.Samples),
		sum(g.GPUUtilization.Sum),
		sum(g.MemoryUtilization.Sum),
		kibSum(g.MemoryUsed.SumKiB),
	)
	return b
}

// countReservedAsUsed counts the memory the driver reserves for itself
// (reserved, in bytes) as used in g's MemoryUsed: its latest value and its
// sum over the ticks that read it.
//
// Upstream's atopgpud reads nvmlDeviceGetMemoryInfo (v1), whose used is
// total − free and so includes the driver's reservation (579 MiB on an idle
// H100), while nvgo reports used as drivers from R510 do (v2), without it.
// atop users compare the two daemons on one machine, so the atop protocol
// serves upstream's figure; nvgo's own API keeps its own. The reservation
// is fixed while the driver is loaded, so it is read once at start and
// added to every tick; a driver that reports none (before R510, whose used
// includes it already) adds 0.
func countReservedAsUsed(g *nvgo.GPUCounters, reserved nvgo.Bytes) {
	if reserved == 0 {
		return
	}
	m := &g.MemoryUsed
	m.Last = nvgo.Map(m.Last, func(b nvgo.Bytes) nvgo.Bytes { return b + reserved })
	m.SumKiB = nvgo.Map(m.SumKiB, func(s uint64) uint64 { return s + m.Samples*uint64(reserved/1024) })
}

// entry is a process entry of an S reply, with what decides whether it is
// kept.
type entry struct {
	gpu    int
	p      *nvgo.ProcessCounters
	exited bool
	seq    int   // position in its GPU's exit list
	mem    int64 // memnow, KiB
	busy   int64 // accounted GPU busy %, -1 when unknown
	text   []byte
}

// newEntry formats the process entry
//
//	#A pid gpubusy membusy timems memnowKiB memcumKiB sample
//
// ('#E' for an exited process). gpubusy and membusy are the lifetime
// percentages of the process's accounting record (read by the accumulator
// at its latest tick, or when it exited) and timems its running time (0
// while it runs, as NVML reports it); all three are -1 without a record,
// e.g. when accounting mode is off. memnow, memcum and sample are its GPU memory counter; memory the
// driver does not report counts as 0 and adds no sample, as upstream does.
func newEntry(gpu int, p *nvgo.ProcessCounters, exited bool) *entry {
	e := &entry{gpu: gpu, p: p, exited: exited, busy: -1}
	memBusy, timeMs := int64(-1), int64(-1)
	if a, ok := p.Accounting.Get(); ok {
		if u, ok := a.GPUUtilization.Get(); ok {
			e.busy = floorInt(float64(u))
		}
		if u, ok := a.MemoryUtilization.Get(); ok {
			memBusy = floorInt(float64(u))
		}
		timeMs = 0
		if d, ok := a.RunningTime.Get(); ok {
			timeMs = int64(d / time.Millisecond)
		}
	}
	if b, ok := p.GPUMemory.Last.Get(); ok {
		e.mem = clampInt(uint64(b) / 1024)
	}
	state := byte('A')
	if exited {
		state = 'E'
	}
	e.text = appendInts([]byte{'#', state, ' '},
		int64(p.PID), e.busy, memBusy, timeMs,
		e.mem, clampInt(p.GPUMemory.SumKiB.Or(0)), clampInt(p.GPUMemory.Samples))
	return e
}

// compareEntries orders entries by preference to be kept (see statsBody).
func compareEntries(a, b *entry) int {
	if a.exited != b.exited {
		return -boolCmp(a.exited, b.exited)
	}
	if a.exited {
		if c := a.p.LastSeen.Compare(b.p.LastSeen); c != 0 {
			return c
		}
		if a.gpu != b.gpu {
			return a.gpu - b.gpu
		}
		return a.seq - b.seq
	}
	switch {
	case a.mem != b.mem:
		return -cmp.Compare(a.mem, b.mem)
	case a.busy != b.busy:
		return -cmp.Compare(a.busy, b.busy)
	case a.p.PID != b.p.PID:
		return a.p.PID - b.p.PID
	}
	return a.gpu - b.gpu
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// appendInts appends the numbers separated by single spaces.
func appendInts(b []byte, vals ...int64) []byte {
	for i, v := range vals {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return b
}

// roundingSlack absorbs the floating-point error of a sum of whole
// percentages (4199.999999 must be 4200). Adding it before rounding down
// keeps a non-decreasing sum's integer non-decreasing too.
const roundingSlack = 1e-6

// floorInt rounds a non-negative figure down to an integer, the same way
// for every "now" and "cum" field, so that integer counters never go
// backwards; a negative or NaN figure counts as 0.
func floorInt(f float64) int64 {
	f = math.Floor(f + roundingSlack)
	switch {
	case !(f > 0): // negative, zero or NaN
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(f)
}

// percent is a GPU's current percentage: -1 when it is N/A now or the GPU
// has never reported it (sum N/A).
func percent(last nvgo.Value[nvgo.Percent], sum nvgo.Value[float64]) int64 {
	p, ok := last.Get()
	if !ok || sum.IsNA() {
		return -1
	}
	return floorInt(float64(p))
}

// sum is a cumulative percentage, -1 while the GPU has never reported it.
func sum(v nvgo.Value[float64]) int64 {
	s, ok := v.Get()
	if !ok {
		return -1
	}
	return floorInt(s)
}

// kib is a size in KiB (rounded down), -1 when N/A.
func kib(v nvgo.Value[nvgo.Bytes]) int64 {
	b, ok := v.Get()
	if !ok {
		return -1
	}
	return clampInt(uint64(b) / 1024)
}

// kibSum is a cumulative size in KiB, -1 while never reported.
func kibSum(v nvgo.Value[uint64]) int64 {
	s, ok := v.Get()
	if !ok {
		return -1
	}
	return clampInt(s)
}

func clampInt(u uint64) int64 {
	return int64(min(u, math.MaxInt64))
}

// errUnknownRequest is why a client's connection is closed: a command other
// than 'T' or 'S'. Upstream's daemon closes on it too.
var errUnknownRequest = errors.New("unknown request")

// requestTimer is what a session's connection may implement to bound the
// time a client takes to finish a request it has begun, and to learn when
// its first request is complete (the server's connections do).
type requestTimer interface {
	// requestStarted is called once the first byte of a request is in.
	requestStarted()
	// requestReceived is called once the whole request is in, before the
	// reply.
	requestReceived()
}

// session answers one client's requests, in order. Its T reply is fixed;
// its S replies come from its own reader (an nvgo.Reader's Read, so that
// each exit reaches the client once). A session is not safe for concurrent
// use: it belongs to its connection's goroutine.
type session struct {
	types []byte               // the framed T reply
	read  func() nvgo.Counters // the client's counters, exits since its previous read included
	// reserved is, per GPU position, the memory its driver reserves, to
	// serve as used (see countReservedAsUsed); nil for none.
	reserved []nvgo.Bytes
	// carry holds, per GPU position, the exits that did not fit in the
	// previous S reply.
	carry [][]nvgo.ProcessCounters
	// replied counts the replies sent, for the logs.
	replied int
}

// serve answers the requests read from rw until the client closes the
// connection at a request boundary (nil), sends an unknown command
// (errUnknownRequest) or the connection fails (that error). A request is
// two bytes: the command and the API version, which is not checked: every
// reply is version 1, the only one atop 2.8.1 accepts.
func (s *session) serve(rw io.ReadWriter) error {
	var req [2]byte
	for {
		if _, err := io.ReadFull(rw, req[:1]); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if req[0] != requestTypes && req[0] != requestStats {
			return fmt.Errorf("%w %q", errUnknownRequest, req[0])
		}
		if rt, ok := rw.(requestTimer); ok {
			rt.requestStarted()
		}
		if _, err := io.ReadFull(rw, req[1:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if rt, ok := rw.(requestTimer); ok {
			rt.requestReceived()
		}
		if _, err := rw.Write(s.reply(req[0])); err != nil {
			return err
		}
		s.replied++
	}
}

// reply returns the framed reply to a T or S command.
func (s *session) reply(cmd byte) []byte {
	if cmd == requestTypes {
		return s.types
	}
	c := s.read()
	gpus := slices.Clone(c.GPUs[:min(len(c.GPUs), maxGPUs)])
	for i := range gpus {
		if i < len(s.reserved) {
			countReservedAsUsed(&gpus[i], s.reserved[i])
		}
		if i < len(s.carry) && len(s.carry[i]) > 0 {
			gpus[i].Exited = append(slices.Clip(s.carry[i]), gpus[i].Exited...)
		}
	}
	body, unsent := statsBody(gpus)
	s.carry = boundCarry(unsent)
	return frame(body)
}

// boundCarry keeps at most maxCarriedExits exits, dropping the oldest.
func boundCarry(unsent [][]nvgo.ProcessCounters) [][]nvgo.ProcessCounters {
	n := 0
	for _, l := range unsent {
		n += len(l)
	}
	for ; n > maxCarriedExits; n-- {
		j := -1
		for i, l := range unsent {
			if len(l) > 0 && (j < 0 || l[0].LastSeen.Before(unsent[j][0].LastSeen)) {
				j = i
			}
		}
		unsent[j] = unsent[j][1:]
	}
	return unsent
}
