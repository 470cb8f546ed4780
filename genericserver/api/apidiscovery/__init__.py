"""k8s.io/api/apidiscovery (package)."""
