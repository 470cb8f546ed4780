"""Serve a WSGI app on our HTTP server for a benchmark, and stop it again (no Go twin)."""

from __future__ import annotations

from typing import Callable

from genericserver import runtime as rt
from genericserver.context import context as gocontext
from genericserver.net.http import server as hs


def serve(handler: Callable) -> tuple[int, Callable[[], None]]:
    """Start ``handler`` on 127.0.0.1 (a free port); return the port and a function that stops it."""
    srv = hs.Server(handler)
    ln = hs.listen()

    def run() -> None:
        try:
            srv.serve(ln)
        except hs.ServerClosed:
            pass

    g = rt.go(run, name="bench-serve")

    def stop() -> None:
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 5.0)
        srv.shutdown(ctx)
        cancel()
        g.join(5.0)

    return ln.getsockname()[1], stop


def serve_werkzeug(handler: Callable) -> tuple[int, Callable[[], None]]:
    """The same on werkzeug's own threaded server (it closes every connection)."""
    import logging
    import threading

    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    srv = make_server("127.0.0.1", 0, handler, threaded=True)
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, name="bench-werkzeug")
    t.start()

    def stop() -> None:
        srv.shutdown()
        srv.server_close()
        t.join(5.0)

    return srv.server_port, stop
