"""k8s.io/api/authentication/v1 (package): authentication.k8s.io/v1."""
