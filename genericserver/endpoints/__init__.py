"""Ports of k8s.io/apiserver/pkg/endpoints/filters (v1.36.0) (package).

One module per Go file of that folder, under the Go file's name (``request_received_time.go`` is
``request_received_time.py``; ``impersonation/impersonation.go`` is ``impersonation.py``).
"""
