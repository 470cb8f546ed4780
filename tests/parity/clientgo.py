"""client-go as a client: reference/clientgo's run against a server, its transcript and its exchanges.

`reference/clientgo` (client-go v0.36.0, `make reference`) drives a server as controllers do, in JSON
and in protobuf: typed create, get, list with paging, watch, the four patch types, deletes with
preconditions and two informers (a watch-list and a list then a watch); and, in a phase of its own,
a GET across a SIGTERM in retry-after mode. It prints a transcript, one JSON line a step.

The main phases go through :class:`Proxy`, a TLS proxy on loopback (HTTP/1.1 only, so that it can
read what passes) that writes each exchange down: the request as client-go sent it, the answer by
the API corpus's rule (:func:`parity.api.answer_of`; a protobuf watch stream read event by event),
which client made it (its User-Agent: the main flow, or one of the informers), when it started and
when it ended in the order of all starts and ends (a watch ends when client-go closes it), how many
watch events it carried, and the values a server makes up (resourceVersions, uids, continue
tokens) in the order the answer holds them, so that a replay can send back its own server's.

Compared (:func:`compare`), by the corpus's masking rule and nothing else: each client's exchanges
in order (method, path with its made-up values masked, answer), and, where the program ran, its
transcript with each object masked as an answer's body is. `record_clientgo.py` records kube-apiserver's;
`tests/test_parity_clientgo.py` runs the program against `genericserver serve` where it is built, and
where it is not, :func:`replay` sends the recorded requests in the recorded order (a watch kept open
until it has carried as many events as kube-apiserver's did) and compares the same way.
"""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import os
import re
import select
import socket
import ssl
import subprocess
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Optional

from parity import api

ROOT = Path(__file__).resolve().parent.parent.parent
# `make reference` builds it there; CLIENTGO names another build (a person's, before make reference)
BINARY = Path(os.environ.get("CLIENTGO") or ROOT / ".reference-bin" / "clientgo")
ENCODINGS = ("json", "protobuf")
VOLATILE_KEYS = ("resourceVersion", "uid", "continue")
# the query parameters that carry made-up values
VOLATILE_PARAMS = ("resourceVersion", "continue")
# what client-go itself draws at random: a reflector's watch timeout (reflector.go: between the
# minimum watch timeout and twice it), masked in the path compared
RANDOM_PARAMS = ("timeout", "timeoutSeconds")
WAIT = 30.0


# -- bodies -----------------------------------------------------------------------------------------


def dechunk(raw: bytes) -> bytes:
    """The body of a chunked HTTP/1.1 answer (as far as it came)."""
    out, at = bytearray(), 0
    while True:
        end = raw.find(b"\r\n", at)
        if end < 0:
            return bytes(out)
        size = int(raw[at:end].split(b";")[0] or b"0", 16)
        if size == 0:
            return bytes(out)
        out += raw[end + 2:end + 2 + size]
        at = end + 2 + size + 2


def decoded(body: bytes, content_type: str) -> Any:
    """A body as a JSON-shaped value (a watch stream: its events' objects as a list), or None."""
    if content_type.startswith("application/vnd.kubernetes.protobuf"):
        from genericserver.apimachinery.runtime.serializer import protobuf

        _register()
        try:
            if "stream=watch" in content_type:
                return [{"type": t, "object": o} for t, o in protobuf.decode_watch_events(body)]
            return protobuf.decode(body)
        except Exception:  # noqa: BLE001 - an unreadable body has no values to find
            return None
    if "json" not in content_type:
        return None
    try:
        return json.loads(body)
    except ValueError:
        try:
            return [json.loads(line) for line in body.splitlines() if line.strip()]
        except ValueError:
            return None


def _register() -> None:
    import genericserver.registry.reviews  # noqa: F401 - registers the review kinds
    import genericserver.sampleapi  # noqa: F401 - registers ConfigMap and Status


def volatile_values(doc: Any) -> list[list[str]]:
    """The values a server makes up, in the order a walk of the document meets them: [key, value]."""
    found: list[list[str]] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                if k in VOLATILE_KEYS and isinstance(x, str) and x:
                    found.append([k, x])
                else:
                    walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(doc)
    return found


def answer(status: int, headers: list[tuple[str, str]], body: bytes, request: dict) -> dict:
    """The API corpus's answer, a protobuf watch stream read event by event as well."""
    content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
    out = api.answer_of(status, headers, body, request)
    if content_type.startswith("application/vnd.kubernetes.protobuf") and "stream=watch" in content_type:
        events = decoded(body, content_type)
        if events is not None:
            for e in events:
                api._mask_object(e)
            out["body"] = {"protobuf-stream": events}
    return out


def event_count(body: bytes, content_type: str) -> int:
    """How many events a watch's body holds (a JSON stream of one event reads as one document)."""
    events = decoded(body, content_type)
    if isinstance(events, dict):
        return 1
    return len(events) if isinstance(events, list) else 0


def masked_path(path: str) -> str:
    """A request's path and query with the made-up values of the query masked, and the watch
    timeout client-go draws at random."""
    base, _, query = path.partition("?")
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    def shown(k: str, v: str) -> str:
        masked = k in RANDOM_PARAMS or (k in VOLATILE_PARAMS and v not in ("", "0"))
        return f"<{k}>" if masked else v
    return base + ("?" + "&".join(f"{k}={shown(k, v)}" for k, v in pairs) if pairs else "")


def is_watch(path: str) -> bool:
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
    return query.get("watch", [""])[0] in ("true", "1")


def request_body(raw: Optional[bytes]) -> Any:
    """A request body as recorded: text, or its bytes in hex where it is no UTF-8 (protobuf)."""
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": raw.hex()}


def body_bytes(body: Any) -> Optional[bytes]:
    if body is None:
        return None
    return bytes.fromhex(body["hex"]) if isinstance(body, dict) else body.encode()


# -- the recording proxy ----------------------------------------------------------------------------


class Exchanges:
    """The exchanges a proxy wrote down, and the clock of starts and ends that orders them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.list: list[dict] = []
        self.tick = 0

    def now(self) -> int:
        with self.lock:
            self.tick += 1
            return self.tick


def _tls_client() -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(api.CERT))
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    upstream_port = 0
    exchanges: Exchanges

    def log_message(self, *args: object) -> None:
        pass

    def _forward(self) -> None:
        start = self.exchanges.now()
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else None
        headers = [(k, v) for k, v in self.headers.items() if k.lower() not in api.DROPPED_REQUEST_HEADERS]
        request = {"method": self.command, "path": self.path, "headers": dict(headers),
                   "body": request_body(raw_body), "client": self.headers.get("User-Agent", "")}
        if is_watch(self.path):
            status, resp_headers, body = self._stream(raw_body, headers)
        else:
            status, resp_headers, body = self._whole(raw_body, headers)
        content_type = next((v for k, v in resp_headers if k.lower() == "content-type"), "")
        exchange = {**request, "start": start, "end": self.exchanges.now(),
                    "answer": answer(status, resp_headers, body, request),
                    "volatile": volatile_values(decoded(body, content_type))}
        if is_watch(self.path):
            exchange["events"] = event_count(body, content_type)
        with self.exchanges.lock:
            self.exchanges.list.append(exchange)

    def _whole(self, raw_body: Optional[bytes], headers: list) -> tuple[int, list, bytes]:
        conn = http.client.HTTPSConnection("127.0.0.1", self.upstream_port, context=_tls_client(), timeout=60)
        try:
            conn.request(self.command, self.path, body=raw_body, headers=dict(headers))
            r = conn.getresponse()
            body = r.read()
            resp_headers = r.getheaders()
        finally:
            conn.close()
        self.send_response_only(r.status)
        for k, v in resp_headers:
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        return r.status, resp_headers, body

    def _stream(self, raw_body: Optional[bytes], headers: list) -> tuple[int, list, bytes]:
        """A watch: the answer passed on as its bytes come, until either side closes."""
        up = _tls_client().wrap_socket(socket.create_connection(("127.0.0.1", self.upstream_port)),
                                       server_hostname="127.0.0.1")
        try:
            head = f"{self.command} {self.path} HTTP/1.1\r\nHost: 127.0.0.1:{self.upstream_port}\r\n"
            head += "".join(f"{k}: {v}\r\n" for k, v in headers)
            if raw_body:
                head += f"Content-Length: {len(raw_body)}\r\n"
            up.sendall(head.encode() + b"\r\n" + (raw_body or b""))
            data = b""
            while b"\r\n\r\n" not in data:
                piece = up.recv(65536)
                if not piece:
                    break
                data += piece
            head_bytes, _, rest = data.partition(b"\r\n\r\n")
            lines = head_bytes.decode("latin-1").split("\r\n")
            status = int(lines[0].split(" ")[1])
            resp_headers = [tuple(x.strip() for x in line.split(":", 1)) for line in lines[1:] if ":" in line]
            self.wfile.write(head_bytes + b"\r\n\r\n")
            raw = bytearray(rest)
            if rest:
                self.wfile.write(rest)
            self.wfile.flush()
            client = self.connection
            while not raw.endswith(b"0\r\n\r\n"):
                if not up.pending():
                    ready, _, _ = select.select([up, client], [], [], 1.0)
                    if client in ready:
                        if not client.recv(4096):
                            break  # client-go closed the watch
                    if up not in ready:
                        continue
                piece = up.recv(65536)
                if not piece:
                    break
                raw += piece
                try:
                    self.wfile.write(piece)
                    self.wfile.flush()
                except OSError:
                    break
            self.close_connection = True
            chunked = any(k.lower() == "transfer-encoding" and "chunked" in v for k, v in resp_headers)
            return status, resp_headers, dechunk(bytes(raw)) if chunked else bytes(raw)
        finally:
            up.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward


class Proxy:
    """A recording TLS proxy on loopback to a server's port: `with Proxy(port) as p: ... p.exchanges`."""

    def __init__(self, upstream_port: int) -> None:
        self.exchanges = Exchanges()
        handler = type("Handler", (_Handler,), {"upstream_port": upstream_port, "exchanges": self.exchanges})
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(str(api.CERT), str(api.CERT.with_name("localhost-key.pem")))
        tls.set_alpn_protocols(["http/1.1"])
        self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, name="clientgo-proxy", daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "Proxy":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(WAIT)


# -- running the program ----------------------------------------------------------------------------


def run_main(url: str, token: str, encoding: str, binary: Path = BINARY) -> list[dict]:
    """The main phase's transcript, one dict a line."""
    out = subprocess.run([str(binary), "--server", url, "--token", token, "--ca", str(api.CERT), "--encoding", encoding,
                          "--phase", "main"], capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"clientgo exited {out.returncode}: {out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def run_sigterm(url: str, token: str, encoding: str, signal_server: Callable[[], None],
                wait_not_accepting: Callable[[], None], binary: Path = BINARY) -> list[dict]:
    """The sigterm phase: the program holds a POST; then the server is signalled, and once it no
    longer accepts, the program GETs (429, a wait of its Retry-After, a retry). Its transcript."""
    proc = subprocess.Popen([str(binary), "--server", url, "--token", token, "--ca", str(api.CERT), "--encoding", encoding,
                             "--phase", "sigterm"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines = []
    try:
        assert proc.stdout is not None and proc.stdin is not None
        for line in proc.stdout:
            lines.append(json.loads(line))
            if lines[-1]["step"] == "holding":
                break
        signal_server()
        wait_not_accepting()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        rest, err = proc.communicate(timeout=60)
        lines += [json.loads(line) for line in rest.splitlines() if line.strip()]
        if proc.returncode != 0:
            raise RuntimeError(f"clientgo exited {proc.returncode}: {err[-2000:]}")
        return lines
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# -- what is compared -------------------------------------------------------------------------------


def masked_transcript(lines: list[dict]) -> list[dict]:
    """The transcript by the corpus's rule: each object masked as an answer's body is."""
    out = []
    for line in lines:
        line = json.loads(json.dumps(line), object_hook=_drop_managed)  # left out, as in the API corpus
        for key in ("object",):
            if isinstance(line.get(key), dict):
                api._mask_object(line[key])
                _mask_meta_deep(line[key])
        err = line.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            err["message"] = api._mask_text(err["message"])
        out.append(line)
    return out


def _mask_meta_deep(obj: dict) -> None:
    # a typed client's list keeps its items without kind: the corpus rule masks items' metadata too
    for item in obj.get("items") or []:
        api._mask_meta(item.get("metadata"))
    api._mask_meta(obj.get("metadata"))


def by_client(exchanges: list[dict]) -> dict[str, list[dict]]:
    """Each client's exchanges in the order it sent them, as compared."""
    out: dict[str, list[dict]] = {}
    for e in sorted(exchanges, key=lambda e: e["start"]):
        out.setdefault(e["client"], []).append({"method": e["method"], "path": masked_path(e["path"]),
                                                "answer": left_out(api.compared(e["answer"]))})
    return out


def left_out(answer: dict) -> dict:
    """What this project leaves out, taken out of kube-apiserver's answers (as the API corpus does):
    managed fields."""
    return json.loads(json.dumps(answer), object_hook=_drop_managed)


def _drop_managed(d: dict) -> dict:
    d.pop("managedFields", None)
    return d


def differences(recorded: list[dict], ours: list[dict]) -> list[str]:
    """Each exchange that differs, as `client #n: method path` with both answers."""
    want, got = by_client(recorded), by_client(ours)
    out = []
    for client in sorted(set(want) | set(got)):
        w, g = want.get(client, []), got.get(client, [])
        for i in range(max(len(w), len(g))):
            a = w[i] if i < len(w) else None
            b = g[i] if i < len(g) else None
            if a != b:
                label = (a or b or {}).get("method", "?") + " " + (a or b or {}).get("path", "?")
                out.append(f"{client} #{i}: {label}\n  kube: {json.dumps(a, sort_keys=True)}\n  ours: {json.dumps(b, sort_keys=True)}")
    return out


# -- the replay without Go --------------------------------------------------------------------------


class Translation:
    """Made-up values of the recording mapped to the replayed server's, from answers read side by side."""

    def __init__(self) -> None:
        self.map: dict[str, str] = {}

    def learn(self, recorded: list[list[str]], ours: list[list[str]]) -> None:
        for (k1, v1), (k2, v2) in zip(recorded, ours):
            if k1 == k2 and v1 != v2:
                self.map.setdefault(v1, v2)

    def path(self, path: str) -> str:
        base, _, query = path.partition("?")
        if not query:
            return path
        pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
        pairs = [(k, self.map.get(v, v) if k in VOLATILE_PARAMS else v) for k, v in pairs]
        return base + "?" + urllib.parse.urlencode(pairs)

    def body(self, body: Optional[bytes], content_type: str) -> Optional[bytes]:
        if not body or not self.map:
            return body
        if content_type.startswith("application/vnd.kubernetes.protobuf"):
            from genericserver.apimachinery.runtime.serializer import protobuf

            _register()
            from genericserver.apimachinery.apis.meta.v1.types import DELETE_OPTIONS

            try:
                doc, struct = protobuf.decode(body), None
            except protobuf.ProtobufError:  # a DeleteOptions: a kind of the meta scheme
                doc, struct = protobuf.decode(body, struct=DELETE_OPTIONS), DELETE_OPTIONS
            changed = self._swap(doc)
            return protobuf.encode(doc, struct) if changed else body
        text = body.decode()
        for old, new in self.map.items():
            text = re.sub(r'("(?:%s)":\s*")%s"' % ("|".join(VOLATILE_KEYS), re.escape(old)), lambda m: m.group(1) + new + '"', text)
        return text.encode()

    def _swap(self, v: Any) -> bool:
        changed = False
        if isinstance(v, dict):
            for k, x in v.items():
                if k in VOLATILE_KEYS and isinstance(x, str) and x in self.map:
                    v[k] = self.map[x]
                    changed = True
                else:
                    changed = self._swap(x) or changed
        elif isinstance(v, list):
            for x in v:
                changed = self._swap(x) or changed
        return changed


def _send(port: int, exchange: dict, translation: Translation) -> tuple[int, list, bytes]:
    headers = dict(exchange["headers"])
    body = translation.body(body_bytes(exchange["body"]), headers.get("Content-Type", ""))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=_tls_client(), timeout=60)
    try:
        conn.request(exchange["method"], translation.path(exchange["path"]), body=body, headers=headers)
        r = conn.getresponse()
        return r.status, r.getheaders(), r.read()
    finally:
        conn.close()


class _Watch:
    """A replayed watch: its head read at once, its events read on a thread until it has as many
    as the recording's (or WAIT passes), then closed."""

    def __init__(self, port: int, exchange: dict, translation: Translation) -> None:
        self.exchange, self.want = exchange, exchange.get("events", 0)
        headers = dict(exchange["headers"])
        self.conn = http.client.HTTPSConnection("127.0.0.1", port, context=_tls_client(), timeout=WAIT)
        self.conn.request(exchange["method"], translation.path(exchange["path"]),
                          body=translation.body(body_bytes(exchange["body"]), headers.get("Content-Type", "")), headers=headers)
        self.response = self.conn.getresponse()
        self.body = bytearray()
        self.thread = threading.Thread(target=self._read, name="replayed-watch", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        content_type = self.response.getheader("Content-Type", "")
        try:
            while event_count(bytes(self.body), content_type) < self.want:
                piece = self.response.read1(65536)
                if not piece:
                    break
                self.body += piece
        except OSError:
            pass

    def finish(self) -> tuple[int, list, bytes]:
        self.thread.join(WAIT)
        self.conn.close()
        self.thread.join(WAIT)
        return self.response.status, self.response.getheaders(), bytes(self.body)


def replay(recorded: list[dict], port: int) -> list[dict]:
    """The recorded requests sent to a server on `port` in the recorded order of starts and ends;
    our exchanges, in the recording's form."""
    translation = Translation()
    timeline = sorted([(e["start"], "start", i) for i, e in enumerate(recorded)] +
                      [(e["end"], "end", i) for i, e in enumerate(recorded)])
    open_watches: dict[int, _Watch] = {}
    ours: list[dict] = []

    def done(i: int, status: int, headers: list, body: bytes) -> None:
        e = recorded[i]
        content_type = next((v for k, v in headers if k.lower() == "content-type"), "")
        values = volatile_values(decoded(body, content_type))
        translation.learn(e["volatile"], values)
        mine = {**{k: e[k] for k in ("method", "path", "headers", "body", "client", "start", "end")},
                "answer": answer(status, headers, body, e), "volatile": values}
        if is_watch(e["path"]):
            mine["events"] = event_count(body, content_type)
        ours.append(mine)

    try:
        for _, what, i in timeline:
            e = recorded[i]
            if what == "start" and is_watch(e["path"]):
                open_watches[i] = _Watch(port, e, translation)
            elif what == "start":
                done(i, *_send(port, e, translation))
            elif i in open_watches:
                done(i, *open_watches.pop(i).finish())
    finally:
        for w in open_watches.values():
            w.conn.close()
    return ours


# -- the sigterm phase ------------------------------------------------------------------------------


def sigterm_view(lines: list[dict]) -> dict:
    """What the server decided in the sigterm phase, from a transcript: the answer to the first
    GET after NotAcceptingNewRequest (status, Retry-After, body) and the held POST's answer."""
    attempts = [line for line in lines if line["step"] == "attempt" and line.get("method") == "GET"]
    first = attempts[0] if attempts else {}
    held = next((line for line in lines if line["step"] == "held POST"), {})
    held = masked_transcript([held])[0] if held else {}
    return {"first-get": {k: first.get(k) for k in ("status", "retry-after", "body")},
            "held": {k: v for k, v in held.items() if k != "step"}}


def _accept(encoding: str) -> str:
    return "application/vnd.kubernetes.protobuf,application/json" if encoding == "protobuf" else "application/json, */*"


def replay_sigterm(recorded: list[dict], encoding: str, port: int, signal_server: Callable[[], None],
                   wait_not_accepting: Callable[[], None]) -> dict:
    """The sigterm phase without the program: the held POST (its head and half its body), the
    signal, the GET once the server no longer accepts, then the rest of the POST's body. The
    same view :func:`sigterm_view` takes of a transcript."""
    body = next(line for line in recorded if line["step"] == "holding")["body"].encode()
    get = next(line for line in recorded if line["step"] == "attempt" and line.get("method") == "GET")
    auth = f"Bearer {api.TOKEN}"
    held = _tls_client().wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="127.0.0.1")
    try:
        held.sendall(f"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Authorization: {auth}\r\nAccept: {_accept(encoding)}\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:len(body) // 2])
        # what the program knows at this point: its transport has taken the first half
        signal_server()
        wait_not_accepting()
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=_tls_client(), timeout=WAIT)
        try:
            conn.request("GET", get["path"], headers={"Authorization": auth, "Accept": _accept(encoding)})
            r = conn.getresponse()
            first = {"status": r.status, "retry-after": r.getheader("Retry-After", ""), "body": r.read().decode()}
        finally:
            conn.close()
        held.sendall(body[len(body) // 2:])
        response = http.client.HTTPResponse(held)
        response.begin()
        raw = response.read()
        doc = decoded(raw, response.getheader("Content-Type", ""))
        outcome: dict[str, Any] = {"code": response.status}
        if response.status < 300 and isinstance(doc, dict):
            # as client-go's decoder hands it back: a typed object without its kind and apiVersion
            outcome["object"] = {k: v for k, v in doc.items() if k not in ("kind", "apiVersion")}
        else:
            outcome["error"] = {k: doc.get(k) for k in ("code", "reason", "message")} if isinstance(doc, dict) else {}
        view = masked_transcript([{"step": "held POST", **outcome}])[0]
        return {"first-get": first, "held": {k: v for k, v in view.items() if k != "step"}}
    finally:
        held.close()
