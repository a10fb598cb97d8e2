package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nvgo/nvgo"
)

// The parsers below accept what atop 2.8.1's gpucom.c accepts (see the
// protocol note, §9), strictly: a reply they take is one atop takes.

// splitReply cuts one framed reply off b: it checks the header's version and
// length and returns the body and what follows.
func splitReply(b []byte) (body, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, fmt.Errorf("%d bytes: no complete header", len(b))
	}
	h := binary.BigEndian.Uint32(b)
	if v := h >> 24; v != apiVersion {
		return nil, nil, fmt.Errorf("header version %d, want %d", v, apiVersion)
	}
	n := int(h & 0xFFFFFF)
	if n > maxBody {
		return nil, nil, fmt.Errorf("body length %d > %d", n, maxBody)
	}
	if len(b) < 4+n {
		return nil, nil, fmt.Errorf("header says %d body bytes, %d follow", n, len(b)-4)
	}
	return b[4 : 4+n], b[4+n:], nil
}

// parseTypes parses a T body into its entries, each [busid, type, tasks].
func parseTypes(body string) ([][3]string, error) {
	count, entries, ok := strings.Cut(body, "@")
	if !ok {
		return nil, fmt.Errorf("no '@' in %q", body)
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 || n > maxGPUs {
		return nil, fmt.Errorf("count %q: want 1..%d", count, maxGPUs)
	}
	parts := strings.Split(entries, "@")
	if len(parts) != n {
		return nil, fmt.Errorf("count %d, %d entries in %q", n, len(parts), body)
	}
	out := make([][3]string, n)
	for i, p := range parts {
		f := strings.Split(p, " ")
		if len(f) != 3 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("entry %q: want 3 non-empty fields", p)
		}
		for _, s := range f {
			if strings.ContainsAny(s, "#\x00\t\n") {
				return nil, fmt.Errorf("entry %q: unsafe character", p)
			}
		}
		out[i] = [3]string{f[0], f[1], f[2]}
	}
	return out, nil
}

// gpuStats is one GPU section of an S body.
type gpuStats struct {
	vals  [8]int64
	procs []procStats
}

// procStats is one process entry of an S body.
type procStats struct {
	state byte
	vals  [7]int64 // pid gpubusy membusy timems memnow memcum sample
}

// parseStats parses an S body into its GPU sections.
func parseStats(body string) ([]gpuStats, error) {
	if !strings.HasPrefix(body, "@") {
		return nil, fmt.Errorf("body does not start with '@': %.40q", body)
	}
	var out []gpuStats
	for _, sec := range strings.Split(body[1:], "@") {
		parts := strings.Split(sec, "#")
		var g gpuStats
		if err := parseInts(parts[0], g.vals[:]); err != nil {
			return nil, fmt.Errorf("GPU section %q: %v", parts[0], err)
		}
		for _, p := range parts[1:] {
			if len(p) < 2 || (p[0] != 'A' && p[0] != 'E') || p[1] != ' ' {
				return nil, fmt.Errorf("process entry %q: want state A or E", p)
			}
			ps := procStats{state: p[0]}
			if err := parseInts(p[2:], ps.vals[:]); err != nil {
				return nil, fmt.Errorf("process entry %q: %v", p, err)
			}
			g.procs = append(g.procs, ps)
		}
		out = append(out, g)
	}
	return out, nil
}

func parseInts(s string, dst []int64) error {
	f := strings.Split(s, " ")
	if len(f) != len(dst) {
		return fmt.Errorf("%d fields, want %d", len(f), len(dst))
	}
	for i, x := range f {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil || v < -1 {
			return fmt.Errorf("field %q is not an integer ≥ -1", x)
		}
		dst[i] = v
	}
	return nil
}

// Hand-built counters.

const gib = 1 << 30

func util(last, sum float64, n uint64) nvgo.UtilizationCounter {
	return nvgo.UtilizationCounter{Last: nvgo.Some(nvgo.Percent(last)), Sum: nvgo.Some(sum), Samples: n}
}

func unsupportedUtil() nvgo.UtilizationCounter {
	na := nvgo.NA[nvgo.Percent](nvgo.NotSupported, nvgo.ErrNotSupported)
	return nvgo.UtilizationCounter{Last: na, Sum: nvgo.NA[float64](nvgo.NotSupported, nvgo.ErrNotSupported)}
}

func memory(lastBytes, sumKiB, n uint64) nvgo.MemoryCounter {
	return nvgo.MemoryCounter{Last: nvgo.Some(nvgo.Bytes(lastBytes)), SumKiB: nvgo.Some(sumKiB), Samples: n}
}

func proc(pid int, mem nvgo.MemoryCounter) nvgo.ProcessCounters {
	return nvgo.ProcessCounters{ProcessKey: nvgo.ProcessKey{PID: pid}, GPUMemory: mem}
}

// h100 is the GPU of the protocol note's worked example (§11).
func h100() nvgo.GPUCounters {
	return nvgo.GPUCounters{
		BusID: nvgo.Some("0000:17:00.0"), Name: nvgo.Some("NVIDIA H100 80GB HBM3"),
		Samples:           120,
		GPUUtilization:    util(37, 4200, 120),
		MemoryUtilization: util(12, 1500, 120),
		MemoryUsed:        memory(gib, 125829120, 120),
		MemoryTotal:       nvgo.Some(nvgo.Bytes(83516416 * 1024)),
		Processes:         []nvgo.ProcessCounters{proc(16911, memory(gib, 10485760, 10))},
	}
}

func TestFrameWritesVersionOneAndTheLengthBigEndian(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []byte
	}{
		{name: "the worked example's T reply", body: "1@0000:17:00.0 NVIDIA_H100_80GB_HBM3 1", want: []byte{1, 0, 0, 0x26}},
		{name: "an empty body", body: "", want: []byte{1, 0, 0, 0}},
		{name: "the largest body atop takes", body: strings.Repeat("x", maxBody), want: []byte{1, 0, 0x20, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := frame([]byte(tt.body))
			if !bytes.Equal(got[:4], tt.want) || string(got[4:]) != tt.body {
				t.Errorf("frame header = % x, want % x (body kept: %v)", got[:4], tt.want, string(got[4:]) == tt.body)
			}
		})
	}
}

func TestTypesBodyListsTheGPUsAsAtopParsesThem(t *testing.T) {
	many := make([]gpuType, 33)
	for i := range many {
		many[i] = gpuType{BusID: fmt.Sprintf("00000000:%02X:00.0", i), Name: "H100", Tasks: taskProcesses}
	}
	tests := []struct {
		name  string
		gpus  []gpuType
		want  string
		count int // entries atop sees
	}{
		{
			name:  "the worked example: spaces in the name become underscores",
			gpus:  []gpuType{{BusID: "0000:17:00.0", Name: "NVIDIA H100 80GB HBM3", Tasks: taskProcesses}},
			want:  "1@0000:17:00.0 NVIDIA_H100_80GB_HBM3 1",
			count: 1,
		},
		{
			name: "two GPUs, accounting on: tasks 3",
			gpus: []gpuType{
				{BusID: "00000000:18:00.0", Name: "NVIDIA H100 80GB HBM3", Tasks: taskProcesses | taskAccounting},
				{BusID: "00000000:2A:00.0", Name: "NVIDIA A100-SXM4-80GB", Tasks: taskAccounting},
			},
			want:  "2@00000000:18:00.0 NVIDIA_H100_80GB_HBM3 3@00000000:2A:00.0 NVIDIA_A100-SXM4-80GB 2",
			count: 2,
		},
		{
			name:  "'@', '#', tabs, newlines and non-ASCII become underscores, one per character",
			gpus:  []gpuType{{BusID: "bus@1#2", Name: "GPU\tü\nX", Tasks: 0}},
			want:  "1@bus_1_2 GPU___X 0",
			count: 1,
		},
		{
			name:  "an unknown bus ID or name is '-', never an empty field",
			gpus:  []gpuType{{}},
			want:  "1@- - 0",
			count: 1,
		},
		{
			name:  "33 GPUs are cut to the 32 atop takes",
			gpus:  many,
			count: 32,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(typesBody(tt.gpus))
			if tt.want != "" && got != tt.want {
				t.Errorf("typesBody = %q, want %q", got, tt.want)
			}
			entries, err := parseTypes(got)
			if err != nil {
				t.Fatalf("atop would reject %q: %v", got, err)
			}
			if len(entries) != tt.count {
				t.Errorf("%d entries, want %d", len(entries), tt.count)
			}
		})
	}
}

func TestStatsBodyFormatsCountersAsUpstreamDoes(t *testing.T) {
	withGPU := func(edit func(g *nvgo.GPUCounters)) []nvgo.GPUCounters {
		g := h100()
		edit(&g)
		return []nvgo.GPUCounters{g}
	}
	// accounted gives every process these accounted busy figures and, once
	// exited, this running time.
	accounted := func(gpus []nvgo.GPUCounters, gpu, mem float64, ms int64) []nvgo.GPUCounters {
		record := func(p *nvgo.ProcessCounters) {
			a := nvgo.ProcessAccounting{PID: p.PID, GPUUtilization: nvgo.Some(nvgo.Percent(gpu)), MemoryUtilization: nvgo.Some(nvgo.Percent(mem)), Running: !p.Exited}
			a.RunningTime = nvgo.NA[time.Duration](nvgo.NotReported, nil)
			if p.Exited {
				a.RunningTime = nvgo.Some(time.Duration(ms) * time.Millisecond)
			}
			p.Accounting = nvgo.Some(a)
		}
		for i := range gpus {
			for j := range gpus[i].Processes {
				record(&gpus[i].Processes[j])
			}
			for j := range gpus[i].Exited {
				record(&gpus[i].Exited[j])
			}
		}
		return gpus
	}
	tests := []struct {
		name string
		gpus []nvgo.GPUCounters
		want string
	}{
		{
			name: "the worked example's first reply, byte for byte",
			gpus: []nvgo.GPUCounters{h100()},
			want: "@37 12 83516416 1048576 120 4200 1500 125829120#A 16911 -1 -1 -1 1048576 10485760 10",
		},
		{
			name: "a utilization the GPU never reported is -1 now and cum",
			gpus: withGPU(func(g *nvgo.GPUCounters) {
				g.GPUUtilization, g.MemoryUtilization = unsupportedUtil(), unsupportedUtil()
				g.Processes = nil
			}),
			want: "@-1 -1 83516416 1048576 120 -1 -1 125829120",
		},
		{
			name: "a utilization that failed only now is -1 now, its sum stays",
			gpus: withGPU(func(g *nvgo.GPUCounters) {
				g.GPUUtilization.Last = nvgo.NA[nvgo.Percent](nvgo.NotReported, nil)
				g.Processes = nil
			}),
			want: "@-1 12 83516416 1048576 120 4200 1500 125829120",
		},
		{
			name: "memory the GPU does not report is -1",
			gpus: withGPU(func(g *nvgo.GPUCounters) {
				g.MemoryTotal = nvgo.NA[nvgo.Bytes](nvgo.NotSupported, nil)
				g.MemoryUsed = nvgo.MemoryCounter{Last: nvgo.NA[nvgo.Bytes](nvgo.NotSupported, nil), SumKiB: nvgo.NA[uint64](nvgo.NotSupported, nil)}
				g.Processes = nil
			}),
			want: "@37 12 -1 -1 120 4200 1500 -1",
		},
		{
			name: "percentages are rounded down, sums after absorbing float error",
			gpus: withGPU(func(g *nvgo.GPUCounters) {
				g.GPUUtilization = util(37.9, 4199.9999999, 120)
				g.MemoryUtilization = util(12.5, 1500.7, 120)
				g.Processes = nil
			}),
			want: "@37 12 83516416 1048576 120 4200 1500 125829120",
		},
		{
			name: "process memory the driver does not report is 0 and adds no sample",
			gpus: withGPU(func(g *nvgo.GPUCounters) {
				g.Processes = []nvgo.ProcessCounters{proc(7, nvgo.MemoryCounter{Last: nvgo.NA[nvgo.Bytes](nvgo.NotReported, nil), SumKiB: nvgo.NA[uint64](nvgo.NotReported, nil)})}
			}),
			want: "@37 12 83516416 1048576 120 4200 1500 125829120#A 7 -1 -1 -1 0 0 0",
		},
		{
			name: "a running process's accounting gives its busy %, and timems 0",
			gpus: accounted([]nvgo.GPUCounters{h100()}, 55.6, 20, 0),
			want: "@37 12 83516416 1048576 120 4200 1500 125829120#A 16911 55 20 0 1048576 10485760 10",
		},
		{
			name: "an exited process is #E after the running ones, with its running time",
			gpus: accounted(withGPU(func(g *nvgo.GPUCounters) {
				g.Exited = []nvgo.ProcessCounters{proc(99, memory(gib/2, 2621440, 5))}
				g.Exited[0].Exited = true
			}), 40, 10, 1234),
			want: "@37 12 83516416 1048576 120 4200 1500 125829120#A 16911 40 10 0 1048576 10485760 10#E 99 40 10 1234 524288 2621440 5",
		},
		{
			name: "processes are in PID order under their GPU",
			gpus: []nvgo.GPUCounters{
				func() nvgo.GPUCounters {
					g := h100()
					g.Processes = []nvgo.ProcessCounters{proc(30, memory(gib, 1024, 1)), proc(4, memory(2*gib, 2048, 1))}
					return g
				}(),
				{Samples: 1, GPUUtilization: util(0, 0, 1), MemoryUtilization: util(0, 0, 1), MemoryUsed: memory(0, 0, 1), MemoryTotal: nvgo.Some(nvgo.Bytes(gib))},
			},
			want: "@37 12 83516416 1048576 120 4200 1500 125829120#A 4 -1 -1 -1 2097152 2048 1#A 30 -1 -1 -1 1048576 1024 1@0 0 1048576 0 1 0 0 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, unsent := statsBody(tt.gpus)
			if string(body) != tt.want {
				t.Errorf("statsBody =\n  %s\nwant\n  %s", body, tt.want)
			}
			if unsent != nil {
				t.Errorf("unsent = %v, want none", unsent)
			}
			if _, err := parseStats(string(body)); err != nil {
				t.Errorf("atop would reject it: %v", err)
			}
		})
	}
}

func TestStatsBodyDropsProcessesToFitAtop(t *testing.T) {
	// 600 running processes on GPU 0 with distinct memory, 5 on GPU 1, and
	// 3 exits on GPU 1: far over 8192 bytes.
	g0, g1 := h100(), h100()
	g0.Processes, g1.Processes = nil, nil
	for i := range 600 {
		g0.Processes = append(g0.Processes, proc(1000+i, memory(uint64(i+1)*1<<20, 123456789, 1000)))
	}
	for i := range 5 {
		g1.Processes = append(g1.Processes, proc(5000+i, memory(uint64(10000+i)<<20, 123456789, 1000)))
	}
	t0 := time.Unix(1e9, 0)
	for i := range 3 {
		p := proc(9000+i, memory(1<<20, 1024, 1))
		p.Exited, p.LastSeen = true, t0.Add(time.Duration(i)*time.Second)
		g1.Exited = append(g1.Exited, p)
	}
	body, unsent := statsBody([]nvgo.GPUCounters{g0, g1})
	if len(body) > maxBody {
		t.Fatalf("body is %d bytes, atop takes at most %d", len(body), maxBody)
	}
	if len(body) < maxBody-100 {
		t.Errorf("body is %d bytes: entries were dropped that would have fit", len(body))
	}
	if unsent != nil {
		t.Errorf("exits left unsent: %v", unsent)
	}
	stats, err := parseStats(string(body))
	if err != nil {
		t.Fatalf("atop would reject the body: %v", err)
	}
	if len(stats) != 2 {
		t.Fatalf("%d GPU sections, want both", len(stats))
	}
	exits, running := 0, map[int64]int64{} // pid → memnow
	for _, g := range stats {
		for _, p := range g.procs {
			if p.state == 'E' {
				exits++
			} else {
				running[p.vals[0]] = p.vals[4]
			}
		}
	}
	if exits != 3 {
		t.Errorf("%d #E entries, want all 3", exits)
	}
	for i := range 5 {
		if _, ok := running[int64(5000+i)]; !ok {
			t.Errorf("pid %d, the largest on GPU 1, was dropped", 5000+i)
		}
	}
	// The kept processes of GPU 0 are its largest ones.
	smallestKept := int64(1 << 62)
	for pid, mem := range running {
		if pid < 5000 {
			smallestKept = min(smallestKept, mem)
		}
	}
	for _, p := range g0.Processes {
		mem := int64(p.GPUMemory.Last.Or(0) / 1024)
		if _, kept := running[int64(p.PID)]; !kept && mem > smallestKept {
			t.Errorf("pid %d (%d KiB) dropped while one of %d KiB was kept", p.PID, mem, smallestKept)
		}
	}
	t.Logf("kept %d of 605 running processes in %d bytes", len(running), len(body))
}

func TestStatsBodyReturnsTheExitsThatDoNotFit(t *testing.T) {
	g := h100()
	g.Processes = []nvgo.ProcessCounters{proc(1, memory(gib, 1<<40, 1<<40))}
	t0 := time.Unix(1e9, 0)
	for i := range 400 {
		p := proc(100000+i, memory(gib, 1<<40, 1<<40))
		p.Exited, p.LastSeen = true, t0.Add(time.Duration(i)*time.Millisecond)
		g.Exited = append(g.Exited, p)
	}
	body, unsent := statsBody([]nvgo.GPUCounters{g})
	stats, err := parseStats(string(body))
	if err != nil || len(body) > maxBody {
		t.Fatalf("len %d, err %v", len(body), err)
	}
	sent := 0
	for _, p := range stats[0].procs {
		if p.state == 'A' {
			t.Errorf("running pid %d was kept while exits were dropped", p.vals[0])
		}
		sent++
	}
	if len(unsent) != 1 || sent+len(unsent[0]) != 400 {
		t.Fatalf("sent %d exits and left %v unsent; want all 400 accounted for", sent, len(unsent))
	}
	// The oldest exits go first.
	if got, want := unsent[0][0].PID, 100000+sent; got != want {
		t.Errorf("first unsent exit is pid %d, want %d", got, want)
	}
}

func TestCountReservedAsUsedAddsTheReservationToEveryTick(t *testing.T) {
	const reserved = 579 << 20 // an idle H100's, 592896 KiB
	na := nvgo.MemoryCounter{Last: nvgo.NA[nvgo.Bytes](nvgo.NotSupported, nvgo.ErrNotSupported), SumKiB: nvgo.NA[uint64](nvgo.NotSupported, nvgo.ErrNotSupported)}
	failedNow := memory(gib, 3<<20, 3)
	failedNow.Last = nvgo.NA[nvgo.Bytes](nvgo.NotReported, nvgo.ErrGPULost)
	tests := []struct {
		name             string
		mem              nvgo.MemoryCounter
		reserved         nvgo.Bytes
		wantNow, wantCum int64 // memusedKiB, memusedcumKiB
	}{
		{name: "an idle GPU: the reservation alone", mem: memory(0, 0, 120), reserved: reserved, wantNow: 592896, wantCum: 120 * 592896},
		{name: "a busy GPU: its memory and the reservation", mem: memory(gib, 125829120, 120), reserved: reserved, wantNow: 1048576 + 592896, wantCum: 125829120 + 120*592896},
		{name: "no reservation reported: as nvgo reads it", mem: memory(gib, 125829120, 120), wantNow: 1048576, wantCum: 125829120},
		{name: "memory never reported stays N/A", mem: na, reserved: reserved, wantNow: -1, wantCum: -1},
		{name: "memory not read at the latest tick: now N/A, the sum over the ticks that read it", mem: failedNow, reserved: reserved, wantNow: -1, wantCum: 3<<20 + 3*592896},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := h100()
			g.MemoryUsed = tt.mem
			countReservedAsUsed(&g, tt.reserved)
			stats, err := parseStats(string(gpuSection(&g)))
			if err != nil {
				t.Fatal(err)
			}
			if now, cum := stats[0].vals[3], stats[0].vals[7]; now != tt.wantNow || cum != tt.wantCum {
				t.Errorf("memusedKiB %d, memusedcumKiB %d; want %d, %d", now, cum, tt.wantNow, tt.wantCum)
			}
		})
	}
}

// rw is a client's side of a session: what it sends and what it gets.
type rw struct {
	in  io.Reader
	out bytes.Buffer
}

func (c *rw) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *rw) Write(p []byte) (int, error) { return c.out.Write(p) }

func TestSessionAnswersRequestsInOrder(t *testing.T) {
	counters := nvgo.Counters{GPUs: []nvgo.GPUCounters{h100()}}
	types := frame(typesBody([]gpuType{{BusID: "0000:17:00.0", Name: "NVIDIA H100 80GB HBM3", Tasks: 1}}))
	const sBody = "@37 12 83516416 1048576 120 4200 1500 125829120#A 16911 -1 -1 -1 1048576 10485760 10"
	tests := []struct {
		name    string
		in      string
		replies []string
		err     error
	}{
		{name: "T then S", in: "T\x01S\x01", replies: []string{"1@0000:17:00.0 NVIDIA_H100_80GB_HBM3 1", sBody}},
		{name: "the version byte is not checked", in: "S\x00S\x02", replies: []string{sBody, sBody}},
		{name: "nothing sent is a clean end", in: ""},
		{name: "an unknown command ends the session", in: "S\x01X\x01S\x01", replies: []string{sBody}, err: errUnknownRequest},
		{name: "an HTTP request is unknown", in: "GET / HTTP/1.0\r\n\r\n", err: errUnknownRequest},
		{name: "half a request is an unexpected end", in: "T\x01S", replies: []string{"1@0000:17:00.0 NVIDIA_H100_80GB_HBM3 1"}, err: io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &session{types: types, read: func() nvgo.Counters { return counters }}
			c := &rw{in: strings.NewReader(tt.in)}
			err := s.serve(c)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Errorf("serve = %v, want %v", err, tt.err)
			}
			out := c.out.Bytes()
			var got []string
			for len(out) > 0 {
				body, rest, err := splitReply(out)
				if err != nil {
					t.Fatal(err)
				}
				got, out = append(got, string(body)), rest
			}
			if !slices.Equal(got, tt.replies) {
				t.Errorf("replies %q, want %q", got, tt.replies)
			}
		})
	}
}

func TestSessionCarriesExitsThatDidNotFitToTheNextReply(t *testing.T) {
	t0 := time.Unix(1e9, 0)
	var exits []nvgo.ProcessCounters
	for i := range 400 {
		p := proc(100000+i, memory(gib, 1<<40, 1<<40))
		p.Exited, p.LastSeen = true, t0.Add(time.Duration(i)*time.Millisecond)
		exits = append(exits, p)
	}
	reads := 0
	s := &session{read: func() nvgo.Counters {
		reads++
		g := h100()
		if reads == 1 { // the Reader hands the exits over once
			g.Exited = exits
		}
		return nvgo.Counters{GPUs: []nvgo.GPUCounters{g}}
	}}
	seen := map[int64]int{}
	for range 10 {
		body, _, err := splitReply(s.reply(requestStats))
		if err != nil {
			t.Fatal(err)
		}
		stats, err := parseStats(string(body))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range stats[0].procs {
			if p.state == 'E' {
				seen[p.vals[0]]++
			}
		}
	}
	for _, p := range exits {
		if n := seen[int64(p.PID)]; n != 1 {
			t.Errorf("exit of pid %d reported %d times, want once", p.PID, n)
		}
	}
}

// FuzzRequests feeds arbitrary client bytes to a session: it must never
// panic, every reply must be well framed and parseable, one per complete
// request before the first unknown command, which ends the session.
func FuzzRequests(f *testing.F) {
	for _, seed := range []string{"T\x01", "S\x01", "T\x01S\x01S\x01", "X\x01", "S", "", "S\x00T\x02", "\x00\x00", "TTSS", "SSSSSSSS\x01"} {
		f.Add([]byte(seed))
	}
	types := frame(typesBody([]gpuType{{BusID: "00000000:18:00.0", Name: "NVIDIA H100 80GB HBM3", Tasks: 3}, {BusID: "00000000:2A:00.0", Name: "x", Tasks: 1}}))
	big := h100()
	for i := range 300 {
		big.Processes = append(big.Processes, proc(i+1, memory(uint64(i)<<20, uint64(i)<<30, uint64(i))))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		reads := 0
		s := &session{types: types, read: func() nvgo.Counters {
			reads++
			g := big
			for i := range 50 * (reads % 3) { // exits now and then, more than fit
				p := proc(1_000_000+reads*100+i, memory(gib, 1<<30, 1<<20))
				p.Exited, p.LastSeen = true, time.Unix(int64(reads), int64(i))
				g.Exited = append(g.Exited, p)
			}
			return nvgo.Counters{GPUs: []nvgo.GPUCounters{g, h100()}}
		}}
		c := &rw{in: bytes.NewReader(in)}
		err := s.serve(c)

		// What a correct daemon does with these bytes.
		var want []byte
		var wantErr error
		for i := 0; i < len(in); i += 2 {
			if in[i] != 'T' && in[i] != 'S' {
				wantErr = errUnknownRequest
				break
			}
			if i+1 == len(in) {
				wantErr = io.ErrUnexpectedEOF
				break
			}
			want = append(want, in[i])
		}
		if !errors.Is(err, wantErr) || (wantErr == nil && err != nil) {
			t.Fatalf("serve(%q) = %v, want %v", in, err, wantErr)
		}
		out := c.out.Bytes()
		for i, cmd := range want {
			body, rest, err := splitReply(out)
			if err != nil {
				t.Fatalf("reply %d to %q: %v", i, cmd, err)
			}
			out = rest
			if cmd == 'T' {
				if _, err := parseTypes(string(body)); err != nil {
					t.Fatalf("T reply %d: %v", i, err)
				}
				continue
			}
			stats, err := parseStats(string(body))
			if err != nil {
				t.Fatalf("S reply %d: %v", i, err)
			}
			if len(stats) != 2 {
				t.Fatalf("S reply %d has %d GPU sections, want 2", i, len(stats))
			}
		}
		if len(out) != 0 {
			t.Fatalf("%d bytes after the %d replies", len(out), len(want))
		}
	})
}
