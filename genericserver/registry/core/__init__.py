"""k8s.io/kubernetes/pkg/registry/core (package): the core group's registries, as far as the served cluster needs them."""
