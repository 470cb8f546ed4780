"""k8s.io/kubernetes/pkg/printers/internalversion (package)."""
