"""k8s.io/kubernetes pkg/registry/policy (package): the PodDisruptionBudget registry."""
