"""k8s.io/apimachinery/pkg/apis (package)."""
