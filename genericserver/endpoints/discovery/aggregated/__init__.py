"""k8s.io/apiserver/pkg/endpoints/discovery/aggregated (package): discovery of every group in one document."""
