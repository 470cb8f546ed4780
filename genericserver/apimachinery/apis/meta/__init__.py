"""k8s.io/apimachinery/pkg/apis/meta (package)."""
