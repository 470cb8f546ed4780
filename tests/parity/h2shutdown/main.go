// Command h2shutdown records what a Go HTTP/2 client sees while a Go HTTP/2 server shuts down
// (tests/parity/README.md, "The HTTP/2 shutdown corpus"). For each scenario read from standard
// input (a JSON list, written by tests/parity/record_shutdown.py from tests/parity/h2corpus.py) it
// starts net/http's server over TLS on 127.0.0.1 port 0 (HTTP/2 negotiated by ALPN, configured
// as k8s.io/apiserver v0.36.0's secure_serving.go configures it), runs the scenario's steps with
// net/http's client, and prints one JSON line: each request's status, header (all of it but
// Date), body, connection and error class, and when Shutdown returned and with what, in
// milliseconds after Shutdown was called.
//
// Handlers (by path), each naming its content type (Go's sniffing is the HTTP/1 corpus's business):
//
//	/echo              200 "ok".
//	/empty             200 and nothing written.
//	/slow?ms=N&tag=T   says it started (tag T), then 200 "slept" after N ms, or nothing if the
//	                   request's context ends first.
//	/stream?ms=N&tag=T the header at once (Flush), says it started, then "done" after N ms.
//	/close             200 "closing" with Connection: close (HTTP/2: a graceful GOAWAY).
//	anything else      http.NotFound.
package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"genericserver.test/parity/shutdownkit"
)

type step struct {
	Op        string `json:"op"`
	ID        string `json:"id"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Tag       string `json:"tag"`
	Ms        int    `json:"ms"`
	TimeoutMs int    `json:"timeout_ms"`
}

type scenario struct {
	ID    string `json:"id"`
	Steps []step `json:"steps"`
}

type outcome struct {
	Status int         `json:"status,omitempty"`
	Header http.Header `json:"header,omitempty"`
	Body   string      `json:"body,omitempty"`
	Conn   int         `json:"conn"`
	Error  string      `json:"error,omitempty"`
	AtMs   float64     `json:"at_ms"`
}

type record struct {
	ID       string                      `json:"id"`
	Requests map[string]*outcome         `json:"requests"`
	Shutdown *shutdownkit.ShutdownResult `json:"shutdown,omitempty"`
}

func main() { shutdownkit.Main(run) }

func handler(st *shutdownkit.Started) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		ms, _ := strconv.Atoi(q.Get("ms"))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		switch r.URL.Path {
		case "/echo":
			io.WriteString(w, "ok")
		case "/empty":
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "closing")
		case "/slow":
			close(st.Get(q.Get("tag")))
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				io.WriteString(w, "slept")
			case <-r.Context().Done():
			}
		case "/stream":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(st.Get(q.Get("tag")))
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				io.WriteString(w, "done")
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	})
}

func classify(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case strings.Contains(err.Error(), "server sent GOAWAY and closed the connection"):
		return "goaway-closed"
	case strings.Contains(err.Error(), "client connection lost"), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return "lost"
	}
	return "other: " + err.Error()
}

func run(sc scenario) *record {
	st := &shutdownkit.Started{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{
		Handler:           handler(st),
		MaxHeaderBytes:    1 << 20,
		IdleTimeout:       90 * time.Second,
		ReadHeaderTimeout: 32 * time.Second,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams:          1000,
			MaxReadFrameSize:              256 << 10,
			MaxReceiveBufferPerStream:     256 << 10,
			MaxReceiveBufferPerConnection: (256 << 10) * 1000,
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go srv.ServeTLS(ln, shutdownkit.CertFile, shutdownkit.KeyFile)

	pem, err := os.ReadFile(shutdownkit.CertFile)
	if err != nil {
		log.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	var mu sync.Mutex
	conns := map[net.Conn]int{}
	dialer := &tls.Dialer{Config: &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}}}
	client := &http.Client{Transport: &http.Transport{
		ForceAttemptHTTP2: true,
		TLSClientConfig:   &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}},
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err == nil {
				mu.Lock()
				conns[c] = len(conns)
				mu.Unlock()
			}
			return c, err
		},
	}}
	url := "https://" + ln.Addr().String()

	rec := &record{ID: sc.ID, Requests: map[string]*outcome{}}
	clk := &shutdownkit.Clock{} // request times are relative to the Shutdown call
	done := map[string]chan struct{}{}
	var shutdownDone chan struct{}
	for _, s := range sc.Steps {
		switch s.Op {
		case "request":
			o := &outcome{Conn: -1}
			mu.Lock()
			rec.Requests[s.ID] = o
			mu.Unlock()
			ch := make(chan struct{})
			done[s.ID] = ch
			go func(method, path string) {
				defer close(ch)
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
					mu.Lock()
					o.Conn = conns[info.Conn]
					mu.Unlock()
				}}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), method, url+path, nil)
				resp, err := client.Do(req)
				var body []byte
				if err == nil {
					body, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				mu.Lock()
				defer mu.Unlock()
				if resp != nil {
					o.Status = resp.StatusCode
					o.Header = resp.Header.Clone()
					o.Header.Del("Date") // the masking rule: a time
				}
				o.Body, o.Error, o.AtMs = string(body), classify(err), clk.Since()
			}(cmp.Or(s.Method, "GET"), s.Path)
		case "started":
			<-st.Get(s.Tag)
		case "done":
			<-done[s.ID]
		case "sleep":
			time.Sleep(time.Duration(s.Ms) * time.Millisecond)
		case "shutdown":
			shutdownDone = shutdownkit.Shutdown(srv, clk, s.TimeoutMs, func(r *shutdownkit.ShutdownResult) {
				mu.Lock()
				rec.Shutdown = r
				mu.Unlock()
			})
		case "shutdown_returned":
			<-shutdownDone
		case "close":
			srv.Close()
		default:
			log.Fatalf("%s: unknown step %q", sc.ID, s.Op)
		}
	}
	for _, ch := range done {
		<-ch
	}
	if shutdownDone != nil {
		<-shutdownDone
	}
	srv.Close()
	client.CloseIdleConnections()
	return rec
}
