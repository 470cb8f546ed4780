"""k8s.io/apimachinery/pkg/labels (package): label selectors."""
