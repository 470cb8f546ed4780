"""golang.org/x/net/http2 (package)."""
