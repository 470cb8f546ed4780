"""The API surface corpus replayed against `genericserver serve` (tests/test_parity_api.py).

One fresh server, started as the recorder started kube-apiserver (TLS with the test certificate, the
same token file), gets every recorded request in the recorded order; each answer is compared, after
the masking rule of api.py, with kube-apiserver's. One more thing is translated, the way a client
would: a request body that sends back the resourceVersion kube-apiserver last answered for that
object (kubectl replace does) sends ours's instead.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import zygote
from parity import api, lifecycle

RECORDED = json.loads((Path(__file__).parent / "go-api.json").read_text())["exchanges"]
TOKENS = 'reference-admin-token,admin,admin-uid,"system:masters"\nreader-token,reader,reader-uid\n'


def _body_name_and_rv(body: Any) -> tuple[str, str]:
    try:
        doc = json.loads(body) if isinstance(body, str) else None
    except ValueError:
        return "", ""
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    if not isinstance(meta, dict):
        return "", ""
    return meta.get("name", ""), meta.get("resourceVersion", "")


def replay() -> Iterator[tuple[dict, dict]]:
    """(recorded exchange, our answer), in order, from one fresh `genericserver serve`."""
    with tempfile.TemporaryDirectory() as d:
        tokens = Path(d) / "tokens.csv"
        tokens.write_text(TOKENS)
        proc = zygote.Process(["serve", "--secure-port", "0", "--bind-address=127.0.0.1",
                               f"--tls-cert-file={api.CERT}", f"--tls-private-key-file={api.CERT.with_name('localhost-key.pem')}",
                               f"--token-auth-file={tokens}"], env={**os.environ, "PYTHONFAULTHANDLER": "1"})
        target = lifecycle.ProcessTarget(proc)
        go_rv: dict[str, str] = {}
        our_rv: dict[str, str] = {}
        try:
            for exchange in RECORDED:
                request = dict(exchange)
                name, rv = _body_name_and_rv(request.get("body"))
                if rv and go_rv.get(name) == rv and name in our_rv:
                    request["body"] = request["body"].replace(f'"resourceVersion":"{rv}"', f'"resourceVersion":"{our_rv[name]}"')
                    request["body"] = request["body"].replace(f'"resourceVersion": "{rv}"', f'"resourceVersion": "{our_rv[name]}"')
                ours = api.send(target.port, request)
                answered = exchange["answer"]
                key = name or exchange["path"].split("?")[0].rsplit("/", 1)[-1]
                if answered.get("object-rv"):
                    go_rv[key] = answered["object-rv"]
                if ours.get("object-rv"):
                    our_rv[key] = ours["object-rv"]
                yield exchange, ours
        finally:
            target.signal(15)
            target.wait(lifecycle.WAIT)
