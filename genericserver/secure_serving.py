"""Port of k8s.io/apiserver/pkg/server/secure_serving.go (v1.36.0), with config.go's ``SecureServingInfo``, the type whose ``Serve`` it defines.

``SecureServingInfo.serve`` builds the HTTP server with the apiserver's settings (1 MiB of
headers, 90 s idle and 32 s read-header timeouts, TLS when a certificate is configured) and
hands it to :func:`run_server`, which never blocks: it returns two events and leaves two
goroutines behind,

* ``http-server-shutdown``: waits for the stop event, then shuts the server down with the
  given timeout (an error is only logged, as in Go) and sets *stopped*;
* ``http-server-serve``: serves until the listener closes, then sets *listener stopped*. If
  serving ends although no stop was asked for, Go panics (``Stopped listening on ... due to
  error: ...``) under ``HandleCrash``, which logs ``Observed a panic`` and panics again, and the
  process dies with exit status 2. Here the goroutine raises :class:`StoppedListeningUnexpectedly`
  inside ``utilruntime.handle_crash()``: the same line, then the same death in a process started
  by ``genericserver serve`` (see :mod:`genericserver.apimachinery.utilruntime`); in tests the threads runtime
  records the panic instead.

With a certificate, HTTP/2 is offered first in ALPN (``h2``, then ``http/1.1``) and served by
:mod:`genericserver.net.http.internal.http2.server` with secure_serving.go's settings: 90 s idle timeout, 256 KiB
per-stream upload buffer and frame size, ``--http2-max-streams-per-connection`` streams (100
when 0) and a connection buffer of one stream's times the streams; ``--disable-http2-serving``
offers ``http/1.1`` only.

Differences from Go: the TCP keep-alive period is set with socket options where the platform has
them. A server with ``stop_listening`` (:class:`genericserver.net.http.server.Server`) gets a third,
``http-server-stop-listening``, a ``go_after`` goroutine: the thread that sets the stop event also
turns keep-alives off and shuts the listeners, the first step of the shutdown goroutine's
``Shutdown`` (a speed trick, walkthrough 8.6; ``Shutdown`` finds it done).
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Any, Callable, Optional

from genericserver import klog
from genericserver import runtime as rt
from genericserver.apimachinery import utilruntime
from genericserver.context import context as gocontext
from genericserver.net.http.internal.http2 import server as http2server
from genericserver.net.http.server import Server, ssl_context_from_files

# dead peers (a laptop closed mid-download) must eventually go away
DEFAULT_KEEP_ALIVE_PERIOD = 3 * 60.0


class ServingError(Exception):
    """What Go's Serve and RunServer return as an error."""


class StoppedListeningUnexpectedly(utilruntime.Panic):
    """The serve goroutine's panic: serving ended without anybody asking it to stop."""


@dataclass
class SecureServingInfo:
    """Where and how to serve: a bound listener and, optionally, a certificate and key."""

    listener: Optional[socket.socket] = None
    cert_file: Optional[str] = None
    key_file: Optional[str] = None
    ssl_context: Optional[ssl.SSLContext] = None
    server_factory: Callable[..., Any] = Server
    disable_http2: bool = False  # --disable-http2-serving
    http2_max_streams_per_connection: int = 0  # --http2-max-streams-per-connection (0: 100)

    def address(self) -> str:
        host, port = self.listener.getsockname()[:2]  # type: ignore[union-attr]
        return f"{host}:{port}"

    def tls_config(self) -> Optional[ssl.SSLContext]:
        if self.ssl_context is None and self.cert_file and self.key_file:
            self.ssl_context = ssl_context_from_files(self.cert_file, self.key_file)
        return self.ssl_context

    def serve(self, handler: Callable, shutdown_timeout: float, stop_ch: rt.Event) -> tuple[rt.Event, rt.Event]:
        """Start serving ``handler``; return (stopped, listener_stopped) at once."""
        if self.listener is None:
            raise ServingError("listener must not be nil")
        tls = self.tls_config()
        extra: dict[str, Any] = {}
        if tls is not None and not self.disable_http2:
            # HTTP/2 over TLS, offered first in ALPN, with kube's buffers (http2server.options_for)
            tls.set_alpn_protocols(["h2", "http/1.1"])
            extra["http2"] = http2server.Server(http2server.options_for(self.http2_max_streams_per_connection))
        server = self.server_factory(
            handler,
            max_header_bytes=1 << 20,
            idle_timeout=90.0,  # matches the default keep-alive of Go's HTTP transport
            read_header_timeout=32.0,  # just shy of the request timeout's upper bound
            ssl_context=tls,
            **extra,
        )
        # Go serves TLS only; without a certificate this says so, as Go's deprecated insecure serving did
        kind = "securely" if tls is not None else "insecurely"
        klog.infof("Serving %s on %s", kind, self.address())
        return run_server(server, self.listener, shutdown_timeout, stop_ch)


def _set_keep_alive(ln: socket.socket) -> None:
    # accepted sockets inherit these options on Linux
    try:
        ln.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_KEEPIDLE"):
            ln.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, int(DEFAULT_KEEP_ALIVE_PERIOD))
            ln.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, int(DEFAULT_KEEP_ALIVE_PERIOD))
    except OSError:
        pass


def run_server(server: Any, listener: Any, shutdown_timeout: float, stop_ch: rt.Event) -> tuple[rt.Event, rt.Event]:
    """Serve on ``listener`` until ``stop_ch`` is set; never blocks.

    Returns ``(stopped, listener_stopped)``: *stopped* is set once ``server.shutdown`` returned
    (every active request answered, or the timeout hit); *listener_stopped* once the server no
    longer listens.
    """
    if listener is None:
        raise ServingError("listener must not be nil")
    stopped = rt.event("server-shutdown")
    listener_stopped = rt.event("listener-stopped")
    addr = _address(listener)

    def shut_down_on_stop() -> None:
        try:
            stop_ch.wait()
            ctx, cancel = gocontext.with_timeout(gocontext.background(), shutdown_timeout)
            try:
                server.shutdown(ctx)
            except Exception as err:  # Go only logs a failed shutdown
                klog.errorf("Failed to shutdown server: %s", err)
            finally:
                cancel()
        finally:
            stopped.set()

    def serve_until_closed() -> None:
        with utilruntime.handle_crash():
            try:
                if isinstance(listener, socket.socket):
                    _set_keep_alive(listener)
                err: Optional[BaseException] = None
                try:
                    server.serve(listener)
                except Exception as exc:  # ServerClosed is the normal end
                    err = exc
                msg = f"Stopped listening on {addr}"
                if stop_ch.is_set():
                    klog.info(msg)
                else:
                    raise StoppedListeningUnexpectedly(f"{msg} due to error: {err}")
            finally:
                listener_stopped.set()

    stop_listening = getattr(server, "stop_listening", None)
    if stop_listening is not None:
        # Shutdown's first step, made by the thread that sets stop_ch (a go_after goroutine): Go's
        # goroutine below reaches it microseconds after the close, a woken thread here only once
        # it gets the GIL, behind every busy request thread (walkthrough 8.6). Shutdown finds it done.
        rt.go_after(stop_ch, stop_listening, name="http-server-stop-listening")
    rt.go(shut_down_on_stop, name="http-server-shutdown")
    rt.go(serve_until_closed, name="http-server-serve")
    return stopped, listener_stopped


def _address(listener: Any) -> str:
    try:
        host, port = listener.getsockname()[:2]
        return f"{host}:{port}"
    except Exception:
        return str(listener)
