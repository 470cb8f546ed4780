"""golang.org/x/net/http (package)."""
