"""k8s.io/apimachinery/pkg/api (package)."""
