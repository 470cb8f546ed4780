"""k8s.io/apiserver/pkg/endpoints/handlers (package): the REST verbs' handlers."""
