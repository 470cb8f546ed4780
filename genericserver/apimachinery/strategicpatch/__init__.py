"""k8s.io/apimachinery/pkg/util/strategicpatch (package): strategic merge patch."""
