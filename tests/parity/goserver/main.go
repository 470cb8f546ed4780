// Command goserver is the reference of the parity corpus (tests/parity/README.md): Go's net/http
// HTTP/1 server, configured as k8s.io/apiserver v0.36.0's pkg/server/secure_serving.go configures
// it, but on plain TCP (no TLS, so HTTP/1 only). It listens on 127.0.0.1 port 0, prints the port on
// its first stdout line and serves until its standard input is closed.
//
// Handlers (chosen by r.URL.Path, not by a ServeMux, so odd request targets reach them as they are):
//
//	/probe-alive  200 "probe-alive\n": the recorder's probe that a connection is still open.
//	/echo         the sample API's /echo (genericserver/sampleapi.py): the response header
//	              "echo: <message query parameter>", Content-Length 0, no body.
//	anything else the reflecting handler (see reflect).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true) // plain TCP: no h2c either
	srv := &http.Server{
		Handler:           http.HandlerFunc(route),
		MaxHeaderBytes:    1 << 20,
		IdleTimeout:       90 * time.Second,
		ReadHeaderTimeout: 32 * time.Second,
		Protocols:         &protocols,
		ErrorLog:          log.New(os.Stderr, "goserver: ", 0),
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, ln.Addr().(*net.TCPAddr).Port)
	out.Flush()
	go func() {
		io.Copy(io.Discard, os.Stdin) // the recorder closes our stdin to stop us
		os.Exit(0)
	}()
	log.Fatal(srv.Serve(ln))
}

func route(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/probe-alive":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", "12")
		io.WriteString(w, "probe-alive\n")
	case "/echo":
		// as sampleapi.echo: the message in a header, an explicit Content-Length of 0, no body
		w.Header().Set("echo", r.URL.Query().Get("message"))
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	default:
		reflect(w, r)
	}
}

// reflection is what the handler saw. Strings carry the raw bytes, one rune per byte (latin-1),
// so that JSON can hold any byte and Python's WSGI strings (latin-1 too) compare equal.
type reflection struct {
	Method           string              `json:"method"`
	RequestURI       string              `json:"request_uri"`
	Path             string              `json:"path"`
	RawQuery         string              `json:"raw_query"`
	Proto            string              `json:"proto"`
	Host             string              `json:"host"`
	Headers          map[string][]string `json:"headers"`
	ContentLength    int64               `json:"content_length"`
	TransferEncoding []string            `json:"transfer_encoding"`
	Body             string              `json:"body"`
	BodyError        *string             `json:"body_error"`
	Trailers         map[string][]string `json:"trailers"`
}

// shapingParams are the query parameters that ask for a response other than the reflection.
var shapingParams = []string{"status", "header", "body", "flush", "cl", "sniff"}

// reflect reads the whole body (unless ?read=0) and answers 200 with the reflection as JSON and
// an explicit Content-Length. A query with any of shapingParams asks for another response instead:
//
//	status=N            the status code (default 200)
//	header=Name:Value   a response header (repeatable; set with Header().Add)
//	body=text           the response body (default empty); Content-Type text/plain unless
//	                    a header= sets one or sniff=1 lets Go sniff it
//	cl=N                an explicit Content-Length header
//	flush=1             flush the header before writing the body
func reflect(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var body []byte
	var bodyErr error
	if q.Get("read") != "0" {
		body, bodyErr = io.ReadAll(r.Body)
	}
	for _, p := range shapingParams {
		if q.Has(p) {
			shaped(w, q)
			return
		}
	}
	out := reflection{
		Method:        latin1(r.Method),
		RequestURI:    latin1(r.RequestURI),
		Path:          latin1(r.URL.Path),
		RawQuery:      latin1(r.URL.RawQuery),
		Proto:         latin1(r.Proto),
		Host:          latin1(r.Host),
		Headers:       latin1Header(r.Header),
		ContentLength: r.ContentLength,
		Body:          latin1(string(body)),
		Trailers:      latin1Header(r.Trailer),
	}
	for _, te := range r.TransferEncoding {
		out.TransferEncoding = append(out.TransferEncoding, latin1(te))
	}
	if bodyErr != nil {
		text := latin1(bodyErr.Error())
		out.BodyError = &text
	}
	data, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

func shaped(w http.ResponseWriter, q map[string][]string) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	h := w.Header()
	for _, nv := range q["header"] {
		name, value, _ := strings.Cut(nv, ":")
		h.Add(name, value)
	}
	body := get("body")
	if body != "" && get("sniff") != "1" && len(h.Values("Content-Type")) == 0 {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	if cl := get("cl"); cl != "" {
		h.Set("Content-Length", cl)
	}
	code := http.StatusOK
	if s := get("status"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 999 {
			n = http.StatusOK
		}
		code = n
	}
	w.WriteHeader(code)
	if get("flush") == "1" {
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, body)
}

func latin1(s string) string {
	runes := make([]rune, len(s))
	for i := 0; i < len(s); i++ {
		runes[i] = rune(s[i])
	}
	return string(runes)
}

func latin1Header(h http.Header) map[string][]string {
	if h == nil {
		return nil
	}
	out := make(map[string][]string, len(h)) // encoding/json sorts the names
	for k, values := range h {
		var vs []string
		for _, v := range values {
			vs = append(vs, latin1(v))
		}
		out[latin1(k)] = vs
	}
	return out
}
