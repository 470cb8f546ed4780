"""golang.org/x/net/http/httpguts, as vendored in Go 1.27: httplex.go (package)."""
