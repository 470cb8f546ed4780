"""Sending generated sequences (api_grammar.py) to a server, and comparing two servers' answers:
shared by the differential fuzzer (fuzz_api.py), the generated corpus's recorder
(record_generated.py) and its replay (tests/test_parity_generated.py).

A sequence runs in a fresh namespace: on kube-apiserver it is created first (a setup request, not
compared: NamespaceLifecycle refuses a write to a namespace that does not exist), on serve, which
has no namespace objects, it is only a name. Each request's template is resolved per server
(api_grammar.State: the `{rv:NAME}` and `{uid:NAME}` it answered), sent on a kept-alive TLS
connection, and its answer recorded by api.py's masking rule (`api.answer_of`).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import re
import ssl
from dataclasses import dataclass, field
from typing import Any, Optional

from parity import api, api_rules
from parity.api_grammar import State, resolved

SETUP_HEADERS = {"Authorization": f"Bearer {api.TOKEN}", "Content-Type": "application/json", "Accept": "application/json"}


def keep_compared(masked: Any) -> Any:
    """What is recorded of a body: less what is set aside when compared (api_rules.ASIDES: a
    Table's column descriptions, a discovery document's entries for what serve does not serve), so
    that kube's documents are small enough to keep whole; past DIGEST_PAST, its digest."""
    kept = api_rules.set_aside({"headers": {}, "body": masked})["body"]
    text = json.dumps(kept, sort_keys=True)
    if len(text) > DIGEST_PAST:
        return {"sha256-of-masked-body": hashlib.sha256(text.encode()).hexdigest(), "length": len(text)}
    return kept


# a body longer than this, once masked and set aside, is kept as its digest (the root path's list of
# kube's paths, a list of a namespace's many configmaps): compared all the same, in a smaller file
DIGEST_PAST = 4 << 10


class Client:
    """One server, one kept-alive TLS connection (a new one after the server closed it)."""

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.port, self.timeout = port, timeout
        self.ctx = ssl.create_default_context(cafile=str(api.CERT))
        self.ctx.set_alpn_protocols(["http/1.1"])
        self.conn: Optional[http.client.HTTPSConnection] = None

    def _connection(self) -> http.client.HTTPSConnection:
        if self.conn is None:
            self.conn = http.client.HTTPSConnection("127.0.0.1", self.port, timeout=self.timeout, context=self.ctx)
        return self.conn

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def raw(self, request: dict) -> tuple[int, list[tuple[str, str]], bytes]:
        body = request.get("body")
        data = body.encode() if isinstance(body, str) else body
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(request["method"], request["path"], body=data, headers=dict(request.get("headers") or {}))
                r = conn.getresponse()
                raw = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()  # the kept-alive connection was closed under us: once more on a new one
                if attempt == 2:
                    raise
                continue
            if r.will_close:
                self.close()
            return r.status, r.getheaders(), raw
        raise AssertionError("unreachable")


def make_namespace(kube: Client, ns: str) -> None:
    status, _, raw = kube.raw({"method": "POST", "path": "/api/v1/namespaces", "headers": SETUP_HEADERS,
                               "body": json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})})
    if status != 201:
        raise RuntimeError(f"namespace {ns}: {status} {raw[:300]!r}")


def run(client: Client, steps: list[dict], ns: str) -> list[dict]:
    """Each step resolved for this server and sent; the answers, in order. A name the server made
    from a `generateName` is masked as the create's answer masks it (api.py) in every later answer
    of the sequence too (a list, a get of every namespace's), so that the two servers' random
    suffixes compare equal there as well."""
    state, answers, made = State(), [], []
    for step in steps:
        request = resolved(step, state, ns)
        status, headers, raw = client.raw(request)
        state.learn(raw)
        shown = raw
        for name, masked in made:
            shown = shown.replace(name, masked)
        answer = api.answer_of(status, headers, shown, request, keep=keep_compared)
        answer.pop("object-rv", None)  # what a client sends back is resolved per server here (State)
        answers.append(answer)
        prefix = api._generate_name(request)[:api.MAX_GENERATED_PREFIX].encode()
        if prefix and 200 <= status < 300:
            for name in set(re.findall(re.escape(prefix) + api.GENERATED_SUFFIX.encode(), raw)):
                made.append((name, prefix + b"<generated>"))
    return answers


@dataclass
class Compared:
    request: dict  # the template in its namespace (in_namespace)
    kube: dict  # compared forms
    ours: dict
    differs: bool
    rule: Optional[str] = None  # the cause, when it differs and a rule matches
    asides: list[str] = field(default_factory=list)


def in_namespace(step: dict, ns: str) -> dict:
    """A template with its namespace filled in, `{rv:NAME}` and `{uid:NAME}` left as they are
    (each server got its own): the request as a rule sees it and a report shows it."""
    return {**step, "path": step["path"].replace("{ns}", ns),
            "body": step["body"].replace("{ns}", ns) if isinstance(step.get("body"), str) else step.get("body")}


def compare_sequence(steps: list[dict], kube_answers: list[dict], our_answers: list[dict], ns: str) -> list[Compared]:
    """Each exchange of a sequence compared (api_rules), with the cause of each difference."""
    seq, out = api_rules.Sequence(), []
    for step, kube_recorded, ours_recorded in zip(steps, kube_answers, our_answers):
        request = in_namespace(step, ns)
        kube, ours = api_rules.compare(kube_recorded, ours_recorded)
        c = Compared(request, kube, ours, kube != ours, asides=api_rules.asides_used(api_rules.kube_answer(kube_recorded)))
        if c.differs:
            e = api_rules.Exchange(request["method"], request["path"], request.get("headers") or {}, request.get("body"),
                                   kube, ours, diverged=seq.diverged(request["method"], request["path"]))
            c.rule = api_rules.classify(e)
            seq.differed(request["method"], request["path"])
        elif api_rules.keeps_object(request["method"], request["path"], request.get("body"), kube["status"]):
            seq.differed(request["method"], request["path"])  # the same answer, yet kube keeps what serve deleted
        out.append(c)
    return out


def show(c: Compared) -> str:
    """One exchange side by side: the request, then each part of the answers that differs."""
    r = c.request
    lines = [f"{r['method']} {r['path']}"]
    for k, v in (r.get("headers") or {}).items():
        if k != "Authorization":
            lines.append(f"    {k}: {v}")
    if r.get("body") is not None:
        lines.append(f"    body: {r['body'][:600]}")
    for where, kube, ours in differences(c.kube, c.ours):
        lines.append(f"  {where}:")
        lines.append(f"    kube-apiserver: {kube[:1500]}")
        lines.append(f"    serve:          {ours[:1500]}")
    return "\n".join(lines)


MISSING = object()


def differences(kube: Any, ours: Any, where: str = "") -> list[tuple[str, str, str]]:
    """Where two answers differ, as (dotted path, kube's value, ours), the deepest that differ: a
    key one side lacks, a list of another length, a value."""
    if isinstance(kube, dict) and isinstance(ours, dict):
        out = []
        for key in sorted(set(kube) | set(ours), key=str):
            a, b = kube.get(key, MISSING), ours.get(key, MISSING)
            if a != b:
                out += differences(a, b, f"{where}.{key}" if where else str(key))
        return out
    if isinstance(kube, list) and isinstance(ours, list) and len(kube) == len(ours):
        return [d for i, (a, b) in enumerate(zip(kube, ours)) if a != b for d in differences(a, b, f"{where}[{i}]")]

    def text(v: Any) -> str:
        return "(absent)" if v is MISSING else json.dumps(v, sort_keys=True)
    return [(where, text(kube), text(ours))]
