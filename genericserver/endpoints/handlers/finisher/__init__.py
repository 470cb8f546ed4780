"""k8s.io/apiserver/pkg/endpoints/handlers/finisher (package): a storage call with the request's deadline."""
