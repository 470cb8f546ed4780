"""k8s.io/api/coordination (package)."""
