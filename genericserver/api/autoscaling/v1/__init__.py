"""k8s.io/api/autoscaling/v1 (package): Scale, the scale subresource's kind."""
