"""What the in-process benchmarks serve: a kubectl-like request, a trivial app, and a socket without a kernel (no Go twin)."""

from __future__ import annotations

REQUEST = (b"GET /api/v1/namespaces/default/pods/p1 HTTP/1.1\r\nHost: 127.0.0.1:6443\r\n"
           b"User-Agent: kubectl/v1.36.0\r\nAccept: application/json\r\nAccept-Encoding: gzip\r\n\r\n")
BODY = b"hello"


def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(BODY)))])
    return [BODY]


class FakeSocket:
    """Hands out ``data`` and swallows what is sent: the request path without the kernel."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def recv(self, n: int) -> bytes:
        chunk = self.data[self.pos : self.pos + n]
        self.pos += len(chunk)
        return chunk

    def sendall(self, data: bytes) -> None:
        pass

    def settimeout(self, t) -> None:
        pass

    def fileno(self) -> int:
        return -1  # (so the background read leaves it alone: bench_httpserver measures it on its own)

    def getsockname(self):
        return ("127.0.0.1", 6443)
