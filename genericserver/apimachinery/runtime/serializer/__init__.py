"""k8s.io/apimachinery/pkg/runtime/serializer (package): how objects become bytes and back."""
