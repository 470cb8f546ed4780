"""k8s.io/apiserver/pkg/registry (package): the storage side of a served resource."""
