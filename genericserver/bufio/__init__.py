"""Go's bufio package: bufio.go (package)."""
