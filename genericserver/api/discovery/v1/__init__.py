"""k8s.io/api/discovery/v1 (package): EndpointSlices."""
