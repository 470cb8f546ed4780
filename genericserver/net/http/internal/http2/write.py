"""Port of Go's net/http/internal/http2 package (Go 1.27): write.go's ``encodeHeaders`` and the order ``writeResHeaders`` writes an answer's fields in.

kube-apiserver's Go 1.26.8 runs the same code from golang.org/x/net/http2, bundled as
net/http's h2_bundle.go. Go judges the answer's fields itself, here as there, so the server's h2
connection neither checks nor rewrites what it is given (``validate_outbound_headers`` and
``normalize_outbound_headers`` are off): a field Go would leave out is left out, where h2 would
have refused the whole answer.
"""

from __future__ import annotations

from genericserver.x.net.http.httpguts.httplex import valid_header_field_name, valid_header_field_value


def valid_wire_header_field_name(name: str) -> bool:
    """Go's ``validWireHeaderFieldName``: a token, and lower case (HTTP/2 sends names lower-cased).
    Go asks each character both; one match of the token pattern says the first."""
    return valid_header_field_name(name) and name == name.lower()


def encode_headers(fields: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Go's ``encodeHeaders``: the handler's fields as HPACK is given them.

    Sorted by name (Go walks its header map's keys sorted; a stable sort keeps each name's
    values in the order they were added), each name lower-cased. Left out without a word, as Go
    does: a name that is not ASCII or not a token, a value with a control character, and a
    ``transfer-encoding`` other than ``trailers`` (a connection-specific field in HTTP/2)."""
    out = []
    for name, value in sorted(fields, key=lambda field: field[0]):
        if not name.isascii():
            continue
        name = name.lower()
        if not valid_wire_header_field_name(name) or not valid_header_field_value(value):
            continue
        if name == "transfer-encoding" and value != "trailers":
            continue
        out.append((name, value))
    return out


def response_fields(status: int, fields: list[tuple[str, str]], content_length: str, date: str) -> list[tuple[str, str]]:
    """The fields of ``writeResHeaders.writeFrame``, in its order: ``:status``, the handler's
    (:func:`encode_headers`), then the content-length and the date the response writer added
    ("" where it added none)."""
    out = [(":status", str(status))] + encode_headers(fields)
    if content_length:
        out.append(("content-length", content_length))
    if date:
        out.append(("date", date))
    return out


__all__ = ["encode_headers", "response_fields", "valid_wire_header_field_name"]
