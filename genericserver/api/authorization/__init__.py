"""k8s.io/api/authorization (package)."""
