"""k8s.io/apimachinery/pkg/fields (package): field selectors."""
