"""k8s.io/api/coordination/v1 (package): Lease, the kubelet's heartbeat."""
