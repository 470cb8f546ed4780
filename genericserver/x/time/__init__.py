"""golang.org/x/time (package)."""
