"""k8s.io/kubernetes/pkg/registry/authorization (package): the authorization group's storages."""
