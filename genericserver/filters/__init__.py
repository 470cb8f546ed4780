"""Ports of k8s.io/apiserver/pkg/server/filters (v1.36.0) (package).

One module per Go file: ``longrunning``, ``waitgroup``, ``with_retry_after``, ``maxinflight``,
``timeout``, ``watch_termination``, ``wrap`` (panic recovery and HTTP logging); plus
``cachecontrol`` (from pkg/endpoints/filters) and ``httplog`` (from pkg/server/httplog), which
sit with the server filters here because the chain builder uses them the same way.
"""
