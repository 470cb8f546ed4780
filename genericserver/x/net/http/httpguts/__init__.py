"""golang.org/x/net/http/httpguts, as vendored in Go 1.26.8: httplex.go (package)."""
