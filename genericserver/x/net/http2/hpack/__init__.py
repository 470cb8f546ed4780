"""golang.org/x/net/http2/hpack (v0.49.0): encode.go, hpack.go, huffman.go, tables.go, static_table.go (package)."""
