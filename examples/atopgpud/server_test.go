//go:build cgo

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/nvgo/nvgo"
	"github.com/nvgo/nvgo/fakegpu"
	"github.com/nvgo/nvgo/fakegpu/fleetclock"
)

// The daemon is tested whole, on fake fleets, over real loopback
// connections to an ephemeral port.

// testLog is where the daemons under test log; -v shows it.
func testLog(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// daemonRig is a daemon over a fake fleet, serving until the test ends.
type daemonRig struct {
	t     *testing.T
	fleet *fakegpu.Fleet
	clock *fleetclock.Stepped // nil: real time
	d     *daemon
	stop  context.CancelFunc
	done  chan error
}

// startRig starts a daemon on fleet at listen ("127.0.0.1:0" for an
// ephemeral port). A nil clock steps only with rig.tick; otherwise the
// daemon ticks every interval on its own. configure, if not nil, runs on
// the server before it serves.
func startRig(t *testing.T, fleet *fakegpu.Fleet, listen string, clock nvgo.Clock, interval time.Duration, configure func(*server)) (*daemonRig, error) {
	t.Helper()
	r := &daemonRig{t: t, fleet: fleet, done: make(chan error, 1)}
	if clock == nil {
		r.clock = fleetclock.NewStepped(fleet)
		clock = r.clock
	}
	lib, err := nvgo.Open(nvgo.WithNVML(fleet), nvgo.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lib.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	r.d, err = startDaemon(ctx, lib, config{listen: listen, interval: interval, log: testLog(t)})
	if err != nil {
		cancel()
		return nil, err
	}
	if configure != nil {
		configure(r.d.srv)
	}
	r.stop = cancel
	go func() { r.done <- r.d.serve(ctx) }()
	t.Cleanup(r.shutdown)
	return r, nil
}

// shutdown stops the daemon and checks that it stopped cleanly.
func (r *daemonRig) shutdown() {
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			r.t.Errorf("serve: %v", err)
		}
		r.done <- err // for a second shutdown
	case <-time.After(10 * time.Second):
		r.t.Fatal("the daemon did not stop within 10s of its context's end")
	}
	if n := r.d.srv.clients(); n != 0 {
		r.t.Errorf("%d connections still open after shutdown", n)
	}
}

// tick moves the step clock one interval and waits for the tick.
func (r *daemonRig) tick() {
	r.t.Helper()
	ch := r.d.acc.Updated()
	r.clock.Advance(r.d.acc.Interval())
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		r.t.Fatal("no tick within 10s")
	}
}

// client is an atop-like client of a rig.
type client struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (r *daemonRig) dial() *client {
	r.t.Helper()
	c, err := net.DialTimeout("tcp", r.d.addr(), 5*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { c.Close() })
	return &client{t: r.t, c: c, r: bufio.NewReader(c)}
}

// ask sends a request and returns the reply's body.
func (c *client) ask(cmd byte) (string, error) {
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.c.Write([]byte{cmd, apiVersion}); err != nil {
		return "", err
	}
	var hdr [4]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return "", err
	}
	h := binary.BigEndian.Uint32(hdr[:])
	if v, n := h>>24, h&0xFFFFFF; v != apiVersion || n > maxBody {
		return "", fmt.Errorf("header version %d length %d", v, n)
	}
	body := make([]byte, h&0xFFFFFF)
	_, err := io.ReadFull(c.r, body)
	return string(body), err
}

func (c *client) types() [][3]string {
	c.t.Helper()
	body, err := c.ask(requestTypes)
	if err != nil {
		c.t.Fatal(err)
	}
	e, err := parseTypes(body)
	if err != nil {
		c.t.Fatal(err)
	}
	return e
}

func (c *client) stats() []gpuStats {
	c.t.Helper()
	body, err := c.ask(requestStats)
	if err != nil {
		c.t.Fatal(err)
	}
	s, err := parseStats(body)
	if err != nil {
		c.t.Fatal(err)
	}
	return s
}

// entries lists the process entries of an S reply as "A pid@gpu".
func entries(s []gpuStats) []string {
	var out []string
	for i, g := range s {
		for _, p := range g.procs {
			out = append(out, fmt.Sprintf("%c %d@%d", p.state, p.vals[0], i))
		}
	}
	return out
}

func TestDaemonAnswersFromTheAccumulatorsCounters(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "a100"})
	fleet.GPU(0).SetUtilization(37, 12)
	fleet.GPU(1).Unsupported("utilization", "GetSamples")
	if err := fleet.GPU(0).StartProcess(fakegpu.Process{PID: 4194546, UsedMemory: gib, SM: 40, Mem: 10}); err != nil {
		t.Fatal(err)
	}
	r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.dial()
	memTot := [2]uint64{fleet.GPU(0).Spec().MemoryTotal / 1024, fleet.GPU(1).Spec().MemoryTotal / 1024}
	// Used memory counts the driver's reservation, as upstream serves it.
	memRes := [2]uint64{fleet.GPU(0).Spec().MemoryReserved / 1024, fleet.GPU(1).Spec().MemoryReserved / 1024}
	wantTypes := fmt.Sprintf("2@%s NVIDIA_H100_80GB_HBM3 3@%s %s 3", fleet.GPU(0).BusID(), fleet.GPU(1).BusID(), strings.ReplaceAll(fleet.GPU(1).Name(), " ", "_"))
	if body, err := c.ask(requestTypes); err != nil || body != wantTypes {
		t.Fatalf("T reply %q, %v; want %q", body, err, wantTypes)
	}
	// The accumulator took its first tick at start; the accounting record
	// of pid 4194546 started when the daemon turned accounting on.
	for n := 1; n <= 3; n++ {
		want := fmt.Sprintf("@37 12 %d %d %d %d %d %d#A 4194546 40 10 0 1048576 %d %d@-1 -1 %d %d %d -1 -1 %d",
			memTot[0], 1048576+memRes[0], n, 37*n, 12*n, (1048576+memRes[0])*uint64(n), 1048576*n, n,
			memTot[1], memRes[1], n, memRes[1]*uint64(n))
		if body, err := c.ask(requestStats); err != nil || body != want {
			t.Fatalf("S reply after %d ticks:\n  %s (%v)\nwant\n  %s", n, body, err, want)
		}
		r.tick()
	}
}

func TestExitedProcessesReachEachConnectionOnce(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"}, fakegpu.GPUSpec{Model: "h100"})
	for _, pid := range []uint32{100, 200} {
		if err := fleet.GPU(1).StartProcess(fakegpu.Process{PID: pid, UsedMemory: gib, SM: 50, Mem: 5}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	early, idle := r.dial(), r.dial()
	early.types()
	idle.types() // connected before the exit, asks only later
	if got := entries(early.stats()); strings.Join(got, ",") != "A 100@1,A 200@1" {
		t.Fatalf("before the exit: %v", got)
	}
	r.tick()
	fleet.GPU(1).StopProcess(100) // after 1 s of accounting
	r.tick()
	late := r.dial()
	late.types() // connected after the exit

	// The exit, with its final accounting record and counters: 2 ticks of
	// 1 GiB.
	const exit = "E 100 50 5 1000 1048576 2097152 2"
	tests := []struct {
		name   string
		client *client
		want   []string // the process entries of each S reply
	}{
		{name: "a client connected before the exit sees it once", client: early, want: []string{"A 200@1,E 100@1", "A 200@1"}},
		{name: "a client that asks late still sees it, once", client: idle, want: []string{"A 200@1,E 100@1", "A 200@1"}},
		{name: "a client connected after the exit never sees it", client: late, want: []string{"A 200@1", "A 200@1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				s := tt.client.stats()
				if got := strings.Join(entries(s), ","); got != want {
					t.Errorf("S reply %d: %s, want %s", i+1, got, want)
				}
				for _, p := range s[1].procs {
					if got := fmt.Sprintf("%c %v", p.state, strings.Trim(fmt.Sprint(p.vals), "[]")); p.state == 'E' && got != exit {
						t.Errorf("S reply %d: exit entry %q, want %q", i+1, got, exit)
					}
				}
			}
		})
	}
}

func TestDaemonServesManyClientsAtOnce(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	r, err := startRig(t, fleet, "127.0.0.1:0", fleetclock.RealTime(fleet), 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := r.d.addr()
	// Each kind of client does its thing and reports what went wrong.
	kinds := []struct {
		name string
		run  func(c net.Conn) error
	}{
		{"an atop-like client", func(c net.Conn) error {
			cl := &client{t: t, c: c, r: bufio.NewReader(c)}
			body, err := cl.ask(requestTypes)
			if err != nil {
				return err
			}
			if e, err := parseTypes(body); err != nil || len(e) != 8 {
				return fmt.Errorf("T reply %q: %v", body, err)
			}
			for range 5 {
				body, err := cl.ask(requestStats)
				if err != nil {
					return err
				}
				if s, err := parseStats(body); err != nil || len(s) != 8 {
					return fmt.Errorf("S reply %q: %v", body, err)
				}
			}
			return nil
		}},
		{"a slow reader", func(c net.Conn) error {
			c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write([]byte("S\x01")); err != nil {
				return err
			}
			var reply []byte
			b := make([]byte, 1)
			for len(reply) < 4 || len(reply) < 4+int(binary.BigEndian.Uint32(reply)&0xFFFFFF) {
				if _, err := io.ReadFull(c, b); err != nil {
					return err
				}
				reply = append(reply, b[0])
				time.Sleep(time.Millisecond)
			}
			body, _, err := splitReply(reply)
			if err != nil {
				return err
			}
			_, err = parseStats(string(body))
			return err
		}},
		{"a client that disconnects mid-reply", func(c net.Conn) error {
			if _, err := c.Write([]byte("S\x01S\x01S\x01")); err != nil {
				return err
			}
			_, err := io.ReadFull(c, make([]byte, 3))
			return err
		}},
		{"a client that disconnects mid-request", func(c net.Conn) error {
			_, err := c.Write([]byte("S"))
			return err
		}},
		{"a client that sends garbage and is closed", func(c net.Conn) error {
			c.SetDeadline(time.Now().Add(30 * time.Second))
			if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
				return err
			}
			if n, err := c.Read(make([]byte, 1)); err == nil {
				return fmt.Errorf("got %d bytes, want the connection closed", n)
			}
			return nil
		}},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := kinds[i%len(kinds)]
			c, err := net.DialTimeout("tcp", addr, 10*time.Second)
			if err != nil {
				errs <- fmt.Errorf("client %d (%s): %v", i, k.name, err)
				return
			}
			defer c.Close()
			if err := k.run(c); err != nil {
				errs <- fmt.Errorf("client %d (%s): %v", i, k.name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// A fresh client is served as if nothing had happened.
	c := r.dial()
	types := c.types()
	if len(types) != 8 || types[0][0] != fleet.GPU(0).BusID() || types[0][1] != "NVIDIA_H100_80GB_HBM3" {
		t.Errorf("T reply after the crowd: %v", types)
	}
	s := c.stats()
	if len(s) != 8 || s[0].vals[0] != 97 || len(s[0].procs) != 1 || s[0].procs[0].vals[0] != 4194401 {
		t.Errorf("S reply after the crowd: %+v", s)
	}
}

func TestAClientThatDoesNotReadIsDroppedWithoutHarmingOthers(t *testing.T) {
	fleet, err := fakegpu.Preset("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, func(s *server) {
		s.writeTimeout = 200 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	stalled := r.dial()
	// Far more replies than the socket buffers hold, never read.
	go stalled.c.Write([]byte(strings.Repeat("S\x01", 200_000)))

	other := r.dial()
	deadline := time.Now().Add(20 * time.Second)
	for {
		start := time.Now()
		if s := other.stats(); len(s) != 8 {
			t.Fatalf("S reply with %d GPUs", len(s))
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a reply took %s while another client stalled", d)
		}
		if r.d.srv.clients() == 1 {
			break // the stalled one was dropped
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stalled client was not dropped within 20s (%d clients)", r.d.srv.clients())
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.tick() // the accumulator goes on
	if s := other.stats(); s[0].vals[4] != 2 {
		t.Errorf("samples = %d after a second tick, want 2", s[0].vals[4])
	}
}

func TestAClientThatStopsMidRequestIsDropped(t *testing.T) {
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, func(s *server) {
		s.requestTimeout = 100 * time.Millisecond
	})
	if err != nil {
		t.Fatal(err)
	}
	c := r.dial()
	if _, err := c.c.Write([]byte("S")); err != nil {
		t.Fatal(err)
	}
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("read after half a request: %v, want EOF (closed by the daemon)", err)
	}
}

func TestShutdownClosesEveryConnectionAndEndsEveryGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cs []*client
	for range 5 {
		c := r.dial()
		c.types()
		cs = append(cs, c)
	}
	r.shutdown()
	for i, c := range cs {
		c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("client %d: read after shutdown: %v, want EOF", i, err)
		}
	}
	if _, err := net.DialTimeout("tcp", r.d.addr(), time.Second); err == nil {
		t.Error("the daemon still accepts connections after shutdown")
	}
	checkNoGoroutineLeft(t, before)
}

// checkNoGoroutineLeft fails the test when, within 5 s, the goroutines do
// not fall back to before, the count taken before the daemon started.
func checkNoGoroutineLeft(t *testing.T, before int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before the daemon, %d after it stopped:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
	}
}

// dialSilent opens n connections to the rig that never send anything.
func (r *daemonRig) dialSilent(n int) []net.Conn {
	r.t.Helper()
	var cs []net.Conn
	for range n {
		c, err := net.DialTimeout("tcp", r.d.addr(), 5*time.Second)
		if err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// closedByDaemon reports whether the daemon closes c within wait: a read
// gets EOF or a reset rather than nothing.
func closedByDaemon(c net.Conn, wait time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(wait))
	_, err := c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

func TestSilentConnectionsDoNotLockAtopOut(t *testing.T) {
	const maxClients = 4
	tests := []struct {
		name   string
		spoken int // atop-like clients that connect first and ask T
		silent int // connections then opened that send nothing
		// spokenEvicted is how many of the spoken, the first, a client
		// that connects last evicts.
		spokenEvicted int
	}{
		{name: "far more silent connections than the limit: a new client evicts the oldest", silent: 3 * maxClients},
		{name: "silent connections beside a client that spoke: it is kept and a new client is served", spoken: 1, silent: 3 * maxClients},
		{name: "silent connections are evicted oldest first", spoken: maxClients - 1, silent: 2},
		{name: "every slot held by a client that spoke: the new client evicts the one that spoke longest ago", spoken: maxClients, spokenEvicted: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, func(s *server) {
				s.maxClients = maxClients
				s.firstRequestTimeout = time.Minute // eviction, not the deadline, must make room
			})
			if err != nil {
				t.Fatal(err)
			}
			var spoken []*client
			for range tt.spoken {
				c := r.dial()
				c.types()
				spoken = append(spoken, c)
			}
			silent := r.dialSilent(tt.silent)

			newcomer := r.dial()
			if body, err := newcomer.ask(requestTypes); err != nil || !strings.HasPrefix(body, "1@") {
				t.Errorf("newcomer: T reply %q, %v; want it served", body, err)
			}
			for i, c := range spoken {
				if i < tt.spokenEvicted {
					if !closedByDaemon(c.c, 10*time.Second) {
						t.Errorf("client %d that spoke, the least recently active, is still open", i)
					}
				} else if s := c.stats(); len(s) != 1 {
					t.Errorf("client %d that spoke: S reply with %d GPUs", i, len(s))
				}
			}
			// The newcomer evicted the oldest silent connection still
			// open; so every silent one but the last
			// maxClients-spoken-1 is closed.
			if tt.silent > 0 {
				keep := maxClients - tt.spoken - 1
				for i, c := range silent {
					want, wait := i < len(silent)-keep, 200*time.Millisecond // long enough for a close already made
					if want {
						wait = 10 * time.Second
					}
					if closed := closedByDaemon(c, wait); closed != want {
						t.Errorf("silent connection %d of %d: closed = %v, want %v", i, len(silent), closed, want)
					}
				}
			}
			if n := r.d.srv.clients(); n > maxClients {
				t.Errorf("%d clients tracked, more than the limit %d", n, maxClients)
			}
			r.shutdown()
			checkNoGoroutineLeft(t, before)
		})
	}
}

// Connections that ask once and go idle cannot hold atop off either: when
// the server is full, a new client evicts the least recently active
// connection, so atop, which polls once per interval, connects and stays
// however many idle ones there are.
func TestIdleConnectionsDoNotLockAtopOut(t *testing.T) {
	const maxClients = 4
	before := runtime.NumGoroutine()
	fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
	r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, func(s *server) { s.maxClients = maxClients })
	if err != nil {
		t.Fatal(err)
	}
	// Every slot taken by a client that asked once; two then ask again,
	// so that activity and acceptance differ: the least recently active
	// are idle1, idle3, idle2, idle0, in that order.
	conns := map[string]*client{}
	for i := range maxClients {
		c := r.dial()
		c.types()
		conns[fmt.Sprint("idle", i)] = c
	}
	conns["idle2"].stats()
	conns["idle0"].stats()
	// checkClosed checks that the named connections, and no other, have
	// been closed by the daemon, and forgets them.
	checkClosed := func(step string, names ...string) {
		t.Helper()
		for name, c := range conns {
			want, wait := slices.Contains(names, name), 100*time.Millisecond // long enough for a close already made
			if want {
				wait = 10 * time.Second
			}
			if closed := closedByDaemon(c.c, wait); closed != want {
				t.Errorf("%s: %s closed = %v, want %v", step, name, closed, want)
			}
			if want {
				delete(conns, name)
			}
		}
	}
	atop := r.dial()
	if body, err := atop.ask(requestTypes); err != nil || !strings.HasPrefix(body, "1@") {
		t.Fatalf("atop, connecting to a server full of idle clients: T reply %q, %v; want it served", body, err)
	}
	checkClosed("atop connected", "idle1")
	// atop polls while clients keep connecting, asking once and going
	// idle: each evicts the least recently active, never atop.
	for i, evicted := range []string{"idle3", "idle2", "idle0", "new0", "new1"} {
		if s := atop.stats(); len(s) != 1 {
			t.Fatalf("atop's poll %d: S reply with %d GPUs", i+1, len(s))
		}
		c := r.dial()
		c.types()
		conns[fmt.Sprint("new", i)] = c
		checkClosed(fmt.Sprintf("new%d connected", i), evicted)
	}
	if s := atop.stats(); len(s) != 1 {
		t.Fatalf("atop's last poll: S reply with %d GPUs", len(s))
	}
	if n := r.d.srv.clients(); n != maxClients {
		t.Errorf("%d clients tracked; want the limit, %d", n, maxClients)
	}
	r.shutdown()
	checkNoGoroutineLeft(t, before)
}

func TestAConnectionMustSendItsFirstRequestInTime(t *testing.T) {
	const firstRequestTimeout = 200 * time.Millisecond
	tests := []struct {
		name       string
		send       string // sent at once after connecting
		wantClosed bool   // else it asks for T, waits 3 timeouts, then asks for S
	}{
		{name: "a connection that sends nothing is closed", wantClosed: true},
		{name: "a connection that sends half a request is closed at the same deadline", send: "S", wantClosed: true},
		{name: "a client that asked in time may stay idle as long as it likes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			fleet := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, func(s *server) {
				s.firstRequestTimeout = firstRequestTimeout
				s.requestTimeout = time.Minute // only the first-request deadline may close it
			})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			c := r.dial()
			if _, err := c.c.Write([]byte(tt.send)); err != nil {
				t.Fatal(err)
			}
			if tt.wantClosed {
				if !closedByDaemon(c.c, 10*time.Second) {
					t.Fatal("the connection is still open 10s after it was made")
				}
				if d := time.Since(start); d < firstRequestTimeout-20*time.Millisecond {
					t.Errorf("closed after %s, before the %s deadline", d, firstRequestTimeout)
				}
			} else {
				c.types()
				if closedByDaemon(c.c, 3*firstRequestTimeout) { // idle past the first request's deadline
					t.Fatal("a client that asked in time was closed while idle")
				}
				if s := c.stats(); len(s) != 1 {
					t.Errorf("S reply with %d GPUs after an idle while", len(s))
				}
			}
			r.shutdown()
			checkNoGoroutineLeft(t, before)
		})
	}
}

func TestServedMemoryUsedIsTotalMinusFreeAsUpstreamServesIt(t *testing.T) {
	tests := []struct {
		name  string
		fleet func(t *testing.T) *fakegpu.Fleet
	}{
		{name: "an idle H100 shows the driver's reservation as used", fleet: func(t *testing.T) *fakegpu.Fleet {
			return fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
		}},
		{name: "a busy H100 shows its processes' memory and the reservation", fleet: func(t *testing.T) *fakegpu.Fleet {
			f := fakegpu.New(fakegpu.GPUSpec{Model: "h100"})
			if err := f.GPU(0).StartProcess(fakegpu.Process{PID: 4300242, UsedMemory: 3 * gib}); err != nil {
				t.Fatal(err)
			}
			return f
		}},
		{name: "every GPU of the dgx-h100 preset", fleet: func(t *testing.T) *fakegpu.Fleet {
			f, err := fakegpu.Preset("dgx-h100")
			if err != nil {
				t.Fatal(err)
			}
			return f
		}},
		{name: "a driver before R510 (no GetMemoryInfo_v2) counts the reservation as used already", fleet: func(t *testing.T) *fakegpu.Fleet {
			f := fakegpu.New(fakegpu.GPUSpec{Model: "a100"})
			f.MissingSymbols("nvmlDeviceGetMemoryInfo_v2")
			return f
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fleet := tt.fleet(t)
			r, err := startRig(t, fleet, "127.0.0.1:0", nil, time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			r.tick()
			s := r.dial().stats()
			for i, g := range s {
				// What upstream reads: nvmlDeviceGetMemoryInfo (v1), whose
				// used is total − free.
				h, ret := fleet.DeviceGetHandleByIndex(i)
				if ret != nvml.SUCCESS {
					t.Fatal(ret)
				}
				m, ret := h.GetMemoryInfo()
				if ret != nvml.SUCCESS {
					t.Fatal(ret)
				}
				want := int64(m.Total-m.Free) / 1024
				if want == 0 || fleet.GPU(i).Spec().MemoryReserved == 0 {
					t.Fatalf("GPU %d: no reserved memory in the fake; the test cannot tell the two figures apart", i)
				}
				if got := g.vals[3]; got != want {
					t.Errorf("GPU %d: memusedKiB = %d, want total − free = %d", i, got, want)
				}
				if got, n := g.vals[7], g.vals[4]; n != 2 || got != n*want {
					t.Errorf("GPU %d: memusedcumKiB = %d over %d samples, want %d over 2", i, got, n, 2*want)
				}
			}
		})
	}
}
