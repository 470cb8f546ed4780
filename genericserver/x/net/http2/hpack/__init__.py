"""golang.org/x/net/http2/hpack (v0.49.0): the encoding half, encode.go and what it uses (package)."""
