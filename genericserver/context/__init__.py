"""Go's context package: context.go (package)."""
