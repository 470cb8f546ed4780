"""k8s.io/apiserver/pkg/endpoints/discovery (package): what the server says it serves."""
