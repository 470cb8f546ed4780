"""k8s.io/kube-openapi (package): the OpenAPI documents of what the server serves."""
