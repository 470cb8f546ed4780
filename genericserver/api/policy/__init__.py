"""k8s.io/api/policy (package)."""
