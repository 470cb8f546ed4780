"""k8s.io/apimachinery/pkg/runtime (package)."""
