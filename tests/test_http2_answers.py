"""genericserver.net.http.internal.http2's answers as Go's ``responseWriterState.writeChunk`` writes them: a HEAD
ends its stream with the HEADERS (no DATA, whatever the handler writes), ``content-length`` when the
handler is done and its answer fit the first buffer (0 included), and the request's context ends
before the end of the stream goes out (``runHandler``'s deferred ``cancelCtx`` before
``handlerDone``)."""

from __future__ import annotations

import threading

import h2.events

from genericserver.net.http.internal.http2 import responsewriter
from test_http2server import WAIT, serve, text  # noqa: F401 - serve is the fixture

STATUS_405 = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}\n'


def answer(c, sid):
    """(status, headers, DATA frames) of a stream that ended."""
    status, headers, _ = c.response(sid)
    return status, headers, [e.data for e in c.of(h2.events.DataReceived, sid)]


def test_a_head_gets_no_data_and_the_length_of_what_the_handler_wrote(serve):
    # Go: isHeadResp ends the stream with the HEADERS; clen is len(p) since p is not empty
    c = serve(text(b"ok")).client()
    sid = c.request("/healthz", method="HEAD")
    status, headers, data = answer(c, sid)
    assert (status, headers["content-length"], data) == (200, "2", [])
    assert c.of(h2.events.ResponseReceived, sid)[0].stream_ended is not None  # END_STREAM on the HEADERS


def test_a_head_answered_405_sends_its_length_not_its_status_body(serve):
    c = serve(text(STATUS_405, status="405 Method Not Allowed")).client()
    status, headers, data = answer(c, c.request("/api/v1/namespaces/default/pods/x/log", method="HEAD"))
    assert (status, headers["content-length"], data) == (405, str(len(STATUS_405)), [])


def test_a_head_a_handler_streams_to_ends_at_its_header_and_the_handler_runs_to_its_end(serve):
    finished = threading.Event()

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "application/json")])
        yield b""  # flushed: the header goes out, and with it the end of the stream
        yield b'{"type":"ADDED"}\n'  # counted, never sent
        finished.set()

    h = serve(app)
    c = h.client()
    status, headers, data = answer(c, c.request("/watch", method="HEAD"))
    assert (status, data) == (200, []) and "content-length" not in headers  # not done when it went out
    assert finished.wait(WAIT)
    assert c.response(c.request("/next"))[0] == 200 and h.logs == []


def test_a_head_with_nothing_written_has_no_content_length(serve):
    # Go: (len(p) > 0 || !isHeadResp)
    c = serve(text(b"")).client()
    status, headers, data = answer(c, c.request("/", method="HEAD"))
    assert (status, data) == (200, []) and "content-length" not in headers


def test_an_empty_answer_has_content_length_0(serve):
    c = serve(text(b"")).client()
    status, headers, data = answer(c, c.request("/"))
    assert (status, headers["content-length"], data) == (200, "0", [])


def test_a_status_without_a_body_has_no_content_length(serve):
    c = serve(text(b"", status="204 No Content")).client()
    status, headers, _ = answer(c, c.request("/"))
    assert status == 204 and "content-length" not in headers


def test_the_apps_content_length_is_kept_if_it_is_a_number_and_replaced_if_not(serve):
    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", environ["QUERY_STRING"])])
        return [b"hello"]

    c = serve(app).client()
    assert answer(c, c.request("/?5"))[1]["content-length"] == "5"
    # Go deletes a value strconv.ParseUint refuses, then counts the answer itself
    assert answer(c, c.request("/?-5"))[1]["content-length"] == "5"
    assert answer(c, c.request("/?five"))[1]["content-length"] == "5"


def test_the_request_context_ends_before_the_end_of_the_stream_goes_out(serve, monkeypatch):
    seen = []
    recorded = threading.Event()
    wrote_end = responsewriter.HandlerSide.wrote_end_stream

    def recording(self, st):
        seen.append(st.ctx.err())
        recorded.set()
        wrote_end(self, st)

    monkeypatch.setattr(responsewriter.HandlerSide, "wrote_end_stream", recording)
    c = serve(text(b"ok")).client()
    assert c.response(c.request("/"))[2] == b"ok"
    # (the client may read the answer before the handler's thread records: wait for it)
    assert recorded.wait(WAIT)
    assert len(seen) == 1 and seen[0] is not None, seen


def test_a_body_written_to_a_204_is_not_sent(serve):
    # Go's responseWriter.write: ErrBodyNotAllowed; the HEADERS end the stream
    c = serve(text(b"not allowed", status="204 No Content")).client()
    status, headers, data = answer(c, c.request("/"))
    assert (status, data) == (204, []) and "content-length" not in headers
