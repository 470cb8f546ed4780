"""Ports of k8s.io/apiserver/pkg/endpoints/filters (v1.36.0) (package).

One module per Go file of that folder, under the Go file's name (``request_received_time.go`` is
``request_received_time.py``). ``impersonation.py`` is ``impersonation/impersonation.go``, the one
file ported of that sub-package, named after it. The filters of ``pkg/server/filters`` are in
:mod:`genericserver.filters`.
"""
