"""k8s.io/api/apidiscovery/v2 (package): aggregated discovery."""
