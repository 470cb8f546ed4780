"""The API surface corpus: requests to the REST layer and what the real kube-apiserver answered.

An exchange is one HTTP/1.1 request over TLS (method, path, headers, body) and its answer (status,
the headers below, the body). `record_api.py` sends the hand-written exchanges of `api_corpus.py`,
then runs kubectl v1.36 and the `kubernetes` Python client through a recording proxy, all against one
fresh kube-apiserver v1.36.0 (reference/pair.py), and writes them in the order sent to
`go-api.json`; `tests/test_parity_api.py` sends the same requests, in the same order, to one fresh
`genericserver serve` and compares.

**The masking rule**, one for both sides (`mask`): in a JSON body, the values a server makes up are
replaced by a placeholder naming them: `metadata.uid` `<uid>`, `metadata.resourceVersion` and a list's
`<rv>`, `metadata.creationTimestamp` and `deletionTimestamp` `<time>`, `metadata.continue` `<continue>`
(it encodes a resourceVersion), and the same fields of a watch event's object and of a Table's rows'
objects, and each managed field entry's `time`; a Table's age cells are `<age>`; a Status's `details.uid`, the server address in `/api`, and
UUIDs, times and resourceVersions inside a Status message and its causes' messages; the random suffix of a name made from a
`generateName` (`PREFIX<generated>`); and in a YAML body the same keys' values, as text, inside the
quotes they had (so the quoting is compared). Headers: `Audit-Id` is compared as present or not,
`Date` not at all; the others listed in `HEADERS` exactly. Any other body is compared as it is. A
masked body longer than 64 KiB is recorded, and compared, as the digest of its masked form.
Nothing else is masked: every other difference is either fixed or listed, with its reason, in
`tests/test_parity_api.py`'s `KNOWN_DIFFERENCES` and walkthrough.md's table "Where we differ from
kube-apiserver, measured".
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import ssl
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent.parent
CERT = ROOT / "tests" / "data" / "localhost-cert.pem"
TOKEN = "reference-admin-token"
# compared exactly (names in lower case); Audit-Id as present or not
HEADERS = ("content-type", "cache-control", "warning", "retry-after", "location", "x-content-type-options",
           "content-encoding", "transfer-encoding")
# the request headers a replay sends (what the clients sent, less the ones each hop makes its own:
# Host, Content-Length and Accept-Encoding, which the proxy takes out before kube-apiserver sees it)
DROPPED_REQUEST_HEADERS = {"host", "content-length", "accept-encoding", "connection"}
PLACEHOLDERS = {"uid": "<uid>", "resourceVersion": "<rv>", "creationTimestamp": "<time>",
                "deletionTimestamp": "<time>", "continue": "<continue>"}
# inside a Status message (Go prints a patched object into one): the same values as text
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
RV_IN_TEXT = re.compile(r'(resourceVersion\\?":\\?")\d+')
RV_IN_RECORD = re.compile(r"(ResourceVersion in record \()\d+")  # a deletecollection's precondition
AGE = re.compile(r"^(\d+(s|m|h|d|y))+$|^<invalid>$")


def _mask_meta(meta: Any) -> None:
    if isinstance(meta, dict):
        for key, value in PLACEHOLDERS.items():
            if key in meta and meta[key] not in ("", None):
                meta[key] = value
        for entry in meta.get("managedFields") or []:
            if isinstance(entry, dict) and entry.get("time"):
                entry["time"] = "<time>"  # so that a re-recording differs only where kube-apiserver does


def _mask_text(text: str) -> str:
    return RV_IN_RECORD.sub(r"\1<rv>", RV_IN_TEXT.sub(r"\1<rv>", TIME.sub("<time>", UUID.sub("<uid>", text))))


def _mask_object(obj: Any) -> None:
    if not isinstance(obj, dict):
        return
    _mask_meta(obj.get("metadata"))
    if obj.get("kind") == "Status" or "status" in obj and "code" in obj:
        if isinstance(obj.get("message"), str):
            obj["message"] = _mask_text(obj["message"])
        details = obj.get("details")
        if isinstance(details, dict) and details.get("uid"):
            details["uid"] = "<uid>"
        for cause in (details or {}).get("causes") or [] if isinstance(details, dict) else []:
            if isinstance(cause.get("message"), str):
                cause["message"] = _mask_text(cause["message"])
    for cidr in obj.get("serverAddressByClientCIDRs") or []:
        cidr["serverAddress"] = "<address>"  # the server's host:port, a port of the run's
    for item in obj.get("items") or []:
        _mask_object(item)
    if obj.get("kind") == "Table":
        for row in obj.get("rows") or []:
            _mask_object(row.get("object"))
            row["cells"] = ["<age>" if isinstance(c, str) and AGE.match(c) else c for c in row.get("cells", [])]
    if "object" in obj and "type" in obj:  # a watch event
        _mask_object(obj["object"])


# a YAML line that holds one of the values a server makes up: its indentation (and a list item's
# dash), the key, the quote if any, the value
YAML_VOLATILE = re.compile(r"^(\s*(?:- )?)(%s): ([\"']?)(.+?)\3$" % "|".join(PLACEHOLDERS), re.M)


# a managed field entry's time, in YAML: `time:` one level under a `- apiVersion:` list item
YAML_MANAGED_TIME = re.compile(r'^(\s+time: )"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"$', re.M)


def _mask_yaml(text: str) -> str:
    """A YAML body with the same values masked as a JSON one's, as text: each key's value
    becomes its placeholder inside the quotes it had, so the quoting is still compared."""
    text = YAML_MANAGED_TIME.sub(r'\1"<time>"', text)
    return YAML_VOLATILE.sub(lambda m: f"{m.group(1)}{m.group(2)}: {m.group(3)}{PLACEHOLDERS[m.group(2)]}{m.group(3)}", text)


def mask(body: bytes, content_type: str) -> Any:
    """The body as compared: JSON (one document, or a watch stream's documents, one a line, as
    `{"stream": [...]}`) or protobuf (read into the same form by genericserver's protobuf
    serializer, the one part of the server the rule uses) with the volatile values replaced;
    anything else as text."""
    if content_type.startswith("application/vnd.kubernetes.protobuf") and "stream" not in content_type and body:
        import genericserver.registry.reviews  # noqa: F401 - registers the review kinds
        import genericserver.sampleapi  # noqa: F401 - registers ConfigMap and Status
        from genericserver.apimachinery.runtime.serializer import protobuf

        try:
            doc = protobuf.decode(body)
        except Exception as err:  # noqa: BLE001 - a body the reader cannot read is compared as bytes
            return {"protobuf-unreadable": f"{type(err).__name__}: {err}", "bytes": body.hex()}
        _mask_object(doc)
        return {"protobuf": doc}
    text = body.decode("utf-8", "replace")
    if content_type.startswith("application/yaml"):
        return _mask_yaml(text)
    if "json" not in content_type:
        return text
    try:
        doc = json.loads(text)
    except ValueError:
        docs = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                docs.append(json.loads(line))
            except ValueError:
                return text
        for d in docs:
            _mask_object(d)
        return {"stream": docs}
    _mask_object(doc)
    return doc


# names.SimpleNameGenerator's suffix: five characters of its alphabet after the generateName prefix, which
# it cuts to 58 characters first (so that the name fits 63)
GENERATED_SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"
MAX_GENERATED_PREFIX = 58


def _generate_name(request: Optional[dict]) -> str:
    """The generateName prefix a create request asks for, or ''."""
    body = (request or {}).get("body")
    try:
        doc = json.loads(body) if isinstance(body, str) else None
    except ValueError:
        try:  # a YAML body (JSON is YAML too, but YAML's reader is the slower)
            import yaml

            doc = yaml.safe_load(body)
        except yaml.YAMLError:
            return ""
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    prefix = meta.get("generateName", "") if isinstance(meta, dict) and not meta.get("name") else ""
    return prefix if isinstance(prefix, str) else ""


def answer_of(status: int, headers: list[tuple[str, str]], body: bytes, request: Optional[dict] = None,
              keep: Optional[Any] = None) -> dict:
    """An answer as recorded: status, the compared headers, Audit-Id's presence, the masked body.
    For a request that asks for a generated name, the random suffix the server added to its prefix
    is masked too (`PREFIX<generated>`), wherever the answer shows it. `keep`, if given, is applied
    to the masked body before a large one becomes a digest (the generated corpus keeps only the
    discovery entries it compares: api_rules.served_only)."""
    prefix = _generate_name(request)[:MAX_GENERATED_PREFIX]
    if prefix:
        body = re.sub(re.escape(prefix).encode() + GENERATED_SUFFIX.encode(), prefix.encode() + b"<generated>", body)
    lower = {}
    for name, value in headers:
        lower.setdefault(name.lower(), []).append(value)
    out: dict[str, Any] = {"status": status,
                           "headers": {h: ", ".join(lower[h]) for h in HEADERS if h in lower},
                           "audit-id": "audit-id" in lower}
    masked = mask(body, ", ".join(lower.get("content-type", [""])))
    out["body"] = _digest_if_large(keep(masked) if keep else masked)
    rv = _object_rv(body, ", ".join(lower.get("content-type", [""])))
    if rv:
        out["object-rv"] = rv  # not compared: what a client that read this would send back
    return out


# a masked body longer than this (kube's OpenAPI and discovery documents) is recorded as its digest:
# compared all the same, without a megabyte of kube's schema in the repository
LARGE = 64 << 10


def _digest_if_large(masked: Any) -> Any:
    text = json.dumps(masked, sort_keys=True)
    if len(text) <= LARGE:
        return masked
    return {"sha256-of-masked-body": hashlib.sha256(text.encode()).hexdigest(), "length": len(text)}


def _object_rv(body: bytes, content_type: str) -> str:
    """The answered object's resourceVersion as sent (a JSON object's), or ''."""
    if "json" not in content_type:
        return ""
    try:
        doc = json.loads(body)
    except ValueError:
        return ""
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    return meta.get("resourceVersion", "") if isinstance(meta, dict) and doc.get("kind") not in (None, "Status") else ""


def compared(answer: dict) -> dict:
    """An answer less what is recorded but not compared."""
    return {k: v for k, v in answer.items() if k != "object-rv"}


def send(port: int, request: dict, timeout: float = 30.0) -> dict:
    """One request on a new TLS connection; its answer."""
    ctx = ssl.create_default_context(cafile=str(CERT))
    ctx.set_alpn_protocols(["http/1.1"])
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=timeout, context=ctx)
    try:
        body = request.get("body")
        data: Optional[bytes] = body.encode() if isinstance(body, str) else body
        conn.request(request["method"], request["path"], body=data, headers=dict(request.get("headers", {})))
        r = conn.getresponse()
        raw = r.read()
        return answer_of(r.status, r.getheaders(), raw, request)
    finally:
        conn.close()
