"""Go's net/http/internal package: chunked.go, and the HTTP/2 server Go 1.27 moved under it (package)."""
