// bench/versus_go.py's Go side: a bare net/http server and a load client; golang.org/x/net/http2 for
// keepalive -h2 only (its transport takes any net.Conn, so goaway.go can see the GOAWAY frames).
module genericserver.bench/goload

go 1.26.0

require golang.org/x/net v0.49.0

require golang.org/x/text v0.33.0 // indirect
