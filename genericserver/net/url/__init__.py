"""Go's net/url package: url.go (package)."""
