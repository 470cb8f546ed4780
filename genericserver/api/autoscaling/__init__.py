"""k8s.io/api/autoscaling (package)."""
