"""k8s.io/api/core/v1 (package): the core group's v1 kinds."""
