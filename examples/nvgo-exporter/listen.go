package main

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// serverLimits bound what one client can hold of the exporter: how long it
// may take to send a request, to take an answer, to keep an idle
// connection, and how many connections all clients may hold at once.
type serverLimits struct {
	readHeader, read, write, idle time.Duration
	maxConns                      int
}

// defaultLimits are the exporter's. Prometheus keeps one connection per
// target open between scrapes: idle must outlast its usual intervals (15 s
// to 1 min). write must outlast the slowest answer: a scrape or a fleet
// read is bounded to 10 s, then written.
var defaultLimits = serverLimits{
	readHeader: 10 * time.Second,
	read:       15 * time.Second, // the exporter's requests are GETs without a body
	write:      60 * time.Second,
	idle:       2 * time.Minute,
	maxConns:   256,
}

// fdReserve are the file descriptors --max-connections leaves for what is
// not a client: the driver's, /proc reads, queries to Prometheus, the log.
const fdReserve = 64

// connBound is the most connections the exporter holds: asked (the flag's
// value), lowered so that clients cannot take the descriptors it needs
// itself where the open-file limit (RLIMIT_NOFILE; known when ok) is low.
func connBound(asked int, limit uint64, ok bool, log *slog.Logger) int {
	if !ok || limit >= uint64(asked)+fdReserve {
		return asked
	}
	bound := max(int(min(limit, 1<<20))-fdReserve, 4)
	log.Warn("fewer connections than --max-connections: the open-file limit is low", "max_connections", bound, "open_file_limit", limit)
	return bound
}

// newServer is the exporter's HTTP server over handler: every wait on a
// client bounded by l, and with conns (when not nil) told each
// connection's state.
func newServer(handler http.Handler, l serverLimits, conns *connLimit, log *slog.Logger) *http.Server {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: l.readHeader,
		ReadTimeout:       l.read,
		WriteTimeout:      l.write,
		IdleTimeout:       l.idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	if conns != nil {
		srv.ConnState = conns.track
	}
	return srv
}

// connLimit is a listener that holds at most max connections open, so that
// idle clients cannot take every file descriptor and lock scrapes out (the
// kernel then leaves new connections unaccepted). When a new connection
// would pass the bound, the one idle the longest (a keep-alive connection
// between requests, or one that has sent nothing yet) is closed to make
// room; when none is idle (each is in a request, which the server's
// timeouts bound), the new one waits until one ends or goes idle.
// The server must report to track (http.Server.ConnState). Safe for
// concurrent use.
type connLimit struct {
	net.Listener
	max int

	mu    sync.Mutex
	conns map[net.Conn]*connEntry
	// room is signalled when a connection ends or goes idle.
	room      chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
}

// connEntry is what connLimit knows of a connection.
type connEntry struct {
	idle  bool      // between requests, or before its first
	since time.Time // when it last went idle
}

// limitConns bounds ln to max connections.
func limitConns(ln net.Listener, max int) *connLimit {
	return &connLimit{Listener: ln, max: max, conns: map[net.Conn]*connEntry{},
		room: make(chan struct{}, 1), closed: make(chan struct{})}
}

// Accept accepts a connection and makes room for it.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for {
		l.mu.Lock()
		var victim net.Conn
		if len(l.conns) >= l.max {
			victim = l.longestIdle()
		}
		if len(l.conns) < l.max || victim != nil {
			if victim != nil {
				delete(l.conns, victim)
			}
			l.conns[c] = &connEntry{idle: true, since: time.Now()}
			l.mu.Unlock()
			if victim != nil {
				victim.Close()
			}
			return c, nil
		}
		l.mu.Unlock()
		select {
		case <-l.room:
		case <-l.closed:
			c.Close()
			return nil, net.ErrClosed
		}
	}
}

// longestIdle is the connection idle the longest, or nil; l.mu is held.
func (l *connLimit) longestIdle() net.Conn {
	var oldest net.Conn
	var since time.Time
	for c, e := range l.conns {
		if e.idle && (oldest == nil || e.since.Before(since)) {
			oldest, since = c, e.since
		}
	}
	return oldest
}

// track follows a connection's state (http.Server.ConnState).
func (l *connLimit) track(c net.Conn, state http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.conns[c]
	switch state {
	case http.StateActive:
		if e != nil {
			e.idle = false
		}
		return
	case http.StateIdle:
		if e != nil {
			e.idle, e.since = true, time.Now()
		}
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	default:
		return
	}
	select {
	case l.room <- struct{}{}:
	default:
	}
}

// open is how many connections l holds.
func (l *connLimit) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// Close closes the listener and ends a wait for room.
func (l *connLimit) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}
