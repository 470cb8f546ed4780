// Command h1shutdown records, connection by connection, what raw HTTP/1 clients see while a Go
// net/http server shuts down (tests/parity/README.md, "The HTTP/1 shutdown corpus"). For each
// scenario read from standard input (a JSON list, written by tests/parity/record_shutdown.py from
// tests/parity/h1corpus.py) it starts net/http's server on 127.0.0.1 port 0 (plain TCP, or TLS),
// configured as k8s.io/apiserver v0.36.0's secure_serving.go configures it unless the scenario
// shortens a timeout, runs the steps on raw connections, and prints one JSON line: per
// connection the bytes it received (Date values blanked), how it ended (EOF, RST, refused, or
// still open when the scenario ended) and when; per handler tag when its request's context
// ended; and when Shutdown returned and with what. Times are in milliseconds after Shutdown
// was called (before it: 0).
//
// Handlers (by path):
//
//	/echo              200 "ok" (text/plain), the body left unread.
//	/slow?ms=N&tag=T   says it started, then 200 "slept" after N ms, or nothing if the request's
//	                   context ends first; the body left unread.
//	/stream?ms=N&tag=T the header at once (Flush), says it started, then "done" after N ms, or
//	                   nothing if the context ends first.
//	/watch?tag=T       the header at once (Flush), says it started, then waits for the request's
//	                   context to end.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"

	"genericserver.test/parity/shutdownkit"
)

type step struct {
	Op        string `json:"op"`
	Conn      string `json:"conn"`
	Data      string `json:"data"`
	Text      string `json:"text"`
	Tag       string `json:"tag"`
	Ms        int    `json:"ms"`
	TimeoutMs int    `json:"timeout_ms"`
}

type scenario struct {
	ID                  string `json:"id"`
	TLS                 bool   `json:"tls"`
	ReadHeaderTimeoutMs int    `json:"read_header_timeout_ms"`
	IdleTimeoutMs       int    `json:"idle_timeout_ms"`
	Steps               []step `json:"steps"`
}

type connRecord struct {
	Received string  `json:"received"`
	End      string  `json:"end"`
	AtMs     float64 `json:"at_ms"`
}

type record struct {
	ID       string                      `json:"id"`
	Conns    map[string]*connRecord      `json:"conns"`
	Contexts map[string]float64          `json:"contexts"`
	Shutdown *shutdownkit.ShutdownResult `json:"shutdown,omitempty"`
}

func main() { shutdownkit.Main(run) }

// tags collects the handlers' "I am running" signals and when each request's context ended.
type tags struct {
	shutdownkit.Started
	running  sync.WaitGroup // handlers that have not returned: contexts are read once none runs
	mu       sync.Mutex
	contexts map[string]float64
}

func handler(t *tags, clk *shutdownkit.Clock) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.running.Add(1)
		defer t.running.Done()
		q := r.URL.Query()
		tag := q.Get("tag")
		ms, _ := strconv.Atoi(q.Get("ms"))
		ended := func() {
			t.mu.Lock()
			t.contexts[tag] = clk.Since()
			t.mu.Unlock()
		}
		switch r.URL.Path {
		case "/echo":
			w.Header().Set("Content-Type", text)
			io.WriteString(w, "ok")
		case "/slow":
			close(t.Get(tag))
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				w.Header().Set("Content-Type", text)
				io.WriteString(w, "slept")
			case <-r.Context().Done():
				ended()
			}
		case "/stream":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(t.Get(tag))
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				io.WriteString(w, "done")
			case <-r.Context().Done():
				ended()
			}
		case "/watch":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(t.Get(tag))
			<-r.Context().Done()
			ended()
		default:
			http.NotFound(w, r)
		}
	})
}

// text is the content type the handlers name (a WSGI app names its own; Go's sniffing is the
// HTTP/1 parsing corpus's business, not this one's)
const text = "text/plain; charset=utf-8"

var date = regexp.MustCompile(`(?m)^Date: [^\r\n]*`)

// conn is one raw client connection: a reader collects what arrives until the end.
type conn struct {
	c      net.Conn
	mu     sync.Mutex
	buf    []byte
	rec    *connRecord
	more   chan struct{} // pinged on every read
	closed chan struct{}
}

func (c *conn) read(clk *shutdownkit.Clock) {
	defer close(c.closed)
	b := make([]byte, 4096)
	for {
		n, err := c.c.Read(b)
		c.mu.Lock()
		c.buf = append(c.buf, b[:n]...)
		c.mu.Unlock()
		select {
		case c.more <- struct{}{}:
		default:
		}
		if err != nil {
			end := "EOF"
			if errors.Is(err, syscall.ECONNRESET) {
				end = "RST"
			} else if errors.Is(err, net.ErrClosed) {
				end = "open" // we closed it ourselves: still open when the scenario ended
			}
			c.mu.Lock()
			c.rec.End, c.rec.AtMs = end, clk.Since()
			c.mu.Unlock()
			return
		}
	}
}

// connStates follows the server's ConnState hook, each connection by the client's address.
type connStates struct {
	mu      sync.Mutex
	by      map[string]http.ConnState
	changed chan struct{} // pinged on every change
}

func (s *connStates) set(nc net.Conn, st http.ConnState) {
	s.mu.Lock()
	s.by[nc.RemoteAddr().String()] = st
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// wait reports whether the connection from addr reached the state before the limit.
func (s *connStates) wait(addr string, want http.ConnState, limit time.Duration) bool {
	deadline := time.After(limit)
	for {
		s.mu.Lock()
		st, ok := s.by[addr]
		s.mu.Unlock()
		if ok && st == want {
			return true
		}
		select {
		case <-s.changed:
		case <-deadline:
			return false
		}
	}
}

func (c *conn) received() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.buf)
}

func run(sc scenario) *record {
	clk := &shutdownkit.Clock{}
	t := &tags{contexts: map[string]float64{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ms := func(n int, dflt time.Duration) time.Duration {
		if n == 0 {
			return dflt
		}
		return time.Duration(n) * time.Millisecond
	}
	srv := &http.Server{
		Handler:           handler(t, clk),
		MaxHeaderBytes:    1 << 20,
		IdleTimeout:       ms(sc.IdleTimeoutMs, 90*time.Second),
		ReadHeaderTimeout: ms(sc.ReadHeaderTimeoutMs, 32*time.Second),
		ErrorLog:          log.New(io.Discard, "", 0),
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){}, // HTTP/1 only
	}
	states := &connStates{by: map[string]http.ConnState{}, changed: make(chan struct{}, 1)}
	srv.ConnState = states.set
	var clientTLS *tls.Config
	if sc.TLS {
		pem, err := os.ReadFile(shutdownkit.CertFile)
		if err != nil {
			log.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		clientTLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}}
		go srv.ServeTLS(ln, shutdownkit.CertFile, shutdownkit.KeyFile)
	} else {
		go srv.Serve(ln)
	}
	addr := ln.Addr().String()

	rec := &record{ID: sc.ID, Conns: map[string]*connRecord{}}
	conns := map[string]*conn{}
	var shutdownDone chan struct{}
	for _, s := range sc.Steps {
		c := conns[s.Conn]
		switch s.Op {
		case "dial":
			r := &connRecord{}
			rec.Conns[s.Conn] = r
			raw, err := net.Dial("tcp", addr)
			if err != nil {
				r.End, r.AtMs = "refused", clk.Since()
				continue
			}
			var nc net.Conn = raw
			if sc.TLS {
				tc := tls.Client(raw, clientTLS)
				if err := tc.Handshake(); err != nil {
					log.Fatalf("%s: handshake: %v", sc.ID, err)
				}
				nc = tc
			}
			c = &conn{c: nc, rec: r, more: make(chan struct{}, 1), closed: make(chan struct{})}
			conns[s.Conn] = c
			go c.read(clk)
		case "send":
			c.c.Write([]byte(s.Data))
		case "seen": // wait until the connection received this text, or ended
			for !containsOrEnded(c, s.Text) {
				select {
				case <-c.more:
				case <-c.closed:
				case <-time.After(10 * time.Second):
					log.Fatalf("%s: %s never saw %q", sc.ID, s.Conn, s.Text)
				}
			}
		case "idle": // wait until the server has marked the connection idle
			if !states.wait(c.c.LocalAddr().String(), http.StateIdle, 10*time.Second) {
				log.Fatalf("%s: %s never went idle", sc.ID, s.Conn)
			}
		case "close_write": // FIN; over TLS close_notify first, as tls.Conn.CloseWrite sends it
			if tc, ok := c.c.(*tls.Conn); ok {
				tc.CloseWrite()
				tc.NetConn().(*net.TCPConn).CloseWrite()
			} else {
				c.c.(*net.TCPConn).CloseWrite()
			}
		case "close": // the client leaves altogether
			c.c.Close()
		case "ended": // wait until the connection ended (EOF, RST)
			select {
			case <-c.closed:
			case <-time.After(10 * time.Second):
				log.Fatalf("%s: %s never ended", sc.ID, s.Conn)
			}
		case "started":
			select {
			case <-t.Get(s.Tag):
			case <-time.After(10 * time.Second):
				log.Fatalf("%s: handler %s never started", sc.ID, s.Tag)
			}
		case "sleep":
			time.Sleep(time.Duration(s.Ms) * time.Millisecond)
		case "shutdown":
			shutdownDone = shutdownkit.Shutdown(srv, clk, s.TimeoutMs, func(r *shutdownkit.ShutdownResult) { rec.Shutdown = r })
		case "shutdown_returned":
			<-shutdownDone
		case "server_close":
			srv.Close()
		default:
			log.Fatalf("%s: unknown step %q", sc.ID, s.Op)
		}
	}
	if shutdownDone != nil {
		<-shutdownDone
	}
	// what is still open now stays "open"; the rest ended by themselves
	for name, c := range conns {
		c.c.Close()
		<-c.closed
		rec.Conns[name].Received = date.ReplaceAllString(c.received(), "Date: *")
	}
	srv.Close()
	t.running.Wait()
	t.mu.Lock()
	rec.Contexts = map[string]float64{}
	for tag, at := range t.contexts {
		rec.Contexts[tag] = at
	}
	t.mu.Unlock()
	return rec
}

func containsOrEnded(c *conn, text string) bool {
	select {
	case <-c.closed:
		return true
	default:
	}
	return regexp.MustCompile(regexp.QuoteMeta(text)).MatchString(c.received())
}
