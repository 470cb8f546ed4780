"""k8s.io/api/authorization/v1 (package): authorization.k8s.io/v1."""
