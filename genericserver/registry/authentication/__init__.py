"""k8s.io/kubernetes/pkg/registry/authentication (package): the authentication group's storages."""
