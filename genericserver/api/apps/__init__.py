"""k8s.io/api/apps (package)."""
