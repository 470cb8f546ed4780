"""Clients that load a server over loopback from one thread, for ``bench.instructions`` (no Go twin).

Each runs in the calling thread, so that callgrind's per-thread counts set the client apart from
the server: ``h2_one_stream_at_a_time`` opens one HTTP/2 connection over TLS (ALPN ``h2``) and
sends its GETs one after the other, each waiting for the end of the last stream, as a client-go
request loop does; ``h1_four_connections`` keeps four HTTP/1.1 keep-alive connections and sends
one GET on each before it reads the four answers, so that four requests are in the server at once.
"""

from __future__ import annotations

import socket
import ssl

import h2.config
import h2.connection
import h2.events

PATH = "/api/v1/namespaces/default/pods/p1"
H1_REQUEST = (f"GET {PATH} HTTP/1.1\r\nHost: 127.0.0.1:6443\r\nUser-Agent: kubectl/v1.36.0\r\n"
              "Accept: application/json\r\nAccept-Encoding: gzip\r\n\r\n").encode()
H2_HEADERS = ((":method", "GET"), (":path", PATH), (":scheme", "https"), (":authority", "127.0.0.1:6443"),
              ("user-agent", "kubectl/v1.36.0"), ("accept", "application/json"), ("accept-encoding", "gzip"))


class H2OneStreamAtATime:
    """One HTTP/2 connection; :meth:`get` sends a GET and reads until its stream ends."""

    def __init__(self, port: int, ca_file: str):
        ctx = ssl.create_default_context(cafile=ca_file)
        ctx.set_alpn_protocols(["h2"])
        self.sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
        if self.sock.selected_alpn_protocol() != "h2":
            raise RuntimeError("the server did not choose h2")
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.sock.sendall(self.conn.data_to_send())

    def get(self) -> None:
        sid = self.conn.get_next_available_stream_id()
        self.conn.send_headers(sid, H2_HEADERS, end_stream=True)
        self.sock.sendall(self.conn.data_to_send())
        status = None
        while True:
            data = self.sock.recv(65536)
            if not data:
                raise RuntimeError("the server closed the connection")
            for ev in self.conn.receive_data(data):
                if isinstance(ev, h2.events.ResponseReceived) and ev.stream_id == sid:
                    status = dict(ev.headers)[b":status"]
                elif isinstance(ev, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.ConnectionTerminated):
                    raise RuntimeError(f"the server sent a GOAWAY: {ev}")
                elif isinstance(ev, h2.events.StreamEnded) and ev.stream_id == sid:
                    if status != b"200":
                        raise RuntimeError(f"answered {status!r}")
                    out = self.conn.data_to_send()
                    if out:
                        self.sock.sendall(out)
                    return
            out = self.conn.data_to_send()
            if out:
                self.sock.sendall(out)

    def close(self) -> None:
        self.sock.close()


class H1Connections:
    """``count`` keep-alive HTTP/1.1 connections; :meth:`get` sends a GET on each, then reads each answer."""

    def __init__(self, port: int, count: int = 4):
        self.socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
        self.files = [s.makefile("rb") for s in self.socks]

    def get(self) -> None:
        for s in self.socks:
            s.sendall(H1_REQUEST)
        for f in self.files:
            status = f.readline()
            if not status.startswith(b"HTTP/1.1 200 "):
                raise RuntimeError(f"answered {status!r}")
            length = 0
            while True:
                line = f.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            f.read(length)

    def close(self) -> None:
        for f, s in zip(self.files, self.socks):
            f.close()
            s.close()
