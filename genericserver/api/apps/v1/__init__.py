"""k8s.io/api/apps/v1 (package): Deployments."""
