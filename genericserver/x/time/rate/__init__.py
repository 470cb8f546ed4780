"""golang.org/x/time/rate (v0.14.0): rate.go (package)."""
