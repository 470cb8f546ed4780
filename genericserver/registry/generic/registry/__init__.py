"""k8s.io/apiserver/pkg/registry/generic/registry (package)."""
