"""github.com (package): ports of third-party Go modules the apiserver imports, at their import paths (no Go twin)."""
