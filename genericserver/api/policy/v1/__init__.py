"""k8s.io/api/policy/v1 (package): PodDisruptionBudget and Eviction."""
