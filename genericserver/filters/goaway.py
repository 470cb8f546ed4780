"""Port of k8s.io/apiserver/pkg/server/filters/goaway.go (v1.36.0): WithProbabilisticGoaway.

A long-lived HTTP/2 client (client-go keeps one connection per apiserver) never reconnects on its
own, so after a rolling update all clients can sit on the replicas that came up first. With
``--goaway-chance`` each HTTP/2 request has that chance of getting ``Connection: close`` on its
answer, which Go's HTTP/2 server (and :mod:`genericserver.net.http.internal.http2.server`) turns into a graceful
GOAWAY: the requests in flight on the connection, watches included, run on; the client's next
ones open a new connection, which the load balancer may give to another replica.

HTTP/1 requests are left alone: there the header would close the connection under the answer.
The filter does not look at long-running requests; a watch that draws the GOAWAY keeps
streaming until it ends on its own (Go's ``TestClientReceivedGOAWAY``).
"""

from __future__ import annotations

import random
from typing import Any, Callable, Iterable, Optional

from genericserver.wsgi import header_set


class ProbabilisticGoawayDecider:
    """Go's ``probabilisticGoawayDecider``: GOAWAY when the next draw in [0, 1) is below the chance."""

    def __init__(self, chance: float, next_float: Callable[[], float]):
        self.chance, self.next = chance, next_float

    def goaway(self, environ: dict) -> bool:
        return self.next() < self.chance


def with_probabilistic_goaway(inner: Callable, chance: float, rng: Optional[random.Random] = None) -> Callable:
    """Wrap ``inner``: an HTTP/2 request whose draw falls under ``chance`` gets ``Connection: close``.

    ``rng`` is the source of draws (a seeded one makes a run repeatable; Go draws from a pool of
    generators seeded at random)."""
    decider = ProbabilisticGoawayDecider(chance, (rng or random.Random()).random)
    return with_goaway(inner, decider)


def with_goaway(inner: Callable, decider: Any) -> Callable:
    """Go's ``goaway`` handler: ask ``decider`` for each HTTP/2 request."""

    def app(environ: dict, start_response: Callable) -> Iterable[bytes]:
        if environ.get("SERVER_PROTOCOL") == "HTTP/2.0" and decider.goaway(environ):
            # a GOAWAY once this answer is out; the connection closes when its streams are done
            return inner(environ, header_set(start_response, "Connection", "close"))
        return inner(environ, start_response)

    return app
