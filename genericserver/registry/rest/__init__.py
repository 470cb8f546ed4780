"""k8s.io/apiserver/pkg/registry/rest (package)."""
