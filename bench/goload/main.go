// Command goload is the Go side of bench/versus_go.py (make bench): the same load client for
// every server, and a bare net/http handler to measure against.
//
//	goload serve             serves GET anything -> 200 "ok" on 127.0.0.1 port 0, prints the port,
//	                         and runs until its standard input closes
//	goload load -url URL -n N [-c C] [-d D [-slice S]] [-token T] [-ca FILE] [-h2] [-has TEXT] [-count]
//	                         sends N GETs one after the other on one keep-alive connection (after
//	                         50 to warm up) and prints the rate in requests per second; every
//	                         answer must be 200 "ok", or 200 with TEXT in its body (-has). With -c,
//	                         C clients share the N GETs, each on a keep-alive connection of its own
//	                         (HTTP/1.1, or HTTP/2 with -h2); with -d they send for D instead of
//	                         counting; -token sends a bearer token, -ca trusts that CA for https.
//	                         -url may be given more than once (several servers, one request): each
//	                         URL gets its own clients, and with -d the URLs take turns of S (100ms)
//	                         until each had D, so that what else runs on the machine meanwhile
//	                         slows them alike; each URL's rate is then the median of its turns'
//	                         (a turn the machine took away counts once), one a line, in the
//	                         order of the URLs; -count adds how many answers each URL had, the
//	                         warm-up's too (all the server's work while load ran)
//	goload keepalive -url URL -c C [-token T] [-h2 -streams S]
//	                         C clients, each on its own connection (HTTP/1.1 keep-alive, or HTTP/2
//	                         with S streams at a time), sending GETs until the server refuses new
//	                         connections; prints "started" once every client had an answer, then,
//	                         at the end, one JSON line per client: its answers by status, its
//	                         transport errors, how many connections it dialed and (HTTP/2, whose
//	                         transport is then golang.org/x/net/http2's) when its first GOAWAY came
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
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
		var o loadOptions
		fs.Var(&o.urls, "url", "the URL to GET (again for another server)")
		fs.IntVar(&o.n, "n", 2000, "requests to time")
		fs.IntVar(&o.clients, "c", 1, "clients, each on a keep-alive connection of its own")
		fs.DurationVar(&o.duration, "d", 0, "send for this long instead of counting to -n")
		fs.DurationVar(&o.slice, "slice", 100*time.Millisecond, "with -d and several URLs, the length of a turn")
		fs.StringVar(&o.token, "token", "", "a bearer token to send")
		fs.StringVar(&o.ca, "ca", "", "a PEM file of the CA to trust for https")
		fs.BoolVar(&o.h2, "h2", false, "HTTP/2 (https only) instead of HTTP/1.1")
		fs.StringVar(&o.has, "has", "", "a text every answer's body must contain (instead of being \"ok\")")
		count := fs.Bool("count", false, "print each URL's number of answers after its rate")
		fs.Parse(os.Args[2:])
		for _, t := range load(o) {
			if *count {
				fmt.Printf("%.1f %d\n", t.rate, t.answers)
			} else {
				fmt.Printf("%.1f\n", t.rate)
			}
		}
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

// urls is the -url flag: given again, it adds a URL.
type urls []string

func (u *urls) String() string     { return strings.Join(*u, " ") }
func (u *urls) Set(v string) error { *u = append(*u, v); return nil }

// loadOptions are load's flags.
type loadOptions struct {
	urls     urls
	n        int
	clients  int
	duration time.Duration
	slice    time.Duration
	token    string
	ca       string
	h2       bool
	has      string
}

// target is one URL with its clients, and what they measured: the rate of each turn, the answers
// (the warm-up's too), and at the end the median turn's rate.
type target struct {
	url     string
	clients []*http.Client
	turns   []float64
	answers int64
	rate    float64
}

func load(o loadOptions) []*target {
	tlsConfig := &tls.Config{}
	if o.ca != "" {
		pem, err := os.ReadFile(o.ca)
		if err != nil {
			log.Fatal(err)
		}
		tlsConfig.RootCAs = x509.NewCertPool()
		if !tlsConfig.RootCAs.AppendCertsFromPEM(pem) {
			log.Fatalf("no certificate in %s", o.ca)
		}
	}
	get := func(url string, client *http.Client) {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			log.Fatal(err)
		}
		if o.token != "" {
			req.Header.Set("Authorization", "Bearer "+o.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ok := string(body) == "ok"
		if o.has != "" {
			ok = strings.Contains(string(body), o.has)
		}
		if err != nil || resp.StatusCode != 200 || !ok {
			log.Fatalf("GET %s: %v %d %q", url, err, resp.StatusCode, body)
		}
	}
	// run is one turn of t: every client sends at once, each for d, or its share of n when d is 0
	run := func(t *target, d time.Duration, n int) {
		var answers atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		end := start.Add(d)
		for i, client := range t.clients {
			share := n / len(t.clients)
			if i < n%len(t.clients) {
				share++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := 0; d > 0 && time.Now().Before(end) || d <= 0 && k < share; k++ {
					get(t.url, client)
					answers.Add(1)
				}
			}()
		}
		wg.Wait()
		t.turns = append(t.turns, float64(answers.Load())/time.Since(start).Seconds())
		t.answers += answers.Load()
	}
	if len(o.urls) == 0 {
		log.Fatal("load: no -url")
	}
	targets := make([]*target, len(o.urls))
	for i, url := range o.urls {
		t := &target{url: url}
		// a transport each, so that each client keeps a connection of its own
		for range max(o.clients, 1) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true,
				TLSClientConfig: tlsConfig, ForceAttemptHTTP2: o.h2}}
			for range 50 {
				get(url, client)
				t.answers++
			}
			t.clients = append(t.clients, client)
		}
		targets[i] = t
	}
	if o.duration > 0 {
		for left := o.duration; left > 0; left -= o.slice {
			for _, t := range targets {
				run(t, min(o.slice, left), 0)
			}
		}
	} else {
		for _, t := range targets {
			run(t, 0, o.n)
		}
	}
	for _, t := range targets {
		slices.Sort(t.turns)
		if k := len(t.turns); k%2 == 1 {
			t.rate = t.turns[k/2]
		} else {
			t.rate = (t.turns[k/2-1] + t.turns[k/2]) / 2
		}
	}
	return targets
}

// tally is one client's count of what its requests met.
type tally struct {
	Status map[int]int `json:"status"`
	Errors int         `json:"errors"`
	Dials  int         `json:"dials"`
	Last   string      `json:"last_error,omitempty"`
	GoAway int64       `json:"goaway_unix_us,omitempty"` // HTTP/2: when the first GOAWAY arrived
	goAway atomic.Int64
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
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if errors.Is(err, syscall.ECONNREFUSED) {
				refused.Store(true)
			} else if err == nil {
				t.mu.Lock()
				t.Dials++
				t.mu.Unlock()
			}
			return conn, err
		}
		var client *http.Client
		if h2 {
			client = &http.Client{Transport: goAwayTransport(dial, &t.goAway)}
		} else {
			client = &http.Client{Transport: &http.Transport{
				MaxConnsPerHost:     1,
				MaxIdleConnsPerHost: 1,
				DisableCompression:  true,
				TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
				TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only
				DialContext:         dial,
			}}
		}
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
		t.GoAway = t.goAway.Load()
		enc.Encode(t)
	}
}
