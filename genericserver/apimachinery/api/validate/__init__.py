"""k8s.io/apimachinery/pkg/api/validate (package)."""
