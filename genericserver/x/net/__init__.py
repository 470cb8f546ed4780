"""golang.org/x/net (package)."""
