"""k8s.io/kubernetes/pkg/apis (package): the internal API types' validation."""
