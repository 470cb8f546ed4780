"""Ports of k8s.io/apiserver/pkg/endpoints/filters (v1.36.0) (package)."""
