"""Where genericserver's answers differ from kube-apiserver v1.36.0's, as rules: one table for the API
surface corpus (tests/test_parity_api.py), the generated corpus (tests/test_parity_generated.py)
and the differential fuzzer (`make parity-fuzz`); walkthrough 10.2 shows it, with the counts each
corpus gives (a test keeps them equal).

An answer is compared after api.py's masking rule, in three steps, the same for every exchange:

1. `LEFT_OUT`: what this project does not build is taken out of kube-apiserver's answer (managed
   fields).
2. `ASIDES`: parts set aside on both sides, each precise: a Table's column descriptions (the API's
   field documentation, from k8s.io/api's Go comments, which the project does not copy: the cells,
   columns, names, types and formats are compared), a discovery document's entries for resources
   serve does not serve (kube's filtered to serve's: `SERVED`), and the framing
   (`Transfer-Encoding`) of those two kinds of document, which follows their length.
3. `RULES`: an exchange that still differs must match a rule, one predicate per cause (a family
   of kube-apiserver's behaviour not ported yet, or a difference by design), never a list of cases.
   The first rule that matches classifies it. An exchange that differs and matches none fails the
   replay, and the fuzzer shrinks it.

A rule sees the exchange: the request as sent (`method`, `path`, `headers`, `body`), kube's answer
and ours (compared form), and `diverged`: whether an earlier exchange of the same sequence on the
same object (or, for a collection, in the same namespace) differed, so that the answers after a
stored difference (an object kube refused and serve stored) are classified by that, not by chance.
"""

from __future__ import annotations

import copy
import json
import re
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Optional

import yaml

from genericserver.endpoints.handlers.rest import CORE_V1_KINDS
from parity import api


# -- 1. left out ----------------------------------------------------------------------------------------

def _yaml_without_managed_fields(text: str) -> str:
    """A YAML body less each ``managedFields:`` block (the lines under it: deeper, or its list's
    items at its own indentation)."""
    out, inside = [], None
    for line in text.splitlines(keepends=True):
        indent = len(line) - len(line.lstrip(" "))
        if inside is not None and (indent > inside or (indent == inside and line.lstrip(" ").startswith("- "))):
            continue
        inside = None
        if line.strip() == "managedFields:":
            inside = indent
            continue
        out.append(line)
    return "".join(out)


def without_managed_fields(body: Any) -> Any:
    if isinstance(body, str):
        return _yaml_without_managed_fields(body)
    body = copy.deepcopy(body)

    def strip(x: Any) -> None:
        if isinstance(x, dict):
            if isinstance(x.get("metadata"), dict):
                x["metadata"].pop("managedFields", None)
            for v in x.values():
                strip(v)
        elif isinstance(x, list):
            for v in x:
                strip(v)

    strip(body)
    return body


# what is not built here, and so taken out of kube-apiserver's answers: (reason, how)
LEFT_OUT = {
    "managedFields": ("server-side apply and its managed fields are not built (walkthrough 9.1): kube-apiserver "
                      "adds metadata.managedFields to every object a write touches", without_managed_fields),
}


def kube_answer(answer: dict) -> dict:
    """kube-apiserver's recorded answer as compared: less what is not recorded for comparison and
    what LEFT_OUT takes out."""
    out = api.compared(answer)
    for _, how in LEFT_OUT.values():
        out["body"] = how(out["body"])
    return out


# -- 2. set aside -------------------------------------------------------------------------------------

# what serve serves, by group/version: a discovery document of kube's is compared for these only
SERVED = {"v1": {"configmaps"}, "authentication.k8s.io/v1": {"selfsubjectreviews"},
          "authorization.k8s.io/v1": {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}}
SERVED_GROUPS = {gv.split("/")[0] for gv in SERVED if "/" in gv}
DISCOVERY_KINDS = {"APIResourceList", "APIGroupList", "APIGroup", "APIGroupDiscoveryList"}


def served_only(doc: Any) -> Any:
    """A discovery document with only what serve serves (the same document for serve's own)."""
    if not isinstance(doc, dict) or doc.get("kind") not in DISCOVERY_KINDS:
        return doc
    doc = copy.deepcopy(doc)
    kind = doc["kind"]
    if kind == "APIResourceList":
        served = SERVED.get(doc.get("groupVersion"), set())
        doc["resources"] = [r for r in doc.get("resources") or [] if r.get("name", "").split("/")[0] in served]
    elif kind == "APIGroupList":
        doc["groups"] = [_served_group(g) for g in doc.get("groups") or [] if g.get("name") in SERVED_GROUPS]
    elif kind == "APIGroup":
        doc = _served_group(doc) if doc.get("name") in SERVED_GROUPS else doc
    elif kind == "APIGroupDiscoveryList":
        items = []
        for item in doc.get("items") or []:
            group = (item.get("metadata") or {}).get("name", "")
            versions = []
            for v in item.get("versions") or []:
                gv = f"{group}/{v.get('version')}" if group else v.get("version")
                if gv in SERVED:
                    v["resources"] = [r for r in v.get("resources") or [] if r.get("resource") in SERVED[gv]]
                    versions.append(v)
            if versions:
                item["versions"] = versions
                items.append(item)
        doc["items"] = items
    return doc


def _served_group(group: dict) -> dict:
    group = dict(group)
    group["versions"] = [v for v in group.get("versions") or [] if v.get("groupVersion") in SERVED]
    return group


def _is_table(body: Any) -> bool:
    return isinstance(body, dict) and body.get("kind") == "Table"


def _table_descriptions_aside(body: Any) -> Any:
    body = copy.deepcopy(body)
    for column in body.get("columnDefinitions") or []:
        if isinstance(column, dict) and "description" in column:
            column["description"] = "<description>"
    return body


def _unwrap(body: Any) -> tuple[Any, Callable[[Any], Any]]:
    """The document inside a body (a protobuf one's too), and how to put it back."""
    if isinstance(body, dict) and set(body) == {"protobuf"}:
        return body["protobuf"], lambda doc: {"protobuf": doc}
    return body, lambda doc: doc


@dataclass
class Aside:
    key: str
    why: str
    applies: Callable[[Any], bool]  # on the body's document
    put_aside: Callable[[Any], Any]


ASIDES = [
    Aside("table-descriptions",
          "a Table's column descriptions are the API's field documentation, generated from k8s.io/api's Go comments; "
          "ours are in our own words, since the project copies no Go comments (every cell, column name, type and "
          "format is compared)", _is_table, _table_descriptions_aside),
    Aside("discovery-served-only",
          "kube-apiserver serves some 40 core resources and 20 groups, serve configmaps and the reviews: its "
          "discovery documents are compared for what serve serves (SERVED), entry by entry",
          lambda b: isinstance(b, dict) and b.get("kind") in DISCOVERY_KINDS, served_only),
]


def _documents(body: Any) -> tuple[list[tuple[Any, Callable[[Any], None]]], dict]:
    """The documents of a body an aside may apply to, each with how to put it back: the body's own,
    or each watch event's object (a stream of them, or one)."""
    doc, wrap = _unwrap(body)
    holder = {"doc": doc}
    events = doc.get("stream") if isinstance(doc, dict) and set(doc) == {"stream"} else [doc]
    out = []
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict) and "type" in event and isinstance(event.get("object"), dict):
            out.append((event["object"], lambda new, ev=event: ev.__setitem__("object", new)))
    if not out:
        out.append((doc, lambda new: holder.__setitem__("doc", new)))
    holder["wrap"] = wrap
    return out, holder


def set_aside(answer: dict) -> dict:
    """An answer with ASIDES applied; a Table's or discovery document's framing set aside too (it
    follows the document's length: kube's are longer by the descriptions and resources set aside)."""
    answer = copy.deepcopy(answer)
    docs, holder = _documents(answer.get("body"))
    for doc, put in docs:
        for aside in ASIDES:
            if aside.applies(doc):
                doc = aside.put_aside(doc)
                put(doc)
                answer["headers"] = {k: v for k, v in answer.get("headers", {}).items() if k != "transfer-encoding"}
    answer["body"] = holder["wrap"](holder["doc"])
    return answer


def asides_used(kube: dict) -> list[str]:
    """The ASIDES that apply to kube-apiserver's answer (for the counts)."""
    docs, _ = _documents(kube.get("body"))
    return sorted({a.key for doc, _ in docs for a in ASIDES if a.applies(doc)})


# -- 3. rules -----------------------------------------------------------------------------------------

@dataclass
class Exchange:
    method: str
    path: str
    headers: dict
    body: Optional[str]
    kube: dict  # compared form, after LEFT_OUT and ASIDES
    ours: dict
    diverged: bool = False

    @property
    def url(self) -> urllib.parse.SplitResult:
        return urllib.parse.urlsplit(self.path)

    @property
    def query(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(self.url.query, keep_blank_values=True)

    def header(self, name: str) -> str:
        return next((v for k, v in self.headers.items() if k.lower() == name.lower()), "")

    def status(self, side: str) -> int:
        return getattr(self, side)["status"]

    def doc(self, side: str) -> Any:
        """The body's document: JSON's or protobuf's as read, YAML's parsed."""
        doc = _unwrap(getattr(self, side).get("body"))[0]
        if isinstance(doc, str) and getattr(self, side)["headers"].get("content-type", "").startswith("application/yaml"):
            try:
                return yaml.safe_load(doc)
            except yaml.YAMLError:
                return doc
        return doc

    def message(self, side: str) -> str:
        doc = self.doc(side)
        return doc.get("message", "") if isinstance(doc, dict) and isinstance(doc.get("message"), str) else ""

    def json_body(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            return None


def _equal_but(e: Exchange, *header_names: str) -> bool:
    def strip(a: dict) -> dict:
        return {**a, "headers": {k: v for k, v in a["headers"].items() if k not in header_names}}
    return strip(e.kube) == strip(e.ours)


def _body_len(answer: dict) -> int:
    return len(json.dumps(answer.get("body")))


def _unordered(answer: dict) -> dict:
    answer = copy.deepcopy(answer)
    doc, wrap = _unwrap(answer.get("body"))
    if isinstance(doc, dict):
        details = doc.get("details")
        if isinstance(details, dict) and isinstance(details.get("causes"), list):
            details["causes"] = sorted(details["causes"], key=lambda c: json.dumps(c, sort_keys=True))
        if isinstance(doc.get("message"), str):
            doc["message"] = "".join(sorted(doc["message"]))
    answer["body"] = wrap(doc)
    return answer


def _handled_as_another_kind(message: str) -> bool:
    """kube's "K in version V cannot be handled as a ConfigMap: ..." for a K its scheme has that is
    not ConfigMap (a kind it has not, such as "configmap", is answered alike by serve)."""
    m = re.match(r"(\S+) in version \"[^\"]*\" cannot be handled as a (\w+): ", message)
    return m is not None and m.group(1) != m.group(2) and m.group(1) in CORE_V1_KINDS


def _repeats_a_field(body: Optional[str]) -> bool:
    """The body gives one of the object's top-level fields twice."""
    pairs: list = []
    try:
        json.loads(body or "", object_pairs_hook=lambda kv: pairs.append([k for k, _ in kv]) or dict(kv))
    except ValueError:
        return False
    return bool(pairs) and len(pairs[-1]) != len(set(pairs[-1]))


def _same_in_another_order(e: Exchange) -> bool:
    return _unordered(e.kube) == _unordered(e.ours)


def _causes(doc: Any) -> list[dict]:
    details = doc.get("details") if isinstance(doc, dict) else None
    return [c for c in (details or {}).get("causes") or [] if isinstance(c, dict)] if isinstance(details, dict) else []


@dataclass
class Rule:
    """A cause: `match` says an exchange differs for it as a whole; `part` that one part in which the
    answers differ (dotted path, kube's value and ours as JSON text, the exchange) does. An exchange
    whose every differing part some rule's `part` accepts is classified by the first of those rules."""

    key: str
    why: str
    match: Optional[Callable[[Exchange], bool]] = None
    part: Optional[Callable[[str, str, str, Exchange], bool]] = None


RULES: list[Rule] = [
    Rule("go-map-order",
         "Go ranges over a map in random order, so kube-apiserver lists the errors about a map's keys (a data "
         "key, a label) in an order of its own each time: the answers are equal once the causes are sorted and "
         "the message is compared as the same text in another order",
         lambda e: _same_in_another_order(e)),
    Rule("version",
         "/version says what built the server: Go's toolchain and kube's commit there, CPython and genericserver's "
         "version here",
         lambda e: e.url.path.rstrip("/") == "/version" and e.status("kube") == e.status("ours") == 200),
    Rule("openapi",
         "the OpenAPI documents describe what each server serves, so a document's hash in its URL is kube's (ours "
         "redirects it to our hash, as handler3 does on a stale hash); and kube-apiserver's /openapi/v3 root is "
         "kube-aggregator's (openapiv3/aggregator.go:258, http.ServeContent with no Content-Type: sniffed as "
         "text/plain), where the generic apiserver's, which serve is, is kube-openapi's handler3 "
         "(handler3/handler.go:219 sets application/json)",
         lambda e: e.url.path.startswith("/openapi/")),
    Rule("discovery-etag",
         "kube's discovery documents list resources serve does not serve, so their ETags differ: a client that "
         "sends kube's ETag back (If-None-Match) gets 304 there, the document here",
         lambda e: e.header("If-None-Match") != "" and e.status("kube") == 304 and e.status("ours") == 200),
    Rule("framing",
         "both servers frame as net/http does (a length when the handler's whole body fit the 2048-byte response "
         "buffer, chunked past it), and kube's body was the longer one by what is left out or set aside (its "
         "managedFields): the answers are equal but for Transfer-Encoding",
         lambda e: _equal_but(e, "transfer-encoding") and e.kube["headers"].get("transfer-encoding") == "chunked"),
    Rule("managed-fields-in-text",
         "a Status message that prints the object (a patch whose result does not decode) shows kube-apiserver's "
         "managedFields inside its text, where LEFT_OUT cannot reach, and the object's uid, resourceVersion and "
         "times as they are in its causes",
         lambda e: "managedFields" in json.dumps(e.kube.get("body")) and e.status("kube") == e.status("ours")),
    Rule("server-side-apply",
         "server-side apply is not built (walkthrough 9.1): an apply patch gets 415 here",
         lambda e: e.method == "PATCH" and e.header("Content-Type").startswith("application/apply-patch")
         and e.status("ours") == 415),
    Rule("kube-apiserver-only",
         "kube-apiserver, not the generic apiserver: it turns anonymous authentication off under "
         "--authorization-mode=AlwaysAllow (BuiltInAuthenticationOptions), and its NamespaceLifecycle admission "
         "(a k8s.io/apiserver admission plugin; admission is not built here) refuses a write to a namespace that "
         "does not exist, or is being deleted; serve has neither",
         lambda e: (not e.header("Authorization") and e.status("kube") == 401)
         or (isinstance(e.doc("kube"), dict) and (e.doc("kube").get("details") or {}).get("kind") == "namespaces")
         or (e.status("kube") == 403 and "because it is being terminated" in e.message("kube"))),
    Rule("not-served",
         "kube-apiserver serves namespaces (and some 40 other resources); serve configmaps and the reviews only: a "
         "request for a namespace object is kube's to answer",
         lambda e: re.fullmatch(r"/api/v1/namespaces/[^/]+/?", e.url.path) is not None),
    # -- families of kube-apiserver's behaviour not ported yet (issue 55); each says whose part it is
    Rule("decoding",
         "decoding: kube's decoder refuses a body serve's reads (a protobuf DeleteOptions; a field given twice "
         "whose first value has the wrong type, which serve's merge "
         "hides), reads one serve's refuses (a YAML DeleteOptions), or decodes a body of another kind as that kind, "
         "which kube's scheme has and serve's has not (a Secret, a Status; a kind in lower case is none in either, "
         "and kube says so where serve says it cannot convert it)",
         lambda e: (e.status("kube") == 400 and (
             "does not appear to be a protobuf message" in e.message("kube")
             or _handled_as_another_kind(e.message("kube"))
             or ("json: cannot unmarshal" in e.message("kube") and _repeats_a_field(e.body))))
         or (e.method == "DELETE" and e.header("Content-Type").startswith("application/yaml") and e.status("ours") == 400
             and "json parse error" in e.message("ours"))),
    Rule("decoding-patched-kind",
         "decoding: a patch that changes the object's kind (to Secret, say) is decoded by kube-apiserver as the "
         "kind the patched object names, and refused with 422 on the \"patch\" field when it does not decode as "
         "that (a Secret's data must be base64); serve keeps decoding a ConfigMap",
         lambda e: e.method == "PATCH" and e.status("kube") == 422 and bool(re.search(r'"kind"\s*:\s*"(?!ConfigMap")|"/kind"', e.body or ""))
         and any(c.get("field") == "patch" for c in _causes(e.doc("kube")))),
    Rule("list-options-order",
         "lists: kube-apiserver converts the list options in its own order (timeoutSeconds, resourceVersion before "
         "the selectors) and answers the first error; serve another; and it refuses an unparsable resourceVersion "
         "on a deletecollection, which serve ignores",
         lambda e: e.url.path.endswith("/configmaps") and e.status("kube") == 400
         and bool(re.search(r"strconv\.Parse|invalid resource version", e.message("kube")))),
    Rule("negotiation-discovery-methods",
         "negotiation: kube-apiserver's discovery handlers (/api, /apis, a group's) answer any method as a GET; "
         "serve's routes answer 405",
         lambda e: e.method != "GET" and (e.url.path.rstrip("/") in ("/api", "/apis")
                                          or re.fullmatch(r"/apis/[^/]+/?", e.url.path) is not None)),
    Rule("root-paths",
         "negotiation: kube-apiserver answers / (any method) with the list of its paths, those of its 40 "
         "resources and 20 groups among them; serve with 404",
         lambda e: e.url.path == "/"),
    # -- by design
    Rule("health-checks",
         "kube-apiserver's /readyz, /livez and /healthz list its own checks and post-start hooks (etcd, the "
         "informers, its controllers), a superset of serve's",
         lambda e: e.url.path.startswith(("/readyz", "/livez", "/healthz")) and e.status("kube") == e.status("ours") == 200
         and set(str(e.doc("ours")).splitlines()[:-1]) <= set(str(e.doc("kube")).splitlines())),
    Rule("state-diverged",
         "an earlier exchange of the same sequence on this object (or namespace, for a collection) differed, by one "
         "of the causes above or below, so the servers hold different objects and answer from them",
         lambda e: e.diverged),
]


def classify(e: Exchange) -> Optional[str]:
    """The key of the first rule that matches a differing exchange, or None."""
    whole = next((r.key for r in RULES if r.match is not None and r.match(e)), None)
    if whole is not None:
        return whole
    from parity.generated import differences

    def parsed(side: str) -> dict:  # a YAML body as its document, so that its parts can be told apart
        answer, doc = getattr(e, side), e.doc(side)
        return {**answer, "body": doc} if isinstance(answer.get("body"), str) and isinstance(doc, (dict, list)) else answer

    parts = [r for r in RULES if r.part is not None]
    found = differences(parsed("kube"), parsed("ours"))
    explained = [next((r.key for r in parts if r.part(*d, e)), None) for d in found]
    if not found or None in explained:
        return None
    return next(r.key for r in parts if r.key in explained)


def compare(kube_recorded: dict, ours_recorded: dict) -> tuple[dict, dict]:
    """Both answers in the form compared (LEFT_OUT on kube's, ASIDES on both)."""
    return set_aside(kube_answer(kube_recorded)), set_aside(api.compared(ours_recorded))


def keeps_object(method: str, path: str, body: Optional[str], kube_status: int) -> bool:
    """A delete kube-apiserver answers as serve does but whose objects it keeps (graceful-deletion):
    propagationPolicy Foreground or Orphan, or orphanDependents, puts a finalizer on each object
    (foregroundDeletion, orphan) that only the garbage collector would take off. What a sequence
    reads of them afterwards is `state-diverged`."""
    if method != "DELETE" or not 200 <= kube_status < 300:
        return False
    text = urllib.parse.unquote(path) + (body or "")
    return bool(re.search(r"propagationPolicy\W+(Foreground|Orphan)|orphanDependents\W+true", text))


def object_of(method: str, path: str) -> str:
    """What an exchange touches, for `diverged`: `ns/name` for an object, `ns/` for a collection
    (which also sees every object of the namespace), `*` for every namespace's configmaps, '' for
    anything else. A watch's path is its object's or collection's."""
    if re.match(r"^/api/v1/(watch/)?configmaps(?:[/?]|$)", path):
        return "*"
    m = re.match(r"^/api/v1/(?:watch/)?namespaces/([^/]+)/configmaps(?:/([^/?]+))?", path)
    if not m:
        whole = re.match(r"^/api/v1/namespaces/([^/?]+)/?(?:\?|$)", path)  # the namespace itself: all it holds
        return f"{whole.group(1)}/" if whole else ""
    return f"{m.group(1)}/{m.group(2) or ''}"


class Sequence:
    """Tracks which objects of a sequence have diverged, exchange after exchange."""

    def __init__(self) -> None:
        self.touched: set[str] = set()

    def diverged(self, method: str, path: str) -> bool:
        target = object_of(method, path)
        if not target:
            return False
        if target == "*":  # a list of every namespace sees every object
            return bool(self.touched)
        ns = target.split("/")[0] + "/"
        if target == ns:  # a collection sees every object of its namespace
            return any(t.startswith(ns) for t in self.touched)
        return target in self.touched or ns in self.touched

    def differed(self, method: str, path: str) -> None:
        target = object_of(method, path)
        if target and method not in ("GET", "HEAD", "OPTIONS"):
            self.touched.add(target)


def walkthrough_rows() -> dict[str, list[str]]:
    """Walkthrough 10.2's table: cause (`rule`, or `aside:key` for a row "set aside: `key`") ->
    [its count in the API corpus, in the generated corpus] as written there."""
    text = (api.ROOT / "walkthrough.md").read_text()
    table = text.split("### 10.2 Where we differ from kube-apiserver, measured", 1)[1].split("\n### ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) == 4 and cells[0].startswith(("`", "set aside: `")):
            key = cells[0].split("`")[1]
            rows[("aside:" if cells[0].startswith("set aside") else "") + key] = cells[1:3]
    return rows
