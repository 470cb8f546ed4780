"""The h2 library's part of one HTTP/2 request, alone: what ``bench.instructions`` subtracts (no Go twin).

The server side of ``bench.wire_clients``' exchange, through h2 only (the server's connection
class, whose HPACK coding is a port of Go's): the client's HEADERS frames
are made first (always ``MAX`` of them, so that making them costs the same in every run), then the
server's connection reads ``n`` of them and answers each as ``genericserver``'s HTTP/2 server does
(a HEADERS frame with the headers the default chain sends, two bytes of DATA, the end of the
stream), HPACK and framing included. No socket, no TLS, no thread.
"""

from __future__ import annotations

import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

from bench.wire_clients import H2_HEADERS
from genericserver.net.http.internal.http2.h2conn import GracefulH2Connection
from genericserver.net.http.internal.http2.server import h2_config

MAX = 400
RESPONSE = ((b":status", b"200"), (b"content-type", b"text/plain"), (b"content-length", b"2"),
            (b"cache-control", b"no-cache, private"), (b"audit-id", b"9580fb7c-84c5-472f-92a4-52c554bd1514"),
            (b"date", b"Wed, 02 Dec 2026 07:00:03 GMT"))


def frames() -> tuple[h2.connection.H2Connection, h2.connection.H2Connection, list[bytes]]:
    """A client and a server connection past their prefaces, and ``MAX`` requests' bytes."""
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    server = GracefulH2Connection(config=h2_config())  # the server's own (Go's HPACK coding, h2conn.py)
    # the client made every request before any answer: none may count against a stream limit
    server.local_settings = h2.settings.Settings(client=False, initial_values={
        h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: 1 << 30, h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: 1 << 20})
    client.initiate_connection()
    client.increment_flow_control_window(1 << 30)  # never short of window: nothing read back
    server.initiate_connection()
    server.receive_data(client.data_to_send())
    client.receive_data(server.data_to_send())
    requests = []
    for _ in range(MAX):
        client.send_headers(client.get_next_available_stream_id(), H2_HEADERS, end_stream=True)
        requests.append(client.data_to_send())
    return client, server, requests


def serve(n: int) -> tuple[h2.connection.H2Connection, bytes]:
    """The server's side of ``n`` requests; the client (for a test to read the answers with) and
    what the server sent."""
    client, server, requests = frames()
    sent = []
    for data in requests[:n]:
        for ev in server.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                server.send_headers(ev.stream_id, RESPONSE)
                server.send_data(ev.stream_id, b"ok", end_stream=True)
        sent.append(server.data_to_send())
    return client, b"".join(sent)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
