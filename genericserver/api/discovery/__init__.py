"""k8s.io/api/discovery (package)."""
