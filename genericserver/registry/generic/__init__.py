"""k8s.io/apiserver/pkg/registry/generic (package)."""
