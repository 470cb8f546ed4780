package main

import (
	"context"
	"crypto/tls"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
)

// goAwayConn is a client's TLS connection that notes when the server's first GOAWAY frame
// arrives (keepalive -h2 prints it: the bench's "every GOAWAY written"). It reads the frame
// headers of what passes through Read; the server's side of HTTP/2 has no preface, only frames.
type goAwayConn struct {
	net.Conn
	at     *atomic.Int64 // unix microseconds of the first GOAWAY read on any of the client's connections
	header []byte        // a frame header read in part
	skip   int           // payload bytes of the current frame not yet read
}

func (c *goAwayConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.scan(p[:n])
	return n, err
}

func (c *goAwayConn) scan(b []byte) {
	const frameHeaderLen, typeGoAway = 9, 0x7
	for len(b) > 0 {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip, b = c.skip-k, b[k:]
			continue
		}
		k := min(frameHeaderLen-len(c.header), len(b))
		c.header, b = append(c.header, b[:k]...), b[k:]
		if len(c.header) < frameHeaderLen {
			return
		}
		if c.header[3] == typeGoAway {
			c.at.CompareAndSwap(0, time.Now().UnixMicro())
		}
		c.skip = int(c.header[0])<<16 | int(c.header[1])<<8 | int(c.header[2])
		c.header = c.header[:0]
	}
}

// goAwayTransport is HTTP/2 over TLS from golang.org/x/net/http2, whose dialer may hand it any
// net.Conn (net/http's own needs a *tls.Conn, which nothing can read through): dial counts each
// connection as keepalive's tallies do, and every connection notes its first GOAWAY in at.
func goAwayTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error), at *atomic.Int64) *http2.Transport {
	return &http2.Transport{
		DisableCompression: true,
		DialTLSContext: func(ctx context.Context, network, addr string, cfg *tls.Config) (net.Conn, error) {
			raw, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(raw, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				raw.Close()
				return nil, err
			}
			return &goAwayConn{Conn: tc, at: at}, nil
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}},
	}
}
