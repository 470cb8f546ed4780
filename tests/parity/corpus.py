"""The parity corpus: raw HTTP/1 requests to send to Go's server and to ours (no Go twin).

Each :class:`parity.wire.Case` has a stable kebab-case id, a category (:data:`CATEGORIES`), a one-line
description and the steps to send on one connection: byte strings, and :class:`parity.wire.Await`
where the client must wait for a response head first (``Expect: 100-continue``). The probe
request follows the steps (see :mod:`parity.wire`).

Most requests go to the reflecting handler, whose answer shows what the handler saw; a query such
as ``?status=204&body=x`` asks it for a particular response instead (``goserver/main.go``). Cases
marked ``waits`` leave Go waiting for more bytes (an incomplete body, say): the probe is swallowed.

Ids and steps are the key of the recorded answers (``go-answers.json``): after changing a case,
re-record (``make parity``). Add cases at the end of their category.
"""

from __future__ import annotations

from parity.wire import Await, Case

CATEGORIES = {
    "content-length": "Content-Length syntax, duplicates, and beside Transfer-Encoding",
    "transfer-encoding": "Transfer-Encoding values, repeats, case, whitespace, HTTP/1.0",
    "chunk-size": "the chunk-size line: hex syntax, signs, prefixes, overflow",
    "line-endings": "bare LF and bare CR in chunked bodies and in the header",
    "chunk-extension": "chunk extensions, huge ones, and their overhead (CVE-2023-39326)",
    "trailers": "trailer sections: normal, huge, many, invalid and forbidden fields",
    "header-name": "header names with bytes that are not token characters",
    "header-value": "header values with each control byte, and obs-text",
    "header-syntax": "obs-fold, space before the colon, empty names, repeats",
    "host": "Host: missing, repeated, invalid per httpguts.ValidHostHeader, vs absolute-form",
    "request-target": "request targets: *, absolute-form, authority-form, escapes, odd bytes",
    "request-line": "the request line: HTTP/0.9, methods, versions, spacing",
    "pipelining": "several requests in one send",
    "keep-alive": "HTTP versions, Connection: close and keep-alive",
    "size-limits": "the header byte limit, the header count limit, unread bodies",
    "expect": "Expect: 100-continue, unknown expectations, on HTTP/1.0",
    "response-framing": "HEAD, 204 and 304 responses, flushed and mis-sized bodies",
    "response-splitting": "response header names and values with CR, LF, NUL",
    "echo": "the sample API's /echo, as Go's graceful-termination test handler",
}

HOST = b"Host: example.com"
LIMIT = (1 << 20) + 4096  # Go's header limit: MaxHeaderBytes plus bufio's 4096 of slop
ALPHA25 = b"abcdefghijklmnopqrstuvwxy"  # 0x19 bytes


def msg(*lines: bytes, body: bytes = b"") -> bytes:
    """A request: the lines joined with CRLF, the empty line, then ``body``."""
    return b"".join(line + b"\r\n" for line in lines) + b"\r\n" + body


def get(target: bytes = b"/reflect", *headers: bytes, proto: bytes = b"HTTP/1.1", method: bytes = b"GET") -> bytes:
    return msg(method + b" " + target + b" " + proto, HOST, *headers)


def post(body: bytes, *headers: bytes, target: bytes = b"/reflect", proto: bytes = b"HTTP/1.1") -> bytes:
    """A POST with ``headers`` (no Content-Length is added) and ``body``."""
    return msg(b"POST " + target + b" " + proto, HOST, *headers, body=body)


def post_cl(body: bytes, *headers: bytes, target: bytes = b"/reflect", proto: bytes = b"HTTP/1.1") -> bytes:
    return post(body, b"Content-Length: %d" % len(body), *headers, target=target, proto=proto)


def chunked_post(body: bytes, *headers: bytes, target: bytes = b"/reflect") -> bytes:
    return post(body, b"Transfer-Encoding: chunked", *headers, target=target)


CASES: list[Case] = []


def case(id: str, category: str, description: str, *steps, waits: bool = False, heads: tuple = ()) -> None:
    assert category in CATEGORIES, category
    CASES.append(Case(id, category, description, tuple(steps), waits, frozenset(heads)))


# -- content-length -------------------------------------------------------------------------------
C = "content-length"
case("cl-valid", C, "a body of Content-Length bytes", post_cl(b"hello"))
case("cl-zero", C, "Content-Length: 0 and no body", post_cl(b""))
case("cl-get-with-body", C, "a GET with a Content-Length body", get(b"/reflect", b"Content-Length: 5") + b"hello")
case("cl-post-without-length", C, "a POST with neither Content-Length nor Transfer-Encoding", post(b""))
case("cl-duplicate-equal", C, "two Content-Length headers with the same value", post(b"hello", b"Content-Length: 5", b"Content-Length: 5"))
case("cl-duplicate-different", C, "two Content-Length headers with different values", post(b"hello", b"Content-Length: 5", b"Content-Length: 6"))
case("cl-duplicate-equal-spaces", C, "two Content-Length headers equal but for spaces", post(b"hello", b"Content-Length: 5", b"Content-Length:  5 "))
case("cl-comma-list", C, "one Content-Length header listing 5, 5", post(b"hello", b"Content-Length: 5, 5"))
case("cl-surrounding-spaces", C, "Content-Length with spaces and a tab around the digits", post(b"hello", b"Content-Length: \t 5 \t"))
case("cl-plus-sign", C, "Content-Length: +5", post(b"hello", b"Content-Length: +5"))
case("cl-minus-sign", C, "Content-Length: -5", post(b"hello", b"Content-Length: -5"))
case("cl-minus-zero", C, "Content-Length: -0", post(b"", b"Content-Length: -0"))
case("cl-hex", C, "Content-Length: 0x5", post(b"hello", b"Content-Length: 0x5"))
case("cl-leading-zeros", C, "Content-Length: 005", post(b"hello", b"Content-Length: 005"))
case("cl-underscore", C, "Content-Length: 0_5", post(b"hello", b"Content-Length: 0_5"))
case("cl-inner-space", C, "Content-Length: 1 0", post(b"helloworld", b"Content-Length: 1 0"))
case("cl-empty", C, "an empty Content-Length value", post(b"", b"Content-Length:"))
case("cl-abc", C, "Content-Length: abc", post(b"hello", b"Content-Length: abc"))
case("cl-overflow", C, "a Content-Length over 2^63", post(b"hello", b"Content-Length: 99999999999999999999"))
case("cl-max-int64", C, "Content-Length 2^63-1 with a 5-byte body: the server waits", post(b"hello", b"Content-Length: 9223372036854775807"), waits=True)
case("cl-body-short", C, "Content-Length 100 with 5 bytes: the server waits for the rest", post(b"hello", b"Content-Length: 100"), waits=True)
case("cl-body-long", C, "Content-Length 3 with 5 bytes: the rest starts the next request", post(b"hello", b"Content-Length: 3"))
case("cl-and-te-chunked", C, "Content-Length beside Transfer-Encoding: chunked", chunked_post(b"5\r\nhello\r\n0\r\n\r\n", b"Content-Length: 3"))
case("cl-abc-and-te-chunked", C, "Content-Length: abc beside Transfer-Encoding: chunked", chunked_post(b"5\r\nhello\r\n0\r\n\r\n", b"Content-Length: abc"))
case("cl-te-before-cl", C, "Transfer-Encoding: chunked before Content-Length", post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked", b"Content-Length: 20"))
case("cl-duplicate-different-and-te", C, "different Content-Lengths beside Transfer-Encoding: chunked", chunked_post(b"5\r\nhello\r\n0\r\n\r\n", b"Content-Length: 5", b"Content-Length: 6"))
case("cl-http10-te-chunked", C, "HTTP/1.0 with Transfer-Encoding: chunked and Content-Length", post(b"hello", b"Transfer-Encoding: chunked", b"Content-Length: 5", proto=b"HTTP/1.0"))
case("cl-http10-te-chunked-keep-alive", C, "HTTP/1.0 keep-alive with only Transfer-Encoding: chunked: the body is not read",
     post(b"5\r\nhello\r\n0\r\n\r\n", b"Transfer-Encoding: chunked", b"Connection: keep-alive", proto=b"HTTP/1.0"))

# -- transfer-encoding ----------------------------------------------------------------------------
T = "transfer-encoding"
CHUNKED_HELLO = b"5\r\nhello\r\n0\r\n\r\n"
case("te-chunked", T, "a chunked body", chunked_post(CHUNKED_HELLO))
case("te-chunked-two-chunks", T, "a chunked body of two chunks", chunked_post(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"))
case("te-chunked-uppercase", T, "Transfer-Encoding: CHUNKED", post(CHUNKED_HELLO, b"Transfer-Encoding: CHUNKED"))
case("te-chunked-chunked", T, "Transfer-Encoding: chunked, chunked", post(CHUNKED_HELLO, b"Transfer-Encoding: chunked, chunked"))
case("te-gzip-chunked", T, "Transfer-Encoding: gzip, chunked", post(CHUNKED_HELLO, b"Transfer-Encoding: gzip, chunked"))
case("te-identity", T, "Transfer-Encoding: identity", post(b"hello", b"Transfer-Encoding: identity", b"Content-Length: 5"))
case("te-identity-chunked", T, "Transfer-Encoding: identity, chunked", post(CHUNKED_HELLO, b"Transfer-Encoding: identity, chunked"))
case("te-two-headers", T, "two Transfer-Encoding: chunked headers", post(CHUNKED_HELLO, b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked"))
case("te-empty", T, "an empty Transfer-Encoding value", post(b"", b"Transfer-Encoding:"))
case("te-leading-whitespace", T, "Transfer-Encoding value after spaces and a tab", post(CHUNKED_HELLO, b"Transfer-Encoding: \t chunked"))
case("te-trailing-whitespace", T, "Transfer-Encoding value before spaces and a tab", post(CHUNKED_HELLO, b"Transfer-Encoding: chunked \t"))
case("te-trailing-comma", T, "Transfer-Encoding: chunked,", post(CHUNKED_HELLO, b"Transfer-Encoding: chunked,"))
case("te-xchunked", T, "Transfer-Encoding: xchunked", post(CHUNKED_HELLO, b"Transfer-Encoding: xchunked"))
case("te-chunked-parameter", T, "Transfer-Encoding: chunked;q=1", post(CHUNKED_HELLO, b"Transfer-Encoding: chunked;q=1"))
case("te-space-before-colon", T, "Transfer-Encoding : chunked (a space before the colon)", post(CHUNKED_HELLO, b"Transfer-Encoding : chunked"))
case("te-http10-unknown", T, "HTTP/1.0 with Transfer-Encoding: gzip and a Content-Length", post(b"hello", b"Transfer-Encoding: gzip", b"Content-Length: 5", proto=b"HTTP/1.0"))
case("te-chunked-on-get", T, "a GET with a chunked body", get(b"/reflect", b"Transfer-Encoding: chunked") + CHUNKED_HELLO)
case("te-unknown-with-cl", T, "Transfer-Encoding: gzip with a Content-Length", post(b"hello", b"Transfer-Encoding: gzip", b"Content-Length: 5"))

# -- chunk-size -----------------------------------------------------------------------------------
S = "chunk-size"


def chunk_case(id: str, size: bytes, description: str, data: bytes = ALPHA25) -> None:
    case(id, S, description, chunked_post(size + b"\r\n" + data + b"\r\n0\r\n\r\n"))


chunk_case("chunk-size-hex", b"19", "chunk size 19 (hex for the 25 bytes that follow)")
chunk_case("chunk-size-uppercase-hex", b"1A", "chunk size 1A (upper-case hex) over 26 bytes", ALPHA25 + b"z")
chunk_case("chunk-size-0x-prefix", b"0x19", "chunk size 0x19")
chunk_case("chunk-size-plus", b"+19", "chunk size +19")
chunk_case("chunk-size-underscore", b"1_9", "chunk size 1_9")
chunk_case("chunk-size-leading-space", b" 19", "chunk size with a leading space")
chunk_case("chunk-size-trailing-space", b"19 ", "chunk size with a trailing space")
chunk_case("chunk-size-trailing-tab", b"19\t", "chunk size with a trailing tab")
chunk_case("chunk-size-inner-space", b"1 9", "chunk size 1 9")
chunk_case("chunk-size-leading-zeros", b"0000000000000019", "chunk size with 16 hex digits (leading zeros)")
chunk_case("chunk-size-15-digits", b"000000000000019", "chunk size with 15 hex digits (leading zeros)")
chunk_case("chunk-size-overflow", b"ffffffffffffffffff", "chunk size of 18 hex digits")
case("chunk-size-max-uint64", S, "chunk size 2^64-1 (16 hex digits): the server waits for the data", chunked_post(b"ffffffffffffffff\r\n" + ALPHA25), waits=True)
chunk_case("chunk-size-empty", b"", "an empty chunk-size line")
chunk_case("chunk-size-non-hex", b"1g", "chunk size 1g")
chunk_case("chunk-size-unicode-digit", "\u0661\u0669".encode(), "chunk size in Arabic-Indic digits (UTF-8)")
case("chunk-size-minus-zero", S, "last chunk written -0", chunked_post(b"5\r\nhello\r\n-0\r\n\r\n"))
case("chunk-size-zero-padded-last", S, "last chunk written 000", chunked_post(b"5\r\nhello\r\n000\r\n\r\n"))
case("chunk-size-large", S, "chunk size fffffff with 25 bytes: the server waits for the rest", chunked_post(b"fffffff\r\n" + ALPHA25), waits=True)
case("chunk-size-no-last-chunk", S, "a chunk and no last chunk: the probe is read as a chunk size", chunked_post(b"5\r\nhello\r\n"))
case("chunk-size-data-longer", S, "chunk size 3 over 5 bytes of data", chunked_post(b"3\r\nhello\r\n0\r\n\r\n"))

# -- line-endings ---------------------------------------------------------------------------------
L = "line-endings"
case("lf-after-chunk-size", L, "bare LF after the chunk size", chunked_post(b"5\nhello\r\n0\r\n\r\n"))
case("lf-after-chunk-data", L, "bare LF after the chunk data", chunked_post(b"5\r\nhello\n0\r\n\r\n"))
case("lf-after-last-chunk", L, "bare LF after the last chunk", chunked_post(b"5\r\nhello\r\n0\n\r\n"))
case("lf-ending-trailer-section", L, "bare LF as the empty line that ends the body", chunked_post(b"5\r\nhello\r\n0\r\n\n"))
case("cr-after-chunk-size", L, "bare CR after the chunk size", chunked_post(b"5\rhello\r\n0\r\n\r\n"))
case("cr-after-chunk-data", L, "bare CR after the chunk data", chunked_post(b"5\r\nhello\r0\r\n\r\n"))
case("crlf-missing-after-data", L, "no CRLF after the chunk data", chunked_post(b"5\r\nhello0\r\n\r\n"))
case("cr-in-chunk-size", L, "a CR inside the chunk-size line", chunked_post(b"5\r;x\r\nhello\r\n0\r\n\r\n"))
case("lf-header-lines", L, "request line and header lines end in bare LF", b"GET /reflect HTTP/1.1\nHost: example.com\nX-A: b\n\n")
case("lf-header-mixed", L, "CRLF header lines, then a bare LF empty line", b"GET /reflect HTTP/1.1\r\nHost: example.com\r\n\n")
case("lf-request-line-only", L, "the request line ends in bare LF, the rest in CRLF", b"GET /reflect HTTP/1.1\nHost: example.com\r\n\r\n")
case("cr-header-line-end", L, "a header line ends in bare CR", b"GET /reflect HTTP/1.1\r\nHost: example.com\rX-A: b\r\n\r\n")
case("cr-request-line-end", L, "the request line ends in bare CR", b"GET /reflect HTTP/1.1\rHost: example.com\r\n\r\n")
case("cr-in-header-value", L, "a CR inside a header value", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: a\rb"))

# -- chunk-extension ------------------------------------------------------------------------------
E = "chunk-extension"
case("ext-name-value", E, "a chunk extension name=value", chunked_post(b"5;foo=bar\r\nhello\r\n0\r\n\r\n"))
case("ext-name-only", E, "a chunk extension with no value", chunked_post(b"5;foo\r\nhello\r\n0\r\n\r\n"))
case("ext-quoted", E, "a quoted chunk extension value with a semicolon", chunked_post(b'5;foo="b;a\\"r"\r\nhello\r\n0\r\n\r\n'))
case("ext-several", E, "several chunk extensions, with spaces", chunked_post(b"5 ; a=1 ; b=2\r\nhello\r\n0\r\n\r\n"))
case("ext-space-before-semicolon", E, "5 ;foo", chunked_post(b"5 ;foo\r\nhello\r\n0\r\n\r\n"))
case("ext-on-last-chunk", E, "an extension on the last chunk", chunked_post(b"5\r\nhello\r\n0;end=1\r\n\r\n"))
case("ext-control-bytes", E, "an extension holding NUL and DEL", chunked_post(b"5;\x00\x7f\r\nhello\r\n0\r\n\r\n"))
case("ext-4000-bytes", E, "a 4000-byte extension", chunked_post(b"5;" + b"x" * 4000 + b"\r\nhello\r\n0\r\n\r\n"))
case("ext-5000-bytes", E, "a 5000-byte extension (over the 4096-byte line limit)", chunked_post(b"5;" + b"x" * 5000 + b"\r\nhello\r\n0\r\n\r\n"))
case("ext-overhead-under", E, "10 one-byte chunks with 1000-byte extensions", chunked_post(b"".join(b"1;" + b"e" * 1000 + b"\r\na\r\n" for _ in range(10)) + b"0\r\n\r\n"))
case("ext-overhead-over", E, "20 one-byte chunks with 1000-byte extensions (CVE-2023-39326 overhead)", chunked_post(b"".join(b"1;" + b"e" * 1000 + b"\r\na\r\n" for _ in range(20)) + b"0\r\n\r\n"))
case("ext-tiny-chunks", E, "2000 one-byte chunks without extensions", chunked_post(b"1\r\na\r\n" * 2000 + b"0\r\n\r\n"))

# -- trailers -------------------------------------------------------------------------------------
R = "trailers"
case("trailer-one", R, "one trailer field", chunked_post(b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n"))
case("trailer-declared", R, "a declared trailer (Trailer: X-T) that is sent", chunked_post(b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n", b"Trailer: X-T"))
case("trailer-declared-missing", R, "a declared trailer that is not sent", chunked_post(CHUNKED_HELLO, b"Trailer: X-T"))
case("trailer-declared-forbidden", R, "Trailer: Content-Length", chunked_post(b"5\r\nhello\r\n0\r\nContent-Length: 5\r\n\r\n", b"Trailer: Content-Length"))
case("trailer-declared-te", R, "Trailer: Transfer-Encoding", chunked_post(CHUNKED_HELLO, b"Trailer: Transfer-Encoding"))
case("trailer-on-content-length", R, "a Trailer header on a Content-Length body", post_cl(b"hello", b"Trailer: X-T"))
case("trailer-forbidden-content-length", R, "a Content-Length field in the trailer section", chunked_post(b"5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n"))
case("trailer-forbidden-host", R, "a Host field in the trailer section", chunked_post(b"5\r\nhello\r\n0\r\nHost: evil.example\r\n\r\n"))
case("trailer-invalid-name", R, "a trailer field name with a space", chunked_post(b"5\r\nhello\r\n0\r\nBad Name: v\r\n\r\n"))
case("trailer-control-byte", R, "a trailer value with a 0x01 byte", chunked_post(b"5\r\nhello\r\n0\r\nX-T: a\x01b\r\n\r\n"))
case("trailer-no-colon", R, "a trailer line without a colon", chunked_post(b"5\r\nhello\r\n0\r\nnocolon\r\n\r\n"))
case("trailer-obs-fold", R, "a folded trailer line", chunked_post(b"5\r\nhello\r\n0\r\nX-T: a\r\n b\r\n\r\n"))
case("trailer-3000-bytes", R, "a 3000-byte trailer field", chunked_post(b"5\r\nhello\r\n0\r\nX-T: " + b"v" * 3000 + b"\r\n\r\n"))
case("trailer-5000-bytes", R, "a 5000-byte trailer field (past the 4 KiB read buffer)", chunked_post(b"5\r\nhello\r\n0\r\nX-T: " + b"v" * 5000 + b"\r\n\r\n"))
case("trailer-huge", R, "a 200 KB trailer field", chunked_post(b"5\r\nhello\r\n0\r\nX-T: " + b"v" * 200_000 + b"\r\n\r\n"))
case("trailer-501-fields", R, "501 short trailer fields", chunked_post(b"5\r\nhello\r\n0\r\n" + b"T: 1\r\n" * 501 + b"\r\n"))
case("trailer-declared-501", R, "a Trailer header declaring 501 names", chunked_post(CHUNKED_HELLO, b"Trailer: " + b",".join(b"T%d" % i for i in range(501))))

# -- header-name ----------------------------------------------------------------------------------
N = "header-name"
NAME_BYTES = {  # invalid in a token: a representative set, one case each
    0x00: "nul", 0x01: "soh", 0x09: "tab", 0x20: "space", 0x22: "dquote", 0x28: "lparen", 0x29: "rparen",
    0x2C: "comma", 0x2F: "slash", 0x3B: "semicolon", 0x3C: "less", 0x3D: "equals", 0x3E: "greater",
    0x3F: "question", 0x40: "at", 0x5B: "lbracket", 0x5C: "backslash", 0x5D: "rbracket", 0x7B: "lbrace",
    0x7D: "rbrace", 0x7F: "del", 0x80: "0x80", 0xFF: "0xff",
}
for byte, word in NAME_BYTES.items():
    case(f"name-byte-{word}", N, f"a header name holding byte 0x{byte:02x}", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A" + bytes([byte]) + b"B: v"))
case("name-token-chars", N, "a header name of every token punctuation but _", msg(b"GET /reflect HTTP/1.1", HOST, b"!#$%&'*+-.^`|~09azAZ: v"))
case("name-underscore", N, "a header name with an underscore", msg(b"GET /reflect HTTP/1.1", HOST, b"X_Forwarded_For: 10.0.0.1"))
case("name-utf8", N, "a header name in UTF-8", msg(b"GET /reflect HTTP/1.1", HOST, "X-\u00e9: v".encode()))
case("name-lowercase", N, "a lower-case header name is canonicalised", msg(b"GET /reflect HTTP/1.1", HOST, b"x-lower-CASE: v"))

# -- header-value ---------------------------------------------------------------------------------
V = "header-value"
for byte in [*range(0x20), 0x7F]:
    case(f"value-byte-0x{byte:02x}", V, f"a header value holding byte 0x{byte:02x}", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: a" + bytes([byte]) + b"b"))
case("value-obs-text", V, "a header value with bytes 0x80 and 0xff", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: a\x80\xffb"))
case("value-utf8", V, "a header value in UTF-8", msg(b"GET /reflect HTTP/1.1", HOST, "X-A: caf\u00e9 \u2603".encode()))
case("value-trailing-nul", V, "a header value ending in NUL", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: ab\x00"))
case("value-leading-nul", V, "a header value starting with NUL", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: \x00ab"))

# -- header-syntax --------------------------------------------------------------------------------
X = "header-syntax"
case("obs-fold-space", X, "a header continued on a line starting with a space", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: a", b" b"))
case("obs-fold-tab", X, "a header continued on a line starting with a tab", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: a", b"\tb"))
case("obs-fold-first-line", X, "the first header line starts with a space", msg(b"GET /reflect HTTP/1.1", b" X-A: a", HOST))
case("obs-fold-host", X, "a folded Host header", msg(b"GET /reflect HTTP/1.1", b"Host: example", b" .com"))
case("obs-fold-content-length", X, "a folded Content-Length header", post(b"hello", b"Content-Length:", b" 5"))
case("space-before-colon", X, "a space between header name and colon", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A : b"))
case("tab-before-colon", X, "a tab between header name and colon", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A\t: b"))
case("empty-name", X, "a header line starting with a colon", msg(b"GET /reflect HTTP/1.1", HOST, b": b"))
case("missing-colon", X, "a header line without a colon", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A b"))
case("empty-value", X, "a header with an empty value", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A:"))
case("value-whitespace-trimmed", X, "spaces and tabs around a header value", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: \t a b \t"))
case("colon-in-value", X, "colons in a header value", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: a:b::c"))
case("repeated-header", X, "the same header twice", msg(b"GET /reflect HTTP/1.1", HOST, b"X-A: 1", b"X-A: 2"))
case("repeated-content-type", X, "two Content-Type headers", post_cl(b"hello", b"Content-Type: text/plain", b"Content-Type: text/html"))
case("pragma-no-cache", X, "Pragma: no-cache without Cache-Control", msg(b"GET /reflect HTTP/1.1", HOST, b"Pragma: no-cache"))
case("long-header-value", X, "a 100 KB header value", msg(b"GET /reflect?body=ok HTTP/1.1", HOST, b"X-A: " + b"v" * 100_000))

# -- host -----------------------------------------------------------------------------------------
O = "host"


def host_case(id: str, value: bytes, description: str) -> None:
    case(id, O, description, msg(b"GET /reflect HTTP/1.1", b"Host: " + value))


case("host-missing-http11", O, "no Host on HTTP/1.1", msg(b"GET /reflect HTTP/1.1"))
case("host-missing-http10", O, "no Host on HTTP/1.0", msg(b"GET /reflect HTTP/1.0"))
case("host-two", O, "two Host headers", msg(b"GET /reflect HTTP/1.1", b"Host: a.example", b"Host: b.example"))
case("host-two-equal", O, "two equal Host headers", msg(b"GET /reflect HTTP/1.1", HOST, HOST))
host_case("host-empty", b"", "an empty Host")
host_case("host-with-port", b"example.com:8080", "a Host with a port")
host_case("host-ipv6", b"[::1]:8080", "an IPv6 literal Host")
host_case("host-userinfo", b"user@example.com", "a Host with userinfo")
host_case("host-space", b"exa mple.com", "a Host with a space")
host_case("host-tab", b"exa\tmple.com", "a Host with a tab")
host_case("host-non-ascii", "ex\u00e4mple.com".encode(), "a Host in UTF-8")
host_case("host-slash", b"example.com/path", "a Host with a slash")
host_case("host-backslash", b"example.com\\x", "a Host with a backslash")
host_case("host-quote", b'"example.com"', "a quoted Host")
host_case("host-angle", b"<example.com>", "a Host with angle brackets")
host_case("host-sub-delims", b"a!$&'()*+,;=_~%.example", "a Host of every sub-delimiter ValidHostHeader allows")
host_case("host-question", b"example.com?x", "a Host with a question mark")
host_case("host-hash", b"example.com#x", "a Host with a hash")
case("host-absolute-form-overrides", O, "an absolute-form target and a different Host", msg(b"GET http://target.example/reflect HTTP/1.1", b"Host: header.example"))
case("host-absolute-form-no-host", O, "an absolute-form target and no Host on HTTP/1.1", msg(b"GET http://target.example/reflect HTTP/1.1"))
case("host-absolute-form-bad-host", O, "an absolute-form target and an invalid Host header", msg(b"GET http://target.example/reflect HTTP/1.1", b"Host: bad host"))

# -- request-target -------------------------------------------------------------------------------
Q = "request-target"


def target_case(id: str, line: bytes, description: str, *headers: bytes) -> None:
    case(id, Q, description, msg(line, HOST, *headers))


target_case("target-asterisk-options", b"OPTIONS * HTTP/1.1", "OPTIONS *")
target_case("target-asterisk-get", b"GET * HTTP/1.1", "GET *")
case("target-asterisk-post", Q, "POST * with a body", msg(b"POST * HTTP/1.1", HOST, b"Content-Length: 2", body=b"ok"))
target_case("target-absolute", b"GET http://example.com/reflect?x=1 HTTP/1.1", "an absolute-form target")
target_case("target-absolute-https", b"GET https://example.com:8443/reflect HTTP/1.1", "an absolute-form https target with a port")
target_case("target-absolute-userinfo", b"GET http://user:pw@example.com/reflect HTTP/1.1", "an absolute-form target with userinfo")
target_case("target-absolute-no-path", b"GET http://example.com HTTP/1.1", "an absolute-form target without a path")
target_case("target-absolute-odd-scheme", b"GET foo://example.com/reflect HTTP/1.1", "an absolute-form target with an unknown scheme")
target_case("target-authority-connect", b"CONNECT example.com:443 HTTP/1.1", "CONNECT with an authority-form target")
target_case("target-authority-get", b"GET example.com:443 HTTP/1.1", "GET with an authority-form target")
target_case("target-connect-path", b"CONNECT /reflect HTTP/1.1", "CONNECT with an origin-form target")
target_case("target-percent-valid", b"GET /a%20b%2Fc HTTP/1.1", "valid percent escapes")
target_case("target-percent-invalid", b"GET /a%zz HTTP/1.1", "an invalid percent escape in the path")
target_case("target-percent-truncated", b"GET /a%2 HTTP/1.1", "a truncated percent escape in the path")
target_case("target-percent-invalid-query", b"GET /reflect?a=%zz HTTP/1.1", "an invalid percent escape in the query")
target_case("target-fragment", b"GET /reflect#frag HTTP/1.1", "a fragment in the target")
target_case("target-non-ascii", "GET /caf\u00e9 HTTP/1.1".encode(), "UTF-8 bytes in the target")
target_case("target-control-byte", b"GET /a\x01b HTTP/1.1", "a 0x01 byte in the target")
target_case("target-del", b"GET /a\x7fb HTTP/1.1", "a DEL byte in the target")
target_case("target-tab", b"GET /a\tb HTTP/1.1", "a tab in the target")
target_case("target-space", b"GET /a b HTTP/1.1", "a space in the target")
target_case("target-empty", b"GET  HTTP/1.1", "an empty target")
target_case("target-no-slash", b"GET reflect HTTP/1.1", "a target without a leading slash")
target_case("target-query-only", b"GET ?a=1 HTTP/1.1", "a target that is only a query")
target_case("target-double-slash", b"GET //evil.example/reflect HTTP/1.1", "a target starting with //")
target_case("target-dot-segments", b"GET /a/../reflect HTTP/1.1", "dot segments in the target")
target_case("target-backslash", b"GET /a\\b HTTP/1.1", "a backslash in the target")
target_case("target-long", b"GET /" + b"a" * 8000 + b" HTTP/1.1", "an 8000-byte path")

# -- request-line ---------------------------------------------------------------------------------
Y = "request-line"
case("http09-get", Y, "an HTTP/0.9 request line (no version)", b"GET /reflect\r\n\r\n")
case("http09-get-lf", Y, "an HTTP/0.9 request line ending in LF", b"GET /\n")
case("method-lowercase", Y, "a lower-case method", msg(b"get /reflect HTTP/1.1", HOST))
case("method-extension", Y, "an unregistered method", msg(b"FOO /reflect HTTP/1.1", HOST))
case("method-token-chars", Y, "a method of token punctuation", msg(b"!#$%&'*+-.^_`|~ /reflect HTTP/1.1", HOST))
case("method-invalid-char", Y, "a method with a parenthesis", msg(b"GE(T /reflect HTTP/1.1", HOST))
case("method-utf8", Y, "a method in UTF-8", msg("G\u00c9T /reflect HTTP/1.1".encode(), HOST))
case("method-empty", Y, "a request line starting with a space", msg(b" /reflect HTTP/1.1", HOST))
case("method-long", Y, "a 10000-byte method", msg(b"M" * 10000 + b" /reflect HTTP/1.1", HOST))
case("version-http12", Y, "HTTP/1.2", msg(b"GET /reflect HTTP/1.2", HOST))
case("version-http19", Y, "HTTP/1.9", msg(b"GET /reflect HTTP/1.9", HOST))
case("version-http20", Y, "HTTP/2.0", msg(b"GET /reflect HTTP/2.0", HOST))
case("version-http30", Y, "HTTP/3.0", msg(b"GET /reflect HTTP/3.0", HOST))
case("version-http09", Y, "HTTP/0.9 written out", msg(b"GET /reflect HTTP/0.9", HOST))
case("version-http110", Y, "HTTP/1.10", msg(b"GET /reflect HTTP/1.10", HOST))
case("version-http1", Y, "HTTP/1", msg(b"GET /reflect HTTP/1", HOST))
case("version-lowercase", Y, "http/1.1", msg(b"GET /reflect http/1.1", HOST))
case("version-trailing-space", Y, "a space after the version", msg(b"GET /reflect HTTP/1.1 ", HOST))
case("version-missing", Y, "a space and no version", msg(b"GET /reflect ", HOST))
case("version-fullwidth-digit", Y, "a version with a UTF-8 digit", msg("GET /reflect HTTP/1.\uff11".encode(), HOST))
case("line-double-space", Y, "two spaces between method and target", msg(b"GET  /reflect HTTP/1.1", HOST))
case("line-tabs", Y, "tabs between the parts of the request line", msg(b"GET\t/reflect\tHTTP/1.1", HOST))
case("line-leading-crlf", Y, "an empty line before the request line", b"\r\n" + get())
case("line-nul", Y, "a NUL in the request line", msg(b"GET /reflect\x00 HTTP/1.1", HOST))
case("pri-preface", Y, "the HTTP/2 connection preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")

# -- pipelining -----------------------------------------------------------------------------------
P = "pipelining"
case("pipeline-two", P, "two GETs in one send", get(b"/reflect?n=1") + get(b"/reflect?n=2"))
case("pipeline-three", P, "three GETs in one send", get(b"/reflect?n=1") + get(b"/reflect?n=2") + get(b"/reflect?n=3"))
case("pipeline-good-then-bad", P, "a GET, then a request with a bad header", get(b"/reflect?n=1") + msg(b"GET /reflect?n=2 HTTP/1.1", HOST, b"Bad Name: v"))
case("pipeline-bad-then-good", P, "a request with a bad header, then a GET", msg(b"GET /reflect?n=1 HTTP/1.1", HOST, b"Bad Name: v") + get(b"/reflect?n=2"))
case("pipeline-post-then-get", P, "a POST with a body, then a GET", post_cl(b"hello") + get(b"/reflect?n=2"))
case("pipeline-chunked-then-get", P, "a chunked POST, then a GET", chunked_post(CHUNKED_HELLO) + get(b"/reflect?n=2"))
case("pipeline-post-crlf-get", P, "a POST, a stray CRLF, then a GET", post_cl(b"hello") + b"\r\n" + get(b"/reflect?n=2"))
case("pipeline-get-crlf-get", P, "a GET, a stray CRLF, then a GET", get(b"/reflect?n=1") + b"\r\n" + get(b"/reflect?n=2"))
case("pipeline-close-then-get", P, "a GET with Connection: close, then a GET", get(b"/reflect?n=1", b"Connection: close") + get(b"/reflect?n=2"))
case("pipeline-head-then-get", P, "a HEAD, then a GET", get(b"/reflect?n=1", method=b"HEAD") + get(b"/reflect?n=2"), heads=(0,))
case("pipeline-then-incomplete", P, "a GET, then a POST whose body is incomplete", get(b"/reflect?n=1") + post(b"hel", b"Content-Length: 100"), waits=True)
case("pipeline-unread-body-then-get", P, "a POST whose body the handler leaves unread, then a GET", post_cl(b"hello", target=b"/reflect?read=0&body=ok") + get(b"/reflect?n=2"))
case("pipeline-smuggle-cl-te", P, "CL and TE together, with a GET hidden in what CL would count", chunked_post(b"0\r\n\r\n" + get(b"/reflect?smuggled=1"), b"Content-Length: %d" % (5 + len(get(b"/reflect?smuggled=1")))))

# -- keep-alive -----------------------------------------------------------------------------------
K = "keep-alive"
case("http11-default", K, "HTTP/1.1 keeps the connection", get())
case("http11-connection-close", K, "HTTP/1.1 with Connection: close", get(b"/reflect", b"Connection: close"))
case("http11-connection-close-upper", K, "HTTP/1.1 with Connection: CLOSE", get(b"/reflect", b"Connection: CLOSE"))
case("http11-connection-list", K, "HTTP/1.1 with Connection: foo, close", get(b"/reflect", b"Connection: foo, close"))
case("http11-two-connection-headers", K, "HTTP/1.1 with Connection: foo and Connection: close", get(b"/reflect", b"Connection: foo", b"Connection: close"))
case("http11-keep-alive", K, "HTTP/1.1 with Connection: keep-alive", get(b"/reflect", b"Connection: keep-alive"))
case("http10-default", K, "HTTP/1.0 closes by default", get(proto=b"HTTP/1.0"))
case("http10-keep-alive", K, "HTTP/1.0 with Connection: keep-alive", get(b"/reflect", b"Connection: keep-alive", proto=b"HTTP/1.0"))
case("http10-keep-alive-and-close", K, "HTTP/1.0 with Connection: keep-alive, close", get(b"/reflect", b"Connection: keep-alive, close", proto=b"HTTP/1.0"))
case("http10-keep-alive-flushed", K, "HTTP/1.0 keep-alive, response of unknown length", get(b"/reflect?flush=1&body=abc", b"Connection: keep-alive", proto=b"HTTP/1.0"))
case("http10-keep-alive-head", K, "HTTP/1.0 keep-alive HEAD", get(b"/reflect", b"Connection: keep-alive", proto=b"HTTP/1.0", method=b"HEAD"), heads=(0,))
case("http10-keep-alive-204", K, "HTTP/1.0 keep-alive, 204 response", get(b"/reflect?status=204", b"Connection: keep-alive", proto=b"HTTP/1.0"))
case("http12-default", K, "HTTP/1.2 keeps the connection like HTTP/1.1", get(proto=b"HTTP/1.2"))
case("handler-connection-close", K, "the handler sets Connection: close", get(b"/reflect?header=Connection:close&body=bye"))
case("handler-connection-keep-alive", K, "the handler sets Connection: keep-alive on HTTP/1.0", get(b"/reflect?header=Connection:keep-alive&body=hi", proto=b"HTTP/1.0"))

# -- size-limits ----------------------------------------------------------------------------------
Z = "size-limits"


def sized_request(total: int) -> bytes:
    """A GET whose header section (request line to the empty line) is ``total`` bytes long."""
    head = b"GET /reflect?body=ok HTTP/1.1\r\nHost: example.com\r\nX-Pad: "
    return head + b"p" * (total - len(head) - 4) + b"\r\n\r\n"


def counted_request(n: int) -> bytes:
    """A GET with ``n`` header lines, Host included."""
    return msg(b"GET /reflect?body=ok HTTP/1.1", HOST, *[b"X-H%d: v" % i for i in range(n - 1)])


case("header-bytes-1mib", Z, "a header section of exactly 1 MiB", sized_request(1 << 20))
case("header-bytes-at-limit", Z, "a header section of 1 MiB + 4096 bytes: the largest Go reads", sized_request(LIMIT))
case("header-bytes-over-limit", Z, "a header section one byte over 1 MiB + 4096", sized_request(LIMIT + 1))
case("header-bytes-2mib", Z, "a header section of 2 MiB", sized_request(2 << 20))
case("request-line-over-limit", Z, "a 1.1 MB request target", b"GET /" + b"a" * 1_100_000 + b" HTTP/1.1\r\n" + HOST + b"\r\n\r\n")
case("header-count-500", Z, "500 header lines", counted_request(500))
case("header-count-501", Z, "501 header lines", counted_request(501))
case("header-count-100000", Z, "100,000 tiny header lines", msg(b"GET /reflect?body=ok HTTP/1.1", HOST, *[b"X: y"] * 99_999))
case("header-count-comma-values", Z, "one header with 1000 comma-separated values", msg(b"GET /reflect?body=ok HTTP/1.1", HOST, b"X-A: " + b",".join([b"v"] * 1000)))
case("unread-body-small", Z, "a 100 KB body the handler leaves unread", post_cl(b"b" * 100_000, target=b"/reflect?read=0&body=ok"))
case("unread-body-large", Z, "a 300 KB body the handler leaves unread", post_cl(b"b" * 300_000, target=b"/reflect?read=0&body=ok"))
case("unread-chunked-large", Z, "a 300 KB chunked body the handler leaves unread",
     chunked_post(b"".join(b"2710\r\n" + b"c" * 10_000 + b"\r\n" for _ in range(30)) + b"0\r\n\r\n", target=b"/reflect?read=0&body=ok"))

# -- expect ---------------------------------------------------------------------------------------
W = "expect"
EXPECT_HEAD = msg(b"POST /reflect HTTP/1.1", HOST, b"Content-Length: 5", b"Expect: 100-continue")
case("expect-100-continue", W, "Expect: 100-continue; the body is sent after the 100", EXPECT_HEAD, Await(1), b"hello")
case("expect-100-continue-eager", W, "Expect: 100-continue with the body sent at once", EXPECT_HEAD + b"hello")
case("expect-100-continue-upper", W, "Expect: 100-CONTINUE", msg(b"POST /reflect HTTP/1.1", HOST, b"Content-Length: 5", b"Expect: 100-CONTINUE"), Await(1), b"hello")
case("expect-100-continue-chunked", W, "Expect: 100-continue with a chunked body",
     msg(b"POST /reflect HTTP/1.1", HOST, b"Transfer-Encoding: chunked", b"Expect: 100-continue"), Await(1), CHUNKED_HELLO)
case("expect-100-continue-no-body", W, "Expect: 100-continue with Content-Length: 0", msg(b"POST /reflect HTTP/1.1", HOST, b"Content-Length: 0", b"Expect: 100-continue"))
case("expect-100-continue-unread", W, "Expect: 100-continue, the handler answers without reading",
     msg(b"POST /reflect?read=0&body=no HTTP/1.1", HOST, b"Content-Length: 5", b"Expect: 100-continue"))
case("expect-100-continue-http10", W, "Expect: 100-continue on HTTP/1.0", msg(b"POST /reflect HTTP/1.0", HOST, b"Content-Length: 5", b"Expect: 100-continue", body=b"hello"))
case("expect-unknown", W, "Expect: something-else", msg(b"GET /reflect HTTP/1.1", HOST, b"Expect: something-else"))
case("expect-unknown-http10", W, "Expect: something-else on HTTP/1.0", msg(b"GET /reflect HTTP/1.0", HOST, b"Expect: something-else"))
case("expect-empty", W, "an empty Expect value", msg(b"GET /reflect HTTP/1.1", HOST, b"Expect:"))
case("expect-list", W, "Expect: 100-continue, foo", msg(b"POST /reflect HTTP/1.1", HOST, b"Content-Length: 5", b"Expect: 100-continue, foo", body=b"hello"))

# -- response-framing -----------------------------------------------------------------------------
F = "response-framing"
case("head-reflect", F, "HEAD to the reflecting handler (explicit Content-Length)", get(method=b"HEAD"), heads=(0,))
case("head-with-body", F, "HEAD, the handler writes 3 bytes", get(b"/reflect?body=abc", method=b"HEAD"), heads=(0,))
case("head-flushed", F, "HEAD, the handler flushes then writes", get(b"/reflect?body=abc&flush=1", method=b"HEAD"), heads=(0,))
case("head-no-body", F, "HEAD, the handler writes nothing", get(b"/reflect?status=200", method=b"HEAD"), heads=(0,))
case("status-204-with-body", F, "204, the handler writes a body", get(b"/reflect?status=204&body=abc"))
case("status-204-with-length", F, "204 with a Content-Length from the handler", get(b"/reflect?status=204&cl=3&body=abc"))
case("status-304-with-body", F, "304 with Content-Type and a body", get(b"/reflect?status=304&body=abc&header=Content-Type:text/html&header=ETag:%22x%22"))
case("status-304-with-length", F, "304 with a Content-Length from the handler", get(b"/reflect?status=304&cl=3"))
case("status-404-body", F, "404 with a body", get(b"/reflect?status=404&body=missing"))
case("status-empty-200", F, "200 with no body written", get(b"/reflect?status=200"))
case("flushed-chunked", F, "200 flushed before the body: chunked", get(b"/reflect?flush=1&body=abc"))
case("flushed-empty", F, "200 flushed, no body", get(b"/reflect?flush=1"))
case("length-longer-than-body", F, "Content-Length 10, 3 bytes written", get(b"/reflect?cl=10&body=abc"))
case("length-shorter-than-body", F, "Content-Length 2, 6 bytes written", get(b"/reflect?cl=2&body=abcdef"))
case("length-invalid", F, "the handler sets Content-Length: abc", get(b"/reflect?cl=abc&body=abc"))
case("handler-te-chunked", F, "the handler sets Transfer-Encoding: chunked", get(b"/reflect?header=Transfer-Encoding:chunked&body=abc"))
case("handler-te-and-length", F, "the handler sets Transfer-Encoding: chunked and Content-Length", get(b"/reflect?header=Transfer-Encoding:chunked&cl=3&body=abc"))
case("http10-flushed", F, "HTTP/1.0, the handler flushes: the body ends with the connection", get(b"/reflect?flush=1&body=abc", proto=b"HTTP/1.0"))
case("body-fits-the-buffer", F, "a 2048-byte body: it fits Go's response buffer, so it gets a Content-Length",
     get(b"/reflect?body=" + b"x" * 2048))
case("body-overflows-the-buffer", F, "a 2049-byte body: it overflows Go's 2 KiB buffer before the handler returns: chunked",
     get(b"/reflect?body=" + b"x" * 2049))
case("http10-body-overflows-the-buffer", F, "HTTP/1.0, a 2049-byte body: no length, the connection ends it",
     get(b"/reflect?body=" + b"x" * 2049, proto=b"HTTP/1.0"))
case("sniff-content-type", F, "no Content-Type from the handler: Go sniffs one", get(b"/reflect?body=%3Chtml%3E&sniff=1"))

# -- response-splitting ---------------------------------------------------------------------------
D = "response-splitting"


def split_case(id: str, query: bytes, description: str) -> None:
    case(id, D, description, get(b"/reflect?body=ok&" + query))


split_case("split-crlf-value", b"header=X-A:a%0d%0aSet-Cookie:%20evil=1", "CRLF in a response header value")
split_case("split-lf-value", b"header=X-A:a%0aSet-Cookie:%20evil=1", "LF in a response header value")
split_case("split-cr-value", b"header=X-A:a%0dSet-Cookie:%20evil=1", "CR in a response header value")
split_case("split-crlfcrlf-value", b"header=X-A:a%0d%0a%0d%0a%3Chtml%3E", "CRLFCRLF in a response header value (a body injected)")
split_case("split-nul-value", b"header=X-A:a%00b", "NUL in a response header value")
split_case("split-control-value", b"header=X-A:a%01%7fb", "0x01 and DEL in a response header value")
split_case("split-crlf-name", b"header=X-A%0d%0aSet-Cookie:evil", "CRLF in a response header name")
split_case("split-space-name", b"header=X%20A:b", "a space in a response header name")
split_case("split-empty-name", b"header=:b", "an empty response header name")
split_case("split-value-whitespace", b"header=X-A:%20%09a%20%09", "spaces and tabs around a response header value")
split_case("split-latin1-value", b"header=X-A:caf%C3%A9%FF", "UTF-8 and 0xff bytes in a response header value")

# -- echo -----------------------------------------------------------------------------------------
H = "echo"
case("echo-basic", H, "/echo?message=hello", get(b"/echo?message=hello"))
case("echo-missing", H, "/echo without a message", get(b"/echo"))
case("echo-plus", H, "/echo?message=a+b", get(b"/echo?message=a+b"))
case("echo-invalid-escape", H, "/echo?message=%zz", get(b"/echo?message=%zz"))
case("echo-semicolon", H, "/echo?message=a;b", get(b"/echo?message=a;b"))
case("echo-utf8", H, "/echo?message=caf%C3%A9", get(b"/echo?message=caf%C3%A9"))
case("echo-invalid-utf8", H, "/echo?message=%FF", get(b"/echo?message=%FF"))
case("echo-crlf", H, "/echo with CRLF in the message (response splitting)", get(b"/echo?message=a%0d%0aSet-Cookie:%20evil=1"))
case("echo-head", H, "HEAD /echo", get(b"/echo?message=hi", method=b"HEAD"), heads=(0,))
case("echo-post-body", H, "POST /echo with a body the handler does not read", post_cl(b"hello", target=b"/echo?message=hi"))

CASES_BY_ID = {c.id: c for c in CASES}
assert len(CASES_BY_ID) == len(CASES), "duplicate case ids"
