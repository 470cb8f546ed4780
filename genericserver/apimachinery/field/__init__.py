"""k8s.io/apimachinery/pkg/util/validation/field (package): field paths and validation errors."""
