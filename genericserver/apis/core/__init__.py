"""k8s.io/kubernetes/pkg/apis/core (package)."""
