// Package shutdownkit is what the HTTP/1 and HTTP/2 shutdown recorders (h1shutdown/,
// h2shutdown/) share: scenarios in and records out as JSON, the clock that times everything
// from the Shutdown call, the handlers' "I am running" signals, and the Shutdown call itself.
package shutdownkit

import (
	"context"
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"os"
	"sync"
	"time"
)

// CertFile and KeyFile are the server's certificate and key (PEM); the certificate is also the
// clients' CA. Main sets them from -cert and -key.
var CertFile, KeyFile string

// Main reads the scenarios (a JSON list on standard input) and prints run's record of each as
// one JSON line.
func Main[S any, R any](run func(S) R) {
	flag.StringVar(&CertFile, "cert", "", "the server's certificate (PEM), also the client's CA")
	flag.StringVar(&KeyFile, "key", "", "the server's key (PEM)")
	flag.Parse()
	var scenarios []S
	if err := json.NewDecoder(os.Stdin).Decode(&scenarios); err != nil {
		log.Fatal(err)
	}
	out := json.NewEncoder(os.Stdout)
	for _, sc := range scenarios {
		if err := out.Encode(run(sc)); err != nil {
			log.Fatal(err)
		}
	}
}

// Clock gives times in milliseconds after the Shutdown call (0 before it).
type Clock struct {
	mu sync.Mutex
	t0 time.Time
}

func (c *Clock) Start() { c.mu.Lock(); c.t0 = time.Now(); c.mu.Unlock() }

func (c *Clock) Since() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t0.IsZero() {
		return 0
	}
	return float64(time.Since(c.t0).Microseconds()) / 1000
}

// Started holds, by tag, the channel a handler closes once it runs.
type Started struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func (s *Started) Get(tag string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = map[string]chan struct{}{}
	}
	if s.ch[tag] == nil {
		s.ch[tag] = make(chan struct{})
	}
	return s.ch[tag]
}

// ShutdownResult is when Shutdown returned (ms after it was called) and with what error.
type ShutdownResult struct {
	Err  string  `json:"err,omitempty"`
	AtMs float64 `json:"at_ms"`
}

// Shutdown starts the clock and calls srv.Shutdown with a timeout of timeoutMs, in a goroutine;
// it hands the result to done, then closes the channel it returns.
func Shutdown(srv *http.Server, clk *Clock, timeoutMs int, done func(*ShutdownResult)) chan struct{} {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeoutMs)*time.Millisecond)
	returned := make(chan struct{})
	clk.Start()
	go func() {
		defer close(returned)
		defer cancel()
		err := srv.Shutdown(ctx)
		r := &ShutdownResult{AtMs: clk.Since()}
		if err != nil {
			r.Err = err.Error()
		}
		done(r)
	}()
	return returned
}
