"""k8s.io/api/authentication (package)."""
