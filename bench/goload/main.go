// Command goload is the Go side of bench/versus_go.py (make bench): the same load client for
// every server, and a bare net/http handler to measure against.
//
//	goload serve             serves GET anything -> 200 "ok" on 127.0.0.1 port 0, prints the port,
//	                         and runs until its standard input closes
//	goload load -url URL -n N [-c C] [-d D] [-token T] [-ca FILE] [-h2] [-has TEXT]
//	                         sends N GETs one after the other on one keep-alive connection (after
//	                         50 to warm up) and prints the rate in requests per second; every
//	                         answer must be 200 "ok", or 200 with TEXT in its body (-has). With -c,
//	                         C clients share the N GETs, each on a keep-alive connection of its own
//	                         (HTTP/1.1, or HTTP/2 with -h2); with -d they send for D instead of
//	                         counting; -token sends a bearer token, -ca trusts that CA for https
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
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
		fs.StringVar(&o.url, "url", "", "the URL to GET")
		fs.IntVar(&o.n, "n", 2000, "requests to time")
		fs.IntVar(&o.clients, "c", 1, "clients, each on a keep-alive connection of its own")
		fs.DurationVar(&o.duration, "d", 0, "send for this long instead of counting to -n")
		fs.StringVar(&o.token, "token", "", "a bearer token to send")
		fs.StringVar(&o.ca, "ca", "", "a PEM file of the CA to trust for https")
		fs.BoolVar(&o.h2, "h2", false, "HTTP/2 (https only) instead of HTTP/1.1")
		fs.StringVar(&o.has, "has", "", "a text every answer's body must contain (instead of being \"ok\")")
		fs.Parse(os.Args[2:])
		fmt.Printf("%.1f\n", load(o))
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

// loadOptions are load's flags.
type loadOptions struct {
	url      string
	n        int
	clients  int
	duration time.Duration
	token    string
	ca       string
	h2       bool
	has      string
}

func load(o loadOptions) float64 {
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
	get := func(client *http.Client) {
		req, err := http.NewRequest("GET", o.url, nil)
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
			log.Fatalf("GET %s: %v %d %q", o.url, err, resp.StatusCode, body)
		}
	}
	// a transport each, so that each client keeps a connection of its own
	clients := make([]*http.Client, max(o.clients, 1))
	for i := range clients {
		clients[i] = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true,
			TLSClientConfig: tlsConfig, ForceAttemptHTTP2: o.h2}}
		for j := 0; j < 50; j++ {
			get(clients[i])
		}
	}
	var sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(o.duration)
	for i, client := range clients {
		share := o.n / len(clients)
		if i < o.n%len(clients) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; o.duration > 0 && time.Now().Before(end) || o.duration <= 0 && k < share; k++ {
				get(client)
				sent.Add(1)
			}
		}()
	}
	wg.Wait()
	return float64(sent.Load()) / time.Since(start).Seconds()
}
