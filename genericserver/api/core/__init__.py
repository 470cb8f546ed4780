"""k8s.io/api/core (package)."""
