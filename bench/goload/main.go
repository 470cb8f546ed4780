// Command goload is the Go side of bench/versus_go.py (make bench): the same load client for
// every server, and a bare net/http handler to measure against.
//
//	goload serve             serves GET anything -> 200 "ok" on 127.0.0.1 port 0, prints the port,
//	                         and runs until its standard input closes
//	goload load -url URL -n N
//	                         sends N GETs one after the other on one keep-alive connection (after
//	                         50 to warm up) and prints the rate in requests per second
//	goload keepalive -url URL -c C [-token T] [-h2 -streams S]
//	                         C clients, each on its own connection (HTTP/1.1 keep-alive, or HTTP/2
//	                         with S streams at a time), sending GETs until the server refuses new
//	                         connections; prints "started" once every client had an answer, then,
//	                         at the end, one JSON line per client: its answers by status, its
//	                         transport errors and how many connections it dialed
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: goload serve | goload load -url URL -n N")
	}
	switch os.Args[1] {
	case "serve":
		serve()
	case "load":
		fs := flag.NewFlagSet("load", flag.ExitOnError)
		url := fs.String("url", "", "the URL to GET")
		n := fs.Int("n", 2000, "requests to time")
		fs.Parse(os.Args[2:])
		fmt.Printf("%.1f\n", load(*url, *n))
	case "keepalive":
		fs := flag.NewFlagSet("keepalive", flag.ExitOnError)
		url := fs.String("url", "", "the URL to GET")
		c := fs.Int("c", 20, "clients, one connection each")
		token := fs.String("token", "", "a bearer token to send")
		h2 := fs.Bool("h2", false, "HTTP/2 (TLS only) instead of HTTP/1.1")
		streams := fs.Int("streams", 1, "requests at a time per client (HTTP/2)")
		limit := fs.Duration("max", time.Minute, "stop sending after this long, refused or not")
		fs.Parse(os.Args[2:])
		keepalive(*url, *c, *token, *h2, *streams, *limit)
	default:
		log.Fatalf("unknown command %q", os.Args[1])
	}
}

func serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})}
	go srv.Serve(ln)
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, os.Stdin) // until the parent closes our input
	srv.Close()
}

func load(url string, n int) float64 {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
	get := func() {
		resp, err := client.Get(url)
		if err != nil {
			log.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || string(body) != "ok" {
			log.Fatalf("GET %s: %v %d %q", url, err, resp.StatusCode, body)
		}
	}
	for i := 0; i < 50; i++ {
		get()
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		get()
	}
	return float64(n) / time.Since(start).Seconds()
}

// tally is one client's count of what its requests met.
type tally struct {
	Status map[int]int `json:"status"`
	Errors int         `json:"errors"`
	Dials  int         `json:"dials"`
	Last   string      `json:"last_error,omitempty"`
	mu     sync.Mutex
}

func (t *tally) add(status int, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.Errors++
		t.Last = err.Error()
		return
	}
	t.Status[status]++
}

// keepalive runs the clients until each found the listener closed (a refused dial), then
// prints their tallies.
func keepalive(url string, clients int, token string, h2 bool, streams int, limit time.Duration) {
	if !h2 {
		streams = 1
	}
	end := time.Now().Add(limit)
	var started sync.WaitGroup
	started.Add(clients)
	var done sync.WaitGroup
	tallies := make([]*tally, clients)
	for i := range tallies {
		t := &tally{Status: map[int]int{}}
		tallies[i] = t
		var refused atomic.Bool
		dialer := &net.Dialer{}
		tr := &http.Transport{
			MaxConnsPerHost:     1,
			MaxIdleConnsPerHost: 1,
			DisableCompression:  true,
			ForceAttemptHTTP2:   h2,
			TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := dialer.DialContext(ctx, network, addr)
				if errors.Is(err, syscall.ECONNREFUSED) {
					refused.Store(true)
				} else if err == nil {
					t.mu.Lock()
					t.Dials++
					t.mu.Unlock()
				}
				return conn, err
			},
		}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{} // HTTP/1.1 only
		}
		client := &http.Client{Transport: tr}
		var first sync.Once
		for s := 0; s < streams; s++ {
			done.Add(1)
			go func() {
				defer done.Done()
				for !refused.Load() && time.Now().Before(end) {
					req, _ := http.NewRequest("GET", url, nil)
					if token != "" {
						req.Header.Set("Authorization", "Bearer "+token)
					}
					resp, err := client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						t.add(resp.StatusCode, nil)
						first.Do(started.Done)
					} else if !refused.Load() {
						t.add(0, err)
					}
				}
			}()
		}
	}
	started.Wait()
	fmt.Println("started")
	done.Wait()
	enc := json.NewEncoder(os.Stdout)
	for _, t := range tallies {
		enc.Encode(t)
	}
}
