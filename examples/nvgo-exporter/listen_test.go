package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// serveTest serves h on a loopback port with limits l, through a
// connLimit when l.maxConns > 0, until the test ends; it returns the
// address and the connLimit (nil without).
func serveTest(t *testing.T, h http.Handler, l serverLimits) (string, *connLimit) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns *connLimit
	var served net.Listener = ln
	if l.maxConns > 0 {
		conns = limitConns(ln, l.maxConns)
		served = conns
	}
	srv := newServer(h, l, conns, slog.New(slog.NewTextHandler(io.Discard, nil)))
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(served) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String(), conns
}

// hello answers every request.
var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello\n") })

// request sends a GET of path on c and, when answer, reads the answer.
func request(t *testing.T, c net.Conn, path string, answer bool) {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: nvgo\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	if !answer {
		return
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c.SetReadDeadline(time.Time{})
}

// closedWithin reports whether the server closes c within limit: a read
// then ends (EOF or reset) rather than times out.
func closedWithin(c net.Conn, limit time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(limit))
	_, err := io.Copy(io.Discard, c)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// The server closes a connection its client leaves idle: after an answer
// (keep-alive), before a first request, or in the middle of its headers.
func TestTheServerClosesWhatClientsLeaveIdle(t *testing.T) {
	// The read timeout, which the server would use for an idle
	// connection without an idle timeout, is longer than the test waits.
	l := serverLimits{readHeader: 200 * time.Millisecond, read: time.Minute, write: time.Minute, idle: 200 * time.Millisecond}
	addr, _ := serveTest(t, hello, l)
	tests := []struct {
		name string
		do   func(t *testing.T, c net.Conn)
	}{
		{"a keep-alive connection after its answer", func(t *testing.T, c net.Conn) { request(t, c, "/", true) }},
		{"a connection that never sends a request", func(t *testing.T, c net.Conn) {}},
		{"a request whose headers never end", func(t *testing.T, c net.Conn) { io.WriteString(c, "GET / HTTP/1.1\r\nHost: nvgo\r\n") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tt.do(t, c)
			if !closedWithin(c, 10*time.Second) {
				t.Error("the connection is still open 10 s later; want it closed after 200 ms")
			}
		})
	}
	if defaultLimits.idle <= 0 || defaultLimits.readHeader <= 0 || defaultLimits.write <= 0 || defaultLimits.read <= 0 {
		t.Errorf("the exporter's limits %+v: want every timeout set", defaultLimits)
	}
}

// Idle clients past the bound cannot lock the next client out: the server
// holds no more than the bound, closing the connections idle the longest,
// and answers the newcomer at once.
func TestIdleClientsCannotLockOutTheNext(t *testing.T) {
	const bound, idle = 8, 40
	addr, conns := serveTest(t, hello, serverLimits{readHeader: time.Minute, read: time.Minute, write: time.Minute, idle: time.Minute, maxConns: bound})
	var open []net.Conn
	for i := range idle {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if i%2 == 0 {
			request(t, c, "/", true) // then idle, kept alive
		}
		open = append(open, c)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("a scrape after %d idle connections: %v", idle, err)
	}
	resp.Body.Close()
	waitFor(t, 10*time.Second, fmt.Sprintf("the server holds %d connections; want at most %d", conns.open(), bound),
		func() bool { return conns.open() <= bound })
	// Which are left is not told: a connection counts as idle from when
	// the server marks it so, which can come well after its client read
	// the answer.
	closed := make([]bool, idle)
	var wg sync.WaitGroup
	for i, c := range open {
		wg.Go(func() { closed[i] = closedWithin(c, 2*time.Second) })
	}
	wg.Wait()
	if n := len(slices.DeleteFunc(closed, func(b bool) bool { return !b })); n < idle-bound {
		t.Errorf("%d of %d idle connections closed; want all but at most %d", n, idle, bound)
	}
}

// When every connection is in a request, the next client waits for one to
// end, then is served.
func TestAFullServerServesTheNextClientWhenOneIsDone(t *testing.T) {
	const bound = 2
	release := make(chan struct{})
	busy := make(chan struct{}, bound)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			busy <- struct{}{}
			<-release
		}
		io.WriteString(w, "done\n")
	})
	addr, _ := serveTest(t, h, serverLimits{readHeader: time.Minute, read: time.Minute, write: time.Minute, idle: time.Minute, maxConns: bound})
	for range bound {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		request(t, c, "/slow", false)
	}
	for range bound {
		<-busy
	}
	answered := make(chan error, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/")
		if err == nil {
			var b strings.Builder
			io.Copy(&b, resp.Body)
			resp.Body.Close()
			if b.String() != "done\n" {
				err = fmt.Errorf("answer %q", b.String())
			}
		}
		answered <- err
	}()
	never(t, 200*time.Millisecond, "a client was served past the bound while every connection was in a request", func() bool { return len(answered) > 0 })
	close(release)
	if err := <-answered; err != nil {
		t.Errorf("the next client, once a request ended: %v", err)
	}
}

// The bound leaves the exporter the descriptors it needs itself where the
// open-file limit is low, and is the flag's value elsewhere.
func TestTheConnectionBoundFitsTheOpenFileLimit(t *testing.T) {
	tests := []struct {
		name  string
		asked int
		limit uint64
		known bool
		want  int
	}{
		{"a common limit", 256, 1 << 20, true, 256},
		{"room for all", 256, 256 + fdReserve, true, 256},
		{"a low limit", 256, 256, true, 256 - fdReserve},
		{"a very low limit", 256, 32, true, 4},
		{"no limit known", 256, 0, false, 256},
		{"a bound asked for", 1000, 1 << 62, true, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := connBound(tt.asked, tt.limit, tt.known, slog.New(slog.NewTextHandler(io.Discard, nil))); got != tt.want {
				t.Errorf("connBound(%d, %d, %v) = %d; want %d", tt.asked, tt.limit, tt.known, got, tt.want)
			}
		})
	}
}
