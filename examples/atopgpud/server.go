package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Server defaults.
const (
	// defaultRequestTimeout bounds the time a client takes to send the
	// second byte of a request it has begun. Between requests there is no
	// limit: atop asks once per interval, and its interval can be hours.
	defaultRequestTimeout = 10 * time.Second
	// defaultWriteTimeout bounds the time one reply may take to go out. atop
	// itself gives up after 2 s; a client that does not read is dropped
	// after this, so that its connection's goroutine ends.
	defaultWriteTimeout = 10 * time.Second
	// defaultMaxClients bounds the connections served at once; each holds
	// a goroutine and an accumulator reader. Beyond it a new connection is
	// closed at once.
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

	requestTimeout, writeTimeout time.Duration
	maxClients                   int

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newServer returns a server on ln with the default limits.
func newServer(ln net.Listener, log *slog.Logger, newSession func() (*session, func())) *server {
	return &server{
		ln:             ln,
		log:            log,
		newSession:     newSession,
		requestTimeout: defaultRequestTimeout,
		writeTimeout:   defaultWriteTimeout,
		maxClients:     defaultMaxClients,
		conns:          map[net.Conn]struct{}{},
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
			s.log.Warn("too many clients; closing a new connection", "max", s.maxClients, "remote", c.RemoteAddr())
			c.Close()
			continue
		}
		s.wg.Add(1)
		go s.handle(c)
	}
}

// track registers c; it reports false when the server is full or shut down.
func (s *server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil || len(s.conns) >= s.maxClients {
		return false
	}
	s.conns[c] = struct{}{}
	return true
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
	err := sess.serve(&deadlineConn{Conn: c, requestTimeout: s.requestTimeout, writeTimeout: s.writeTimeout})
	switch {
	case err == nil, errors.Is(err, net.ErrClosed):
		log.Debug("client disconnected", "replies", sess.replied)
	case errors.Is(err, errUnknownRequest), errors.Is(err, io.ErrUnexpectedEOF):
		log.Debug("closing the connection of a client that does not speak the protocol", "err", err, "replies", sess.replied)
	default:
		log.Debug("connection failed", "err", err, "replies", sess.replied)
	}
}

// deadlineConn is a connection whose reads wait without limit for the start
// of a request, then at most requestTimeout for its end, and whose writes
// take at most writeTimeout each.
type deadlineConn struct {
	net.Conn
	requestTimeout, writeTimeout time.Duration
}

// requestStarted implements requestTimer.
func (c *deadlineConn) requestStarted() {
	c.SetReadDeadline(time.Now().Add(c.requestTimeout))
}

// Write writes a reply, then lets the next read wait for the next request
// without limit.
func (c *deadlineConn) Write(p []byte) (int, error) {
	c.SetWriteDeadline(time.Now().Add(c.writeTimeout))
	n, err := c.Conn.Write(p)
	c.SetReadDeadline(time.Time{})
	return n, err
}
