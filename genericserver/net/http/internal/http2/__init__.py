"""Go's net/http/internal/http2 package (Go 1.27): the HTTP/2 server (package)."""
