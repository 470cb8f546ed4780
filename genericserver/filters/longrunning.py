"""Port of k8s.io/apiserver/pkg/server/filters/longrunning.go (v1.36.0).

Long-running requests (watches, proxies, exec, profiles) are exempt from the request timeout,
the wait group and the max-in-flight limit; this is the predicate the chain uses to tell them.
"""

from __future__ import annotations

from typing import Iterable

from genericserver.requestinfo import LongRunningRequestCheck, RequestInfo


def basic_long_running_request_check(long_running_verbs: Iterable[str], long_running_subresources: Iterable[str]) -> LongRunningRequestCheck:
    """True for a listed verb, a resource request on a listed subresource, or ``/debug/pprof/``."""
    verbs = frozenset(long_running_verbs)
    subresources = frozenset(long_running_subresources)

    def is_long_running(environ: dict, info: RequestInfo) -> bool:
        if info.verb in verbs:
            return True
        if info.is_resource_request and info.subresource in subresources:
            return True
        return not info.is_resource_request and info.path.startswith("/debug/pprof/")

    return is_long_running
