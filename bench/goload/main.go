// Command goload is the Go side of bench/versus_go.py (make bench): the same load client for
// every server, and a bare net/http handler to measure against.
//
//	goload serve             serves GET anything -> 200 "ok" on 127.0.0.1 port 0, prints the port,
//	                         and runs until its standard input closes
//	goload load -url URL -n N
//	                         sends N GETs one after the other on one keep-alive connection (after
//	                         50 to warm up) and prints the rate in requests per second
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
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
