"""Go's net/textproto package: reader.go (package)."""
