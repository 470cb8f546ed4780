"""tests/rawconn.py, the raw client of the shutdown corpora's replays (no Go twin)."""

from __future__ import annotations

import socket
import ssl
import threading
import time

from rawconn import RawConn

WAIT = 10.0


def test_a_close_notify_ends_the_connection_as_eof(tls_cert):
    """A server that answers and sends close_notify, then keeps the TCP connection open: the
    client reports EOF (CPython 3.11's SSLObject.read returns b"" on a close_notify, and the
    reader used to spin on it forever, holding its lock)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*tls_cert)
    ln = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def server() -> None:
        raw, _ = ln.accept()
        with ctx.wrap_socket(raw, server_side=True) as tls:
            tls.recv(100)
            tls.sendall(b"answer")
            tls.unwrap()  # close_notify; the TCP connection stays open until the test is done
            done.wait(WAIT)

    t = threading.Thread(target=server, name="close-notify-server")
    t.start()
    client_ctx = ssl.create_default_context(cafile=tls_cert[0])
    conn = RawConn(ln.getsockname()[1], time.monotonic, tls=client_ctx)
    try:
        conn.send(b"question")
        assert conn.ended()
        assert conn.end == "EOF" and bytes(conn.received) == b"answer"
    finally:
        done.set()
        conn.close()
        t.join(WAIT)
        ln.close()
