"""The grammar of requests the API takes, for the differential fuzzer and the generated corpus.

A *sequence* is what one drawn example sends: a few requests (create first, mostly) to the
configmaps of one fresh namespace, so that the rules that depend on the stored object (immutable,
preconditions, finalizers, a patch of what is there) show. Each request is a template: the
namespace is `{ns}`, and `{rv:NAME}` / `{uid:NAME}` stand for the resourceVersion and uid the
server last answered for object NAME, resolved per server (`resolve`), as a client that read the
object would send them.

The grammar is written against a drawer (`Drawer`): `pick` one of a list (the simplest first, so
that Hypothesis shrinks towards it), `flag` with a weight, `count`. `HypothesisDrawer` draws from
Hypothesis's data (the fuzzer: shrinkable), `RandomDrawer` from a seeded `random.Random` (the
recorded corpus: the same seed, the same requests). Nothing here is a list of cases: each part of
a request (method, path, Accept list with its parameters and weights, Content-Type, each query
option of List/Get/Delete/Create/PatchOptions, the body built from ConfigMap's schema then
mutated, the four patch types' patches) is drawn on its own.
"""

from __future__ import annotations

import json
import random
import re
import urllib.parse
from typing import Any, Callable, Optional, Sequence

TOKEN = "reference-admin-token"
NAMES = ["a", "a", "a", "b"]  # the objects a sequence works on: few (mostly one), so that the requests meet
JSON_T = "application/json"
YAML_T = "application/yaml"
PROTOBUF_T = "application/vnd.kubernetes.protobuf"
MERGE_T = "application/merge-patch+json"
STRATEGIC_T = "application/strategic-merge-patch+json"
JSONPATCH_T = "application/json-patch+json"
APPLY_T = "application/apply-patch+yaml"


class Drawer:
    def pick(self, options: Sequence[Any]) -> Any:
        raise NotImplementedError

    def flag(self, p: float = 0.5) -> bool:
        raise NotImplementedError

    def count(self, lo: int, hi: int) -> int:
        raise NotImplementedError

    def repeat(self, lo: int, hi: int, make: Callable[["Drawer"], Any]) -> list:
        """Between lo and hi things, each made by `make`."""
        return [make(self) for _ in range(self.count(lo, hi))]


class RandomDrawer(Drawer):
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.r.randrange(len(options))]

    def flag(self, p: float = 0.5) -> bool:
        return self.r.random() < p

    def count(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)


class HypothesisDrawer(Drawer):
    """Draws from Hypothesis: `draw` is a DataObject's, or a composite strategy's."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def pick(self, options: Sequence[Any]) -> Any:
        return self.draw(self.st.sampled_from(list(options)))

    def flag(self, p: float = 0.5) -> bool:
        # false shrinks first: "the mutation is not there"
        return self.draw(self.st.integers(0, 99)) >= round(100 * (1 - p))

    def count(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))

    def repeat(self, lo: int, hi: int, make: Callable[[Drawer], Any]) -> list:
        # a Hypothesis list, which the shrinker shortens by taking out any of its elements
        one = self.st.composite(lambda draw: make(HypothesisDrawer(draw)))()
        return self.draw(self.st.lists(one, min_size=lo, max_size=hi))


# -- the parts of a request ---------------------------------------------------------------------------

def name(d: Drawer) -> str:
    """An object name: one of the sequence's, or one the name rules refuse."""
    if d.flag(0.9):
        return d.pick(NAMES)
    return d.pick(["Bad_Name", "-a", "a.", "x" * 254, "a" * 253, "a..b", "UPPER", "a%2Fb", "..", "a:b"])


def label_key(d: Drawer) -> str:
    if d.flag(0.8):
        return d.pick(["app", "example.com/tier", "x"])
    return d.pick(["-bad", "a b", "a/b/c", "", "example.com/", "/x", "k" * 64, ("p" * 254) + "/x", "Ex.com/a"])


def label_value(d: Drawer) -> str:
    if d.flag(0.8):
        return d.pick(["web", "", "db", "v1.2_3"])
    return d.pick(["has space", "v" * 64, "-lead", "trail-", "a/b", "é"])


def annotation_key(d: Drawer) -> str:
    if d.flag(0.8):
        return d.pick(["note", "example.com/note"])
    return d.pick(["-note", "a b", "", "a/b/c", "k" * 64])


def data_key(d: Drawer) -> str:
    if d.flag(0.85):
        return d.pick(["a", "b", "c.d", "_e", "-f"])
    return d.pick(["..", ".", "a b", "a/b", "k" * 254, "", "..a"])


def data_value(d: Drawer) -> Any:
    if d.flag(0.9):
        return d.pick(["1", "", "two words", "x" * 100])
    return d.pick([1, None, True, ["l"], {"o": 1}])


def owner_reference(d: Drawer) -> dict:
    ref: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                           "uid": "1e0bb7b4-8d56-4e4b-9b36-2c0f8b0a8e8d"}
    for key in ("apiVersion", "kind", "name", "uid"):
        if d.flag(0.1):
            del ref[key]
    if d.flag(0.2):
        ref["controller"] = True
    if d.flag(0.1):
        ref["blockOwnerDeletion"] = True
    if d.flag(0.1):
        ref["apiVersion"] = d.pick(["v1/x/y", "", "bad version"])
    return ref


def finalizer(d: Drawer) -> str:
    return d.pick(["example.com/keep", "kubernetes", "orphan", "foregroundDeletion", "bad finalizer", "no-slash",
                   "example.com/" + "f" * 70])


class Body:
    """A JSON object as a list of (key, value) pairs, so that a key can appear twice."""

    def __init__(self, pairs: Optional[list[tuple[str, Any]]] = None) -> None:
        self.pairs = pairs or []

    def text(self) -> str:
        def dump(v: Any) -> str:
            return v.text() if isinstance(v, Body) else json.dumps(v)
        return "{" + ",".join(f"{json.dumps(k)}:{dump(v)}" for k, v in self.pairs) + "}"

    def plain(self) -> Any:
        return {k: (v.plain() if isinstance(v, Body) else v) for k, v in self.pairs}


def metadata(d: Drawer, object_name: Optional[str], update: bool, target: Optional[str] = None) -> Body:
    """An object's metadata; `target` is the object a precondition is about (the name's, unless the
    name is left out)."""
    target = target or object_name or "a"
    meta = Body()
    if object_name is not None:
        meta.pairs.append(("name", object_name))
    if d.flag(0.08):
        meta.pairs.append(("generateName", d.pick(["gen-", "Bad_", "g" * 300])))
    if d.flag(0.08):
        meta.pairs.append(("namespace", d.pick(["{ns}", "other"])))
    if d.flag(0.3):
        meta.pairs.append(("labels", {label_key(d): label_value(d) for _ in range(d.count(1, 2))}))
    if d.flag(0.2):
        meta.pairs.append(("annotations", {annotation_key(d): d.pick(["v", "", "x" * 50]) for _ in range(d.count(1, 2))}))
    if d.flag(0.12):
        meta.pairs.append(("finalizers", [finalizer(d) for _ in range(d.count(1, 2))]))
    if d.flag(0.1):
        refs = [owner_reference(d) for _ in range(d.count(1, 2))]
        meta.pairs.append(("ownerReferences", refs))
    if d.flag(0.25 if update else 0.05):
        meta.pairs.append(("resourceVersion", d.pick([f"{{rv:{target}}}", "1", "abc", "", "99999999", "0"])))
    if d.flag(0.15 if update else 0.05):
        meta.pairs.append(("uid", d.pick([f"{{uid:{target}}}", "00000000-0000-0000-0000-000000000000", "not-a-uid"])))
    if d.flag(0.04):
        meta.pairs.append(("creationTimestamp", d.pick(["2020-01-01T00:00:00Z", "yesterday"])))
    if d.flag(0.04):
        meta.pairs.append(("deletionGracePeriodSeconds", d.pick([30, -1])))
    if d.flag(0.04):
        meta.pairs.append(("unknownMeta", 1))
    if d.flag(0.03) and meta.pairs:
        meta.pairs.append(meta.pairs[0])  # a duplicate field
    return meta


def configmap(d: Drawer, object_name: Optional[str], update: bool = False) -> Body:
    """A ConfigMap built from its schema (apiVersion, kind, metadata, data, binaryData, immutable),
    then mutated."""
    body = Body()
    if d.flag(0.92):
        body.pairs.append(("apiVersion", "v1") if d.flag(0.9) else ("apiVersion", d.pick(["v2", "apps/v1", "", "v1beta1"])))
    if d.flag(0.92):
        body.pairs.append(("kind", "ConfigMap") if d.flag(0.9) else ("kind", d.pick(["Secret", "configmap", "", "Status"])))
    body.pairs.append(("metadata", metadata(d, object_name if d.flag(0.95) else None, update, target=object_name)))
    if d.flag(0.8):
        body.pairs.append(("data", {data_key(d): data_value(d) for _ in range(d.count(0, 3))} if d.flag(0.95) else
                           d.pick(["x", 3, None])))
    if d.flag(0.12):
        body.pairs.append(("binaryData", {data_key(d): d.pick(["MQ==", "not base64!", ""]) for _ in range(d.count(1, 2))}))
    if d.flag(0.15):
        body.pairs.append(("immutable", d.pick([True, False, "yes", None])))
    if d.flag(0.04):
        body.pairs.append(("spec", {}))  # an unknown field
    if d.flag(0.04):
        body.pairs.append(("data", {"dup": "1"}))  # a duplicate field (after data or alone)
    return body


def body_text(d: Drawer, body: Body, content_type: str) -> str:
    if content_type.startswith(YAML_T) or content_type == APPLY_T:
        return to_yaml(body.plain())
    return body.text()


def to_yaml(doc: Any, indent: int = 0) -> str:
    """A small YAML writer (flow values as JSON, which YAML reads), enough for bodies."""
    pad = " " * indent
    if isinstance(doc, dict) and doc:
        lines = []
        for k, v in doc.items():
            if isinstance(v, dict) and v:
                lines.append(f"{pad}{json.dumps(k)}:\n{to_yaml(v, indent + 2)}")
            else:
                lines.append(f"{pad}{json.dumps(k)}: {json.dumps(v)}")
        return "\n".join(lines) + ("\n" if indent == 0 else "")
    return pad + json.dumps(doc) + "\n"


def media_range(d: Drawer) -> str:
    base = d.pick([JSON_T, YAML_T, "*/*", PROTOBUF_T, "application/*", "text/html", "text/plain",
                   "application/json;as=Table;v=v1;g=meta.k8s.io", "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
                   "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
                   "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
                   "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
                   "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
                   "application/json;as=Nonsense;v=v1;g=meta.k8s.io", "application/json;sv=v1", "nonsense",
                   "application/json;stream=watch", "application/json;pretty=1", "application/json; charset=utf-8"])
    if d.flag(0.25):
        base += ";q=" + d.pick(["0.5", "0", "1", "0.1", "x"])
    return base


def accept(d: Drawer) -> Optional[str]:
    if d.flag(0.15):
        return None
    if d.flag(0.6):
        return JSON_T
    return ", ".join(media_range(d) for _ in range(d.count(1, 3)))


def body_content_type(d: Drawer) -> str:
    if d.flag(0.85):
        return JSON_T
    return d.pick([YAML_T, "application/json;charset=utf-8", "text/plain", "", PROTOBUF_T, "application/x-www-form-urlencoded"])


def query(d: Drawer, options: list[tuple[str, list[str]]]) -> list[tuple[str, str]]:
    """Some of the options the verb reads, each with a drawn value."""
    out = []
    for key, values in options:
        if d.flag(0.12):
            out.append((key, d.pick(values)))
    if d.flag(0.03):
        out.append(("nonsense", "1"))
    return out


WRITE_OPTIONS = [("dryRun", ["All", "Sometimes", ""]), ("fieldValidation", ["Strict", "Warn", "Ignore", "Loud", "strict"]),
                 ("fieldManager", ["me", "m" * 129, "bad\u0001"]), ("pretty", ["true", "x"])]
LIST_OPTIONS = [("labelSelector", ["app=web", "app in (web,db)", "app in", "!app", "app!=web", "example.com/tier"]),
                ("fieldSelector", ["metadata.name=a", "metadata.namespace={ns}", "spec.x=1", "==", "metadata.name!=b"]),
                ("limit", ["1", "2", "0", "-1", "x"]), ("continue", ["garbage", ""]),
                ("resourceVersion", ["0", "1", "abc", ""]), ("resourceVersionMatch", ["NotOlderThan", "Exact", "Sometimes"]),
                ("timeoutSeconds", ["1", "abc"]), ("allowWatchBookmarks", ["true"]), ("sendInitialEvents", ["true", "false"]),
                ("includeObject", ["None", "Object", "Metadata", "Bad"]), ("pretty", ["true"])]
GET_OPTIONS = [("resourceVersion", ["0", "1", "abc", ""]), ("includeObject", ["None", "Object", "Metadata"]),
               ("export", ["true"]), ("pretty", ["true"])]
DELETE_OPTIONS = [("gracePeriodSeconds", ["0", "30", "-1", "x"]), ("propagationPolicy", ["Foreground", "Orphan", "Background", "Bad"]),
                  ("orphanDependents", ["true", "false"]), ("dryRun", ["All", "Bad"])]


def path_with(base: str, q: list[tuple[str, str]]) -> str:
    return base + ("?" + urllib.parse.urlencode(q, safe="{}") if q else "")


COLLECTION = "/api/v1/namespaces/{ns}/configmaps"


def request(method: str, path: str, accept_: Optional[str], body: Optional[str] = None,
            content_type: Optional[str] = None) -> dict:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    if accept_ is not None:
        headers["Accept"] = accept_
    if content_type is not None:
        headers["Content-Type"] = content_type
    return {"method": method, "path": path, "headers": headers, "body": body}


def create(d: Drawer) -> dict:
    ct = body_content_type(d)
    path = path_with(COLLECTION, query(d, WRITE_OPTIONS))
    return request("POST", path, accept(d), body_text(d, configmap(d, name(d)), ct), ct)


def get(d: Drawer) -> dict:
    return request("GET", path_with(f"{COLLECTION}/{name(d)}", query(d, GET_OPTIONS)), accept(d))


def list_(d: Drawer) -> dict:
    base = COLLECTION if d.flag(0.9) else "/api/v1/configmaps"
    q = query(d, LIST_OPTIONS)
    if base == "/api/v1/configmaps":  # only this sequence's namespace (kube-system has kube's own), and the drawn selector
        drawn = [v for k, v in q if k == "fieldSelector"]
        q = [(k, v) for k, v in q if k != "fieldSelector"]
        q.append(("fieldSelector", ",".join(["metadata.namespace={ns}", *drawn])))
    return request("GET", path_with(base, q), accept(d))


def update(d: Drawer) -> dict:
    ct = body_content_type(d)
    target = name(d)
    body = configmap(d, target if d.flag(0.9) else d.pick(NAMES), update=True)
    return request("PUT", path_with(f"{COLLECTION}/{target}", query(d, WRITE_OPTIONS)), accept(d), body_text(d, body, ct), ct)


def json_patch(d: Drawer, target: str) -> str:
    ops = []
    for _ in range(d.count(1, 3)):
        op = d.pick(["add", "remove", "replace", "test", "copy", "move", "frob"])
        where = d.pick(["/data/" + data_key(d), "/metadata/labels/app", "/immutable", "/metadata/finalizers",
                        "data/a", "/data", "/metadata/name", "/metadata/resourceVersion", "/kind", ""])
        entry: dict[str, Any] = {"op": op, "path": where}
        if op in ("add", "replace", "test"):
            entry["value"] = d.pick(["1", {"a": "1"}, None, True, ["example.com/keep"], f"{{rv:{target}}}"])
        if op in ("copy", "move"):
            entry["from"] = d.pick(["/data/a", "/data/missing", "data/a"])
        ops.append(entry)
    return json.dumps(ops if d.flag(0.95) else ops[0])


def merge_patch(d: Drawer, target: str, strategic: bool) -> str:
    patch: dict[str, Any] = {}
    if d.flag(0.7):
        patch["data"] = {data_key(d): d.pick(["2", None, ""]) for _ in range(d.count(1, 2))} if d.flag(0.9) else d.pick(["x", None])
    if d.flag(0.2):
        patch["metadata"] = metadata(d, None, update=True, target=target).plain()
    if d.flag(0.15):
        patch["immutable"] = d.pick([True, False, None])
    if d.flag(0.1):
        patch["binaryData"] = {"bin": d.pick(["MQ==", "!!", None])}
    if strategic and d.flag(0.2):
        patch["$patch"] = d.pick(["replace", "delete", "frob"])
    if strategic and d.flag(0.1):
        patch.setdefault("metadata", {})["$retainKeys"] = ["labels"]
    if d.flag(0.05):
        patch["kind"] = d.pick(["Secret", "ConfigMap"])
    if d.flag(0.03):
        return d.pick(["null", "[]", "3", "{not json"])
    return json.dumps(patch)


def patch(d: Drawer) -> dict:
    target = name(d)
    kind = d.pick([MERGE_T, STRATEGIC_T, JSONPATCH_T, APPLY_T, JSON_T, "text/plain"])
    q = query(d, WRITE_OPTIONS + [("force", ["true", "false"])])
    if kind == APPLY_T:
        if d.flag(0.8):
            q = [(k, v) for k, v in q if k != "fieldManager"] + [("fieldManager", "fuzz")]
        body = to_yaml(configmap(d, target).plain())
    elif kind == JSONPATCH_T:
        body = json_patch(d, target)
    else:
        body = merge_patch(d, target, strategic=kind == STRATEGIC_T)
    return request("PATCH", path_with(f"{COLLECTION}/{target}", q), accept(d), body, kind)


def delete_options(d: Drawer, target: str) -> dict:
    opts: dict[str, Any] = {}
    if d.flag(0.8):
        opts["kind"], opts["apiVersion"] = "DeleteOptions", d.pick(["v1", "meta.k8s.io/v1", "v2"])
    if d.flag(0.4):
        opts["preconditions"] = {}
        if d.flag(0.7):
            opts["preconditions"]["uid"] = d.pick([f"{{uid:{target}}}", "00000000-0000-0000-0000-000000000000"])
        if d.flag(0.5):
            opts["preconditions"]["resourceVersion"] = d.pick([f"{{rv:{target}}}", "1", "abc"])
    if d.flag(0.3):
        opts["propagationPolicy"] = d.pick(["Foreground", "Orphan", "Background", "Bad"])
    if d.flag(0.2):
        opts["gracePeriodSeconds"] = d.pick([0, 30, -1])
    if d.flag(0.1):
        opts["orphanDependents"] = d.pick([True, False])
    if d.flag(0.1):
        opts["dryRun"] = d.pick([["All"], ["Bad"]])
    return opts


def delete(d: Drawer) -> dict:
    target = name(d)
    q = query(d, DELETE_OPTIONS)
    body = ct = None
    if d.flag(0.5):
        ct = body_content_type(d)
        opts = delete_options(d, target)
        body = to_yaml(opts) if ct.startswith(YAML_T) else json.dumps(opts)
    return request("DELETE", path_with(f"{COLLECTION}/{target}", q), accept(d), body, ct)


def delete_collection(d: Drawer) -> dict:
    q = query(d, LIST_OPTIONS + DELETE_OPTIONS)
    return request("DELETE", path_with(COLLECTION, q), accept(d))


def odd(d: Drawer) -> dict:
    """A verb or path off the usual ones."""
    method = d.pick(["GET", "OPTIONS", "HEAD", "POST", "PUT", "PATCH", "DELETE", "TRACE", "PROPFIND"])
    path = d.pick([COLLECTION + "/", COLLECTION + "/a/status", COLLECTION + "/a/b/c", "/api/v1/namespaces/{ns}/configmapz",
                   "/api/v2/namespaces/{ns}/configmaps", "/apis/v1/namespaces/{ns}/configmaps", "/api/v1/namespaces/{ns}",
                   "/api/v1/namespaces/{ns}/configmaps/a%2Fb", "/api/v1/namespaces/{ns}/../{ns}/configmaps",
                   "/api/v1/namespaces/{ns}/CONFIGMAPS", "/api/v1/watch/namespaces/{ns}/configmaps/a?timeoutSeconds=1",
                   "/", "/api", "/apis", "/api/v1", "/apis/authentication.k8s.io/v1", "/apis/authorization.k8s.io/v1",
                   "/apis/authentication.k8s.io", "/version", "/healthz", "/readyz?verbose=1", "/livez/ping", "/metricz",
                   "/openapi/v2x"])
    body = ct = None
    if method in ("POST", "PUT", "PATCH") and d.flag(0.7):
        ct = d.pick([JSON_T, MERGE_T])
        body = configmap(d, "a").text()
    return request(method, path, accept(d), body, ct)


VERBS: list[tuple[str, Callable[[Drawer], dict]]] = [
    ("get", get), ("create", create), ("update", update), ("patch", patch), ("delete", delete), ("list", list_),
    ("deletecollection", delete_collection), ("odd", odd)]


def sequence(d: Drawer) -> list[dict]:
    """One example: a create first (mostly), then up to five more requests."""
    steps = [create(d)] if d.flag(0.85) else []
    return steps + d.repeat(0 if steps else 1, 5, lambda d: d.pick(VERBS)[1](d))


# -- sending a template to one server -----------------------------------------------------------------

PLACEHOLDER = re.compile(r"\{(rv|uid):([^}]*)\}")


class State:
    """What one server last answered for each object of the sequence: its resourceVersion and uid."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, str], str] = {}

    def resolve(self, text: Optional[str], ns: str) -> Optional[str]:
        if text is None:
            return None
        text = text.replace("{ns}", ns)
        return PLACEHOLDER.sub(lambda m: self.seen.get((m.group(1), m.group(2)), "0" if m.group(1) == "rv" else
                                                       "11111111-1111-1111-1111-111111111111"), text)

    def learn(self, raw_body: bytes) -> None:
        try:
            doc = json.loads(raw_body)
        except ValueError:
            return
        meta = doc.get("metadata") if isinstance(doc, dict) else None
        if isinstance(meta, dict) and doc.get("kind") == "ConfigMap" and isinstance(meta.get("name"), str):
            for key, field in (("rv", "resourceVersion"), ("uid", "uid")):
                if meta.get(field):
                    self.seen[(key, meta["name"])] = meta[field]


def resolved(template: dict, state: State, ns: str) -> dict:
    return {**template, "path": state.resolve(template["path"], ns), "body": state.resolve(template["body"], ns)}
