"""Ports of k8s.io/apiserver/pkg/server/filters (v1.36.0) (package).

One module per Go file of that folder: ``longrunning``, ``waitgroup``, ``with_retry_after``,
``maxinflight``, ``timeout``, ``watch_termination``, ``wrap`` (panic recovery and HTTP logging)
and ``cors``. The chain builder also uses ``genericserver.endpoints.filters.cachecontrol`` (from
pkg/endpoints/filters) and ``genericserver.httplog`` (pkg/server/httplog), each in the folder of
its Go file.
"""
