package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// Server defaults.
const (
	// defaultFirstRequestTimeout bounds the time a new connection takes to
	// send its first complete request. atop sends 'T' as soon as it has
	// connected, so a connection still silent after this is not atop; it
	// is closed, so that idle sockets cannot fill maxClients.
	defaultFirstRequestTimeout = 5 * time.Second
	// defaultRequestTimeout bounds the time a client takes to send the
	// second byte of a request it has begun. Between requests there is no
	// limit: atop asks once per interval, and its interval can be hours.
	defaultRequestTimeout = 10 * time.Second
	// defaultWriteTimeout bounds the time one reply may take to go out. atop
	// itself gives up after 2 s; a client that does not read is dropped
	// after this, so that its connection's goroutine ends.
	defaultWriteTimeout = 10 * time.Second
	// defaultMaxClients bounds the connections served at once; each holds
	// a goroutine and an accumulator reader. Beyond it the least recently
	// active connection is closed to admit a new one (see evictLocked).
	defaultMaxClients = 1024
)

// server accepts atop's connections and serves each in its own goroutine,
// with a session from newSession. Closing the context given to serve stops
// it: the listener and every connection are closed and serve returns once
// every goroutine has ended.
type server struct {
	ln  net.Listener
	log *slog.Logger
	// newSession returns a session for a new connection and the function
	// that releases what it holds, called when the connection ends.
	newSession func() (*session, func())

	firstRequestTimeout, requestTimeout, writeTimeout time.Duration
	maxClients                                        int

	mu    sync.Mutex
	conns map[net.Conn]*tracked // nil once shut down
	// events counts the connections accepted and the requests received,
	// to order them in time.
	events uint64
	wg     sync.WaitGroup
}

// tracked is what the server knows of a connection it serves.
type tracked struct {
	accepted uint64 // when it was accepted (server.events)
	// active is when it last sent a complete request (server.events); 0
	// until it has sent one.
	active uint64
}

// newServer returns a server on ln with the default limits.
func newServer(ln net.Listener, log *slog.Logger, newSession func() (*session, func())) *server {
	return &server{
		ln:                  ln,
		log:                 log,
		newSession:          newSession,
		firstRequestTimeout: defaultFirstRequestTimeout,
		requestTimeout:      defaultRequestTimeout,
		writeTimeout:        defaultWriteTimeout,
		maxClients:          defaultMaxClients,
		conns:               map[net.Conn]*tracked{},
	}
}

// serve accepts connections until ctx ends, then shuts down and returns
// nil; it returns an error only when accepting fails for good.
func (s *server) serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, s.shutdown)
	defer stop()
	defer s.wg.Wait()
	var backoff time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				s.shutdown()
				return nil
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Warn("accept failed; retrying", "err", err, "in", backoff)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			continue
		}
		backoff = 0
		if !s.track(c) {
			c.Close() // shut down
			continue
		}
		s.wg.Add(1)
		go s.handle(c)
	}
}

// track registers c, first closing the least recently active connection
// when the server is full (see evictLocked); it reports false when the
// server is shut down.
func (s *server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		return false
	}
	if len(s.conns) >= s.maxClients {
		s.evictLocked()
	}
	s.events++
	s.conns[c] = &tracked{accepted: s.events}
	return true
}

// evictLocked closes the least recently active connection, and stops
// counting it (its goroutine ends on its own once its read fails): of those
// that have never sent a complete request, the one accepted first; if every
// one has spoken, the one whose latest request is the oldest. So a client
// that polls, as atop does once per interval, keeps its connection however
// many others connect, while connections that spoke once and went idle
// cannot hold the server full. s.mu must be held.
func (s *server) evictLocked() {
	var victim net.Conn
	var least *tracked
	for c, tr := range s.conns {
		if least == nil || tr.active < least.active || tr.active == least.active && tr.accepted < least.accepted {
			victim, least = c, tr
		}
	}
	if victim == nil {
		return
	}
	s.log.Debug("too many clients; closing the least recently active", "max", s.maxClients, "remote", victim.RemoteAddr(),
		"spoken", least.active != 0)
	victim.Close()
	delete(s.conns, victim)
}

// requested records that c has sent a complete request.
func (s *server) requested(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr, ok := s.conns[c]; ok {
		s.events++
		tr.active = s.events
	}
}

// shutdown closes the listener and every connection; it may be called more
// than once.
func (s *server) shutdown() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

// clients returns the number of connections being served.
func (s *server) clients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// handle serves one connection until it ends.
func (s *server) handle(c net.Conn) {
	defer s.wg.Done()
	sess, release := s.newSession()
	defer func() {
		release()
		c.Close()
		s.mu.Lock()
		if s.conns != nil {
			delete(s.conns, c)
		}
		s.mu.Unlock()
	}()
	log := s.log.With("remote", c.RemoteAddr().String())
	log.Debug("client connected")
	dc := &deadlineConn{
		Conn:           c,
		requestTimeout: s.requestTimeout,
		writeTimeout:   s.writeTimeout,
		firstDeadline:  time.Now().Add(s.firstRequestTimeout),
		requested:      func() { s.requested(c) },
	}
	c.SetReadDeadline(dc.firstDeadline)
	err := sess.serve(dc)
	switch {
	case err == nil, errors.Is(err, net.ErrClosed):
		log.Debug("client disconnected", "replies", sess.replied)
	case !dc.firstDeadline.IsZero() && errors.Is(err, os.ErrDeadlineExceeded):
		log.Debug("closing a connection that sent no complete request in time", "timeout", s.firstRequestTimeout)
	case errors.Is(err, errUnknownRequest), errors.Is(err, io.ErrUnexpectedEOF):
		log.Debug("closing the connection of a client that does not speak the protocol", "err", err, "replies", sess.replied)
	default:
		log.Debug("connection failed", "err", err, "replies", sess.replied)
	}
}

// deadlineConn is a connection whose first request must be complete by
// firstDeadline; after it, reads wait without limit for the start of a
// request, then at most requestTimeout for its end. Its writes take at most
// writeTimeout each.
type deadlineConn struct {
	net.Conn
	requestTimeout, writeTimeout time.Duration
	// firstDeadline is when the first request must be in; zero once it
	// is.
	firstDeadline time.Time
	// requested is called when a request is complete.
	requested func()
}

// requestStarted implements requestTimer.
func (c *deadlineConn) requestStarted() {
	d := time.Now().Add(c.requestTimeout)
	if !c.firstDeadline.IsZero() && c.firstDeadline.Before(d) {
		d = c.firstDeadline
	}
	c.SetReadDeadline(d)
}

// requestReceived implements requestTimer.
func (c *deadlineConn) requestReceived() {
	c.firstDeadline = time.Time{}
	if c.requested != nil {
		c.requested()
	}
}

// Write writes a reply, then lets the next read wait for the next request
// without limit.
func (c *deadlineConn) Write(p []byte) (int, error) {
	c.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	n, err := c.Conn.Write(p)
	c.SetReadDeadline(time.Time{})
	return n, err
}
