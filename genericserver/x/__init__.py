"""The golang.org/x packages the port needs, at their import paths under golang.org/x/ (package)."""
