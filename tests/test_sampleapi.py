"""Tests of genericserver.sampleapi: the configmap REST shapes, the watch stream and how it ends, /echo, /slow."""

from __future__ import annotations

import io
import json
import re
from typing import Any, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import MultiDict
from werkzeug.test import Client, EnvironBuilder

from genericserver import request
from genericserver import runtime as rt
from genericserver import sampleapi
from genericserver.context import context as gocontext
from genericserver.endpoints.handlers import get as get_handler
from genericserver.endpoints.handlers.rest import RequestScope
from genericserver.mux import PathRecorderMux
from genericserver.net.http import request as httprequest
from genericserver.sampleapi import Store
from genericserver.testing.sim import Simulation
from genericserver.endpoints.filters.warning import with_warning_recorder  # the chain's: warnings as headers

WAIT = 10.0
NS = "/api/v1/namespaces/ns/configmaps"


def uids():
    n = iter(range(1, 10_000))
    return lambda: f"uid-{next(n)}"


def setup(**kwargs) -> tuple[PathRecorderMux, Store, Client]:
    mux = PathRecorderMux("test")
    store = sampleapi.install(mux, Store(new_uid=uids(), history=kwargs.pop("history", 1000)), **kwargs)
    return mux, store, Client(with_warning_recorder(mux))


def cm(name: str = "", data: Optional[dict] = None, **meta: Any) -> dict:
    if name:
        meta["name"] = name
    body: dict = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data is not None:
        body["data"] = data
    return body


def status_bytes(code: int, reason: str, message: str, details: Optional[dict] = None) -> bytes:
    st: dict = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason}
    if details is not None:
        st["details"] = details
    st["code"] = code
    return (json.dumps(st, separators=(",", ":")) + "\n").encode()


TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\Z")


# -- REST ----------------------------------------------------------------------------------------


def test_install_lists_the_paths():
    mux, _, _ = setup()
    # Go's root listing: the discovery web services, not each resource path
    assert mux.listed_paths() == ["/api", "/api/v1", "/apis", "/apis/authentication.k8s.io",
                                  "/apis/authentication.k8s.io/v1", "/echo", "/openapi/v2", "/openapi/v3", "/slow"]


def test_create_answers_201_with_the_stored_object_in_gos_field_order():
    _, _, c = setup()
    r = c.post(NS, json=cm("a", {"k": "v"}, labels={"app": "x"}))
    assert r.status_code == 201
    assert r.headers["Content-Type"] == "application/json"
    assert r.data.endswith(b"}\n")
    obj = json.loads(r.data)
    assert list(obj) == ["kind", "apiVersion", "metadata", "data"]
    assert list(obj["metadata"]) == ["name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels"]
    assert TIMESTAMP.match(obj["metadata"].pop("creationTimestamp"))
    assert obj == {"kind": "ConfigMap", "apiVersion": "v1", "data": {"k": "v"},
                   "metadata": {"name": "a", "namespace": "ns", "uid": "uid-1", "resourceVersion": "2", "labels": {"app": "x"}}}


def test_a_duplicate_create_is_already_exists():
    _, _, c = setup()
    assert c.post(NS, json=cm("a")).status_code == 201
    r = c.post(NS, json=cm("a"))
    assert r.status_code == 409
    assert r.data == status_bytes(409, "AlreadyExists", 'configmaps "a" already exists', {"name": "a", "kind": "configmaps"})


def test_get_of_a_missing_object_is_not_found():
    _, _, c = setup()
    r = c.get(NS + "/x")
    assert r.status_code == 404
    # Go's ErrorNegotiated writes no X-Content-Type-Options (only http.Error and RespondWithError do)
    assert "X-Content-Type-Options" not in r.headers
    assert r.data == status_bytes(404, "NotFound", 'configmaps "x" not found', {"name": "x", "kind": "configmaps"})


def test_get_and_list():
    _, _, c = setup()
    for ns, name in [("ns", "b"), ("ns", "a"), ("other", "c")]:
        assert c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm(name, {"n": name})).status_code == 201
    assert json.loads(c.get(NS + "/a").data)["data"] == {"n": "a"}
    lst = json.loads(c.get(NS).data)
    assert list(lst) == ["kind", "apiVersion", "metadata", "items"]
    assert (lst["kind"], lst["apiVersion"], lst["metadata"]) == ("ConfigMapList", "v1", {"resourceVersion": "4"})
    assert [i["metadata"]["name"] for i in lst["items"]] == ["a", "b"]
    assert all("kind" not in i and "apiVersion" not in i for i in lst["items"])
    everywhere = json.loads(c.get("/api/v1/configmaps").data)
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in everywhere["items"]] == [("ns", "a"), ("ns", "b"), ("other", "c")]
    assert json.loads(c.get(NS + "?watch=false").data)["kind"] == "ConfigMapList"


def test_update_keeps_what_the_server_owns_and_bumps_the_version():
    _, _, c = setup()
    created = json.loads(c.post(NS, json=cm("a", {"k": "1"})).data)
    r = c.put(NS + "/a", json=cm("a", {"k": "2"}, creationTimestamp="2001-01-01T00:00:00Z", resourceVersion="2"))
    assert r.status_code == 200
    updated = json.loads(r.data)
    assert updated["data"] == {"k": "2"}
    assert updated["metadata"]["uid"] == created["metadata"]["uid"] == "uid-1"
    assert updated["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]
    assert updated["metadata"]["resourceVersion"] == "3"
    # without a resource version the update is unconditional
    assert json.loads(c.put(NS + "/a", json=cm("a")).data)["metadata"]["resourceVersion"] == "4"


def test_a_stale_update_is_a_conflict():
    _, _, c = setup()
    c.post(NS, json=cm("a"))
    c.put(NS + "/a", json=cm("a", {"k": "2"}))
    r = c.put(NS + "/a", json=cm("a", {"k": "3"}, resourceVersion="2"))
    assert r.status_code == 409
    assert r.data == status_bytes(
        409, "Conflict",
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
        {"name": "a", "kind": "configmaps"},
    )


@pytest.mark.parametrize(
    "path,body,code,message",
    [
        (NS + "/zzz", cm("zzz"), 404, 'configmaps "zzz" not found'),
        (NS + "/a", cm("b"), 400, "the name of the object (b) does not match the name on the URL (a)"),
        # namer.go's ObjectName: an empty name is errEmptyName (kube-apiserver v1.36.0 answers this text)
        (NS + "/a", cm(), 400, "the name of the object (a based on URL) was undeterminable: name must be provided"),
        (NS + "/a", cm("a", namespace="other"), 400, "the namespace of the provided object does not match the namespace sent on the request"),
    ],
    ids=["missing", "name-mismatch", "no-name", "namespace-mismatch"],
)
def test_bad_updates(path, body, code, message):
    _, _, c = setup()
    c.post(NS, json=cm("a"))
    r = c.put(path, json=body)
    assert r.status_code == code
    assert json.loads(r.data)["message"] == message


def test_delete_answers_a_success_status_and_the_object_is_gone():
    _, _, c = setup()
    c.post(NS, json=cm("a"))
    r = c.delete(NS + "/a")
    assert r.status_code == 200
    assert r.data == b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"a","kind":"configmaps","uid":"uid-1"}}\n'
    assert c.get(NS + "/a").status_code == 404
    assert c.delete(NS + "/a").status_code == 404


@pytest.mark.parametrize(
    "body,code,message",
    [
        (b"nope", 400, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: "
                       "invalid character 'o' in literal null (expecting 'u') (6e6f7065)"),
        (b"", 400, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: "
                   "unexpected end of JSON input (<empty>)"),
        # encoding/json's scanner: the state it was in names what it looked for (scanner.go:268, stateBeginString)
        (b"{not json", 400, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: "
                            "invalid character 'n' looking for beginning of object key string ({not json)"),
        (b'{"a":1 2}', 400, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: "
                            "invalid character '2' after object key:value pair ({\"a\":1 2})"),
        (b"[1]", 400, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: "
                      'json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                      'Kind string "json:\\"kind,omitempty\\"" } (5b315d)'),
        (json.dumps(cm("a", {"k": 1})).encode(), 400,
         'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string'),
        (json.dumps({"metadata": {"name": "a"}, "data": "x"}).encode(), 400,
         'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string'),
        (json.dumps({"metadata": {"name": 5}}).encode(), 400,
         'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string'),
        (json.dumps({"kind": "Secret", "metadata": {"name": "a"}}).encode(), 400,
         'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion'),
        (json.dumps(cm(), ).encode(), 422, 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'),
        (json.dumps(cm("Bad_Name")).encode(), 422,
         'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower '
         "case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
         "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        (json.dumps(cm("a", namespace="other")).encode(), 400,
         "the namespace of the provided object does not match the namespace sent on the request"),
    ],
    ids=["not-json", "empty", "no-object-key", "after-a-pair", "not-an-object", "data-number", "data-string", "name-number", "wrong-kind", "no-name", "bad-name", "namespace-mismatch"],
)
def test_bad_creates(body: bytes, code: int, message: str):
    _, store, c = setup()
    r = c.post(NS, data=body, content_type="application/json")
    assert r.status_code == code
    assert json.loads(r.data)["message"] == message
    assert store.resource_version() == 1  # nothing was stored


def test_an_invalid_object_reports_its_cause():
    _, _, c = setup()
    r = c.post(NS, json=cm())
    assert r.data == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \\"\\" is invalid: '
        b'metadata.name: Required value: name or generateName is required","reason":"Invalid","details":{"kind":"ConfigMap",'
        b'"causes":[{"reason":"FieldValueRequired","message":"Required value: name or generateName is required",'
        b'"field":"metadata.name"}]},"code":422}\n'
    )


def test_generate_name():
    _, _, c = setup()
    obj = json.loads(c.post(NS, json=cm(generateName="demo-")).data)
    assert re.fullmatch(r"demo-[bcdfghjklmnpqrstvwxz2456789]{5}", obj["metadata"]["name"])
    assert obj["metadata"]["generateName"] == "demo-"


def test_a_bad_generate_name_is_reported_with_the_name_made_from_it():
    # BeforeCreate makes the name first, then ValidateObjectMeta checks generateName as a prefix
    # (apimachinery pkg/api/validation/objectmeta.go:185-189) and the name (193-199): two causes, as
    # kube-apiserver answered create-generate-name in tests/parity/go-api.json
    _, store, c = setup()
    r = c.post(NS, json=cm(generateName="Bad_"))
    assert r.status_code == 422
    st = json.loads(r.data)
    name = st["details"]["name"]
    assert re.fullmatch(r"Bad_[bcdfghjklmnpqrstvwxz2456789]{5}", name)
    assert [(x["field"], x["message"].split(":")[1].strip()) for x in st["details"]["causes"]] == [
        ("metadata.generateName", '"Bad_"'), ("metadata.name", f'"{name}"')]
    assert st["message"].startswith(f'ConfigMap "{name}" is invalid: [metadata.generateName: Invalid value: "Bad_": a lowercase RFC 1123')
    assert store.resource_version() == 1
    # a prefix may end in a dash (generic.go:80, maskTrailingDash)
    assert c.post(NS, json=cm(generateName="ok-")).status_code == 201


def test_a_body_over_the_limit_is_refused():
    _, _, c = setup()
    r = c.post(NS, data=b"{" + b" " * sampleapi.MAX_REQUEST_BODY_BYTES + b"}")
    assert r.status_code == 413
    assert r.data == status_bytes(413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728")


def post_raw(stream: Any, content_length: Optional[int]) -> tuple[str, Any]:
    """POST a body as our HTTP server hands it over: chunked (no length, the stream ends itself)
    or with a length."""
    mux, _, _ = setup()
    env = EnvironBuilder(path=NS, method="POST").get_environ()
    env["wsgi.input"] = stream
    if content_length is None:
        env.pop("CONTENT_LENGTH", None)
        env["HTTP_TRANSFER_ENCODING"], env["wsgi.input_terminated"] = "chunked", True
    else:
        env["CONTENT_LENGTH"] = str(content_length)
    status, body = call(mux, env)
    return status, json.loads(b"".join(body))


def test_a_chunked_body_over_the_limit_is_refused_though_werkzeug_would_cut_it_silently():
    status, st = post_raw(io.BytesIO(b"{" + b" " * sampleapi.MAX_REQUEST_BODY_BYTES + b"}"), None)
    assert (status, st["reason"]) == ("413 Request Entity Too Large", "RequestEntityTooLarge")
    status, st = post_raw(io.BytesIO(json.dumps(cm("fits")).encode()), None)
    assert status == "201 Created"


def test_a_body_cut_off_is_a_500_status_without_a_reason_as_go_makes_of_it(caplog):
    class CutOff(io.RawIOBase):
        def read(self, n=-1):
            raise httprequest.BodyError("unexpected EOF")

    status, st = post_raw(CutOff(), 10)
    assert status == "500 Internal Server Error"
    assert st == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "unexpected EOF", "code": 500}
    assert "apiserver received an error that is not an metav1.Status" in caplog.text


def go_restful_status(code: int, reason: str, message: str) -> dict:
    """The Status pkg/server/handler.go's serviceErrorHandler makes of go-restful's refusal
    (NewGenericServerResponse: details there, empty)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "details": {}, "code": code}


def test_the_api_is_go_restfuls_routes_and_HEAD_is_not_let_in_where_GET_is():
    mux, _, c = setup()
    services = mux._prefix_to_handler["/api/v1/"].registered_web_services()
    v1 = next(ws for ws in services if ws.root_path == "/api/v1")
    assert {(r.method, r.path) for r in v1.routes()} >= {
        ("GET", "/api/v1/namespaces/{namespace}/configmaps"), ("GET", "/api/v1/namespaces/{namespace}/configmaps/{name}")}
    assert c.head(NS).status_code == 405  # go-restful has no HEAD routes
    # go-restful trims the slashes at a path's end (route.go:166-177, TrimRightSlashEnabled): the collection still
    assert c.get(NS + "//").status_code == 200


@pytest.mark.parametrize("method,path", [("POST", NS + "/a"), ("DELETE", "/api/v1/configmaps"), ("POST", "/api/v1/configmaps"),
                                         ("PUT", NS), ("POST", "/api"), ("PUT", "/api/v1")])
def test_other_methods_are_not_allowed(method: str, path: str):
    # jsr311.go:99-115 (go-restful v3.13.0): no route of the path has the method; Go's handler drops the Allow header
    _, _, c = setup()
    r = c.open(path, method=method)
    assert r.status_code == 405
    assert json.loads(r.data) == go_restful_status(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
    assert "Allow" not in r.headers


@pytest.mark.parametrize("path", ["/api/v1/namespaces/ns", "/api/v1/namespaces/ns/secrets", NS + "/a/b", "/api/v9", "/api/v1/x/y/z"])
def test_other_paths_under_a_web_service_are_not_found(path: str):
    # curly.go:52-65 (go-restful v3.13.0): a web service claims the path and none of its routes matches
    _, _, c = setup()
    r = c.get(path)
    assert r.status_code == 404
    assert r.headers["Content-Type"] == "application/json"
    assert json.loads(r.data) == go_restful_status(404, "NotFound", "the server could not find the requested resource")


@pytest.mark.parametrize("path", ["/apis/nonsense", "/apix", "/apis/authentication.k8s.iox"])
def test_a_path_no_web_service_claims_is_the_muxs(path: str):
    # handler.go:122-145 (apiserver v1.36.0): the director gives /apis only as itself to go-restful, and a
    # root only at a path boundary
    _, _, c = setup()
    r = c.get(path)
    assert (r.status_code, r.data) == (404, b"404 page not found\n")


# -- /echo and /slow -----------------------------------------------------------------------------


def test_echo():
    _, _, c = setup()
    r = c.get("/echo?message=request-on-a-new-tcp-connection-should-succeed")
    assert r.status_code == 200
    assert r.headers["echo"] == "request-on-a-new-tcp-connection-should-succeed"
    assert r.data == b""
    assert c.get("/echo").headers["echo"] == ""


def test_slow_without_waiting():
    _, _, c = setup()
    r = c.get("/slow?seconds=0")
    assert (r.status_code, r.data) == (200, b"slept 0s\n")


@pytest.mark.parametrize("value", ["", "abc", "-1", "nan", "inf"])
def test_slow_wants_a_number(value: str):
    _, _, c = setup()
    r = c.get(f"/slow?seconds={value}")
    assert r.status_code == 400
    assert r.data == f'invalid seconds "{value}": want a number >= 0\n'.encode()


def test_slow_takes_its_time_on_the_runtime_clock():
    def main():
        _, _, c = setup()
        r = c.get("/slow?seconds=70")
        return r.status_code, r.data, rt.now()

    assert Simulation().run(main) == (200, b"slept 1m10s\n", 70.0)


def test_slow_gives_up_when_its_request_is_over():
    mux, _, _ = setup()

    def main():
        env = EnvironBuilder(path="/slow", query_string="seconds=3600").get_environ()
        ctx, cancel = gocontext.with_timeout(gocontext.background(), 60)
        request.with_context(env, ctx)
        status, body = call(mux, env)
        cancel()
        return status, b"".join(body), rt.now()

    assert Simulation().run(main) == ("503 Service Unavailable", b"gave up waiting: context deadline exceeded\n", 60.0)


# -- watch ---------------------------------------------------------------------------------------


class FakeServerShutdownSignal:
    def __init__(self) -> None:
        self.ev = rt.event("fake-shutting-down")

    def shutting_down(self) -> rt.Event:
        return self.ev


def call(app, env: dict) -> tuple[str, Any]:
    got: dict = {}

    def start_response(status, headers, exc_info=None):
        got["status"], got["headers"] = status, headers

    body = app(env, start_response)
    got.setdefault("body", body)
    return got["status"], body


def watch(app, query: str, *, path: str = NS, signal: Optional[FakeServerShutdownSignal] = None) -> tuple[str, dict, Any]:
    env = EnvironBuilder(path=path, query_string=query).get_environ()
    if signal is not None:
        request.with_server_shutdown_signal(env, signal)
    headers: dict = {}

    def start_response(status, hs, exc_info=None):
        headers["status"] = status
        headers.update(hs)

    body = app(env, start_response)
    # a stream opens with one empty chunk that flushes the header (Go's Flush); the events follow
    if headers.get("Transfer-Encoding") != "chunked":  # an error instead of a stream
        return headers.pop("status"), headers, list(body)
    stream = iter(body)
    assert next(stream) == b""
    return headers.pop("status"), headers, stream


def event(line: bytes) -> tuple[str, str, str]:
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    e = json.loads(line)
    return e["type"], e["object"]["metadata"]["name"], e["object"]["metadata"]["resourceVersion"]


@pytest.mark.parametrize("flag", ["true", "1", "True"])
def test_a_watch_starts_with_the_existing_objects_and_ends_when_the_server_shuts_down(flag: str):
    mux, _, c = setup()
    c.post(NS, json=cm("b"))
    c.post(NS, json=cm("a"))
    c.post("/api/v1/namespaces/other/configmaps", json=cm("c"))
    sig = FakeServerShutdownSignal()
    status, headers, body = watch(mux, f"watch={flag}", signal=sig)
    assert status == "200 OK"
    assert headers == {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    stream = iter(body)
    assert [event(next(stream)) for _ in range(2)] == [("ADDED", "a", "3"), ("ADDED", "b", "2")]
    c.put(NS + "/a", json=cm("a", {"k": "v"}))
    c.delete(NS + "/b")
    c.post("/api/v1/namespaces/other/configmaps", json=cm("d"))  # another namespace: not seen
    assert [event(next(stream)) for _ in range(2)] == [("MODIFIED", "a", "5"), ("DELETED", "b", "6")]
    sig.ev.set()
    assert list(stream) == []
    body.close()


@pytest.mark.parametrize("path, seen", [("/api/v1/watch/namespaces/ns/configmaps", ["a", "b"]),
                                        ("/api/v1/watch/namespaces/ns/configmaps/b", ["b"]),
                                        ("/api/v1/watch/configmaps", ["a", "b", "b", "c"]),
                                        # an empty namespace: every namespace's b (kube-apiserver v1.36.0 answers so)
                                        ("/api/v1/watch/namespaces//configmaps/b", ["b", "b"])])
def test_the_deprecated_watch_paths_watch_without_the_watch_parameter(path: str, seen: list):
    # installer.go:575-596 (apiserver v1.36.0): WATCHLIST and WATCH routes under watch/, served by
    # ListResource with forceWatch (handlers/get.go:190)
    mux, _, c = setup()
    for ns, name in (("ns", "a"), ("ns", "b"), ("other", "c"), ("other", "b")):
        c.post(f"/api/v1/namespaces/{ns}/configmaps", json=cm(name))
    sig = FakeServerShutdownSignal()
    status, headers, body = watch(mux, "", path=path, signal=sig)
    assert (status, headers["Content-Type"]) == ("200 OK", "application/json")
    stream = iter(body)
    assert [event(next(stream))[:2] for _ in seen] == [("ADDED", name) for name in seen]
    sig.ev.set()
    assert list(stream) == []
    body.close()
    assert c.post("/api/v1/watch/configmaps", json=cm("d")).status_code == 405  # GET routes only


def test_resource_version_zero_also_lists_and_all_namespaces_see_everything():
    mux, _, c = setup()
    c.post(NS, json=cm("a"))
    c.post("/api/v1/namespaces/other/configmaps", json=cm("b"))
    sig = FakeServerShutdownSignal()
    _, _, body = watch(mux, "watch=1&resourceVersion=0", path="/api/v1/configmaps", signal=sig)
    stream = iter(body)
    assert [event(next(stream)) for _ in range(2)] == [("ADDED", "a", "2"), ("ADDED", "b", "3")]
    sig.ev.set()
    assert list(stream) == []


def test_a_watch_from_a_resource_version_sends_only_what_changed_after_it():
    mux, _, c = setup()
    c.post(NS, json=cm("a"))  # rv 2
    c.post(NS, json=cm("b"))  # rv 3
    c.put(NS + "/a", json=cm("a", {"x": "y"}))  # rv 4
    sig = FakeServerShutdownSignal()
    _, _, body = watch(mux, "watch=true&resourceVersion=3", signal=sig)
    stream = iter(body)
    line = next(stream)
    assert event(line) == ("MODIFIED", "a", "4")
    assert json.loads(line)["object"]["data"] == {"x": "y"}
    sig.ev.set()
    assert list(stream) == []


def test_a_too_old_resource_version_is_expired():
    mux, _, c = setup(history=2)
    for name in "abcd":
        c.post(NS, json=cm(name))  # rv 2..5; only 4 and 5 kept
    status, _, body = watch(mux, "watch=true&resourceVersion=2")
    assert status == "410 Gone"
    assert b"".join(body) == status_bytes(410, "Expired", "too old resource version: 2 (3)")
    sig = FakeServerShutdownSignal()
    _, _, body = watch(mux, "watch=true&resourceVersion=3", signal=sig)
    stream = iter(body)
    assert [event(next(stream)) for _ in range(2)] == [("ADDED", "c", "4"), ("ADDED", "d", "5")]
    sig.ev.set()
    assert list(stream) == []


def test_a_watch_that_falls_behind_the_history_gets_an_error_event_and_ends():
    mux, _, c = setup(history=1)
    _, _, body = watch(mux, "watch=true&resourceVersion=1", signal=FakeServerShutdownSignal())
    stream = iter(body)
    c.post(NS, json=cm("a"))
    c.post(NS, json=cm("b"))
    (line,) = list(stream)
    assert line == b'{"type":"ERROR","object":' + status_bytes(410, "Expired", "too old resource version: 1 (2)")[:-1] + b"}\n"


@pytest.mark.parametrize(
    "query,message",
    [("watch=true&resourceVersion=abc", 'invalid resource version "abc"'),
     ("watch=true&timeoutSeconds=soon", 'strconv.ParseInt: parsing "soon": invalid syntax')],
    ids=["resourceVersion", "timeoutSeconds"],
)
def test_bad_watch_parameters(query: str, message: str):
    mux, _, _ = setup()
    status, _, body = watch(mux, query)
    assert status == "400 Bad Request"
    assert b"".join(body) == status_bytes(400, "BadRequest", message)


def test_a_watch_wakes_up_for_changes_and_returns_once_the_server_shuts_down():
    """The stream waits on the runtime in its own goroutine, wakes for each change, ends at shutdown."""
    mux, _, c = setup()
    sig = FakeServerShutdownSignal()
    _, _, body = watch(mux, "watch=true", signal=sig)
    lines: list[tuple] = []
    cond = rt.condition()

    def consume() -> None:
        for line in body:
            with cond:
                lines.append(event(line))
                cond.notify_all()

    g = rt.go(consume, name="watch-client")
    for i, name in enumerate(["a", "b", "c"]):
        c.post(NS, json=cm(name))
        with cond:
            assert cond.wait_for(lambda: len(lines) == i + 1, WAIT)
    assert not g.done.is_set()
    sig.ev.set()
    assert g.join(WAIT)
    assert lines == [("ADDED", "a", "2"), ("ADDED", "b", "3"), ("ADDED", "c", "4")]


def test_a_watch_ends_when_its_request_context_is_done():
    mux, _, _ = setup()
    env = EnvironBuilder(path=NS, query_string="watch=true").get_environ()
    ctx, cancel = gocontext.with_cancel(gocontext.background())
    request.with_context(env, ctx)
    status, body = call(mux, env)
    assert status == "200 OK"
    cancel()
    assert list(body) == [b""]  # only the flush of the header: no event


@pytest.mark.parametrize(
    "min_timeout,rand,query,ends_at",
    [(1800, 0.0, "", 1800.0), (1800, 0.5, "", 2700.0), (10, 0.999, "", 19.99), (1800, 0.5, "&timeoutSeconds=5", 5.0),
     (1800, 0.5, "&timeoutSeconds=0", 2700.0)],
    ids=["min", "middle", "almost-twice", "timeoutSeconds", "timeoutSeconds-zero"],
)
def test_a_watch_times_out_between_min_and_twice_min(min_timeout, rand, query, ends_at):
    def main():
        mux = PathRecorderMux("test")
        store = sampleapi.install(mux, min_request_timeout=min_timeout, rand=lambda: rand)
        _, _, body = watch(mux, "watch=true" + query, signal=FakeServerShutdownSignal())
        stream = iter(body)
        store.create("ns", {"metadata": {"name": "a"}, "data": {}})
        first = event(next(stream))
        rest = list(stream)  # nothing more happens: the stream waits until its timeout
        return first, rest, rt.now()

    first, rest, now = Simulation().run(main)
    assert (first, rest) == (("ADDED", "a", "2"), [])
    assert now == pytest.approx(ends_at)


def test_no_min_request_timeout_means_no_watch_timeout():
    scope = RequestScope(sampleapi.CONFIGMAPS, Store(), min_request_timeout=0, rand=lambda: 0.5)
    assert get_handler.watch_timeout(scope, None) == 0.0
    assert get_handler.watch_timeout(scope, 0) == 0.0
    assert get_handler.watch_timeout(scope, 3) == 3.0


# -- a property: a snapshot plus the events after it is the final state ----------------------------

OPS = st.lists(st.tuples(st.sampled_from(["create", "update", "delete"]), st.sampled_from("abc"), st.sampled_from(["x", "y"])), max_size=25)


@settings(max_examples=60)
@given(OPS, st.integers(min_value=0, max_value=25))
def test_snapshot_plus_events_is_the_final_state(ops, split):
    store = Store(new_uid=uids())

    def apply(op, name, ns):
        try:
            if op == "create":
                store.create(ns, {"metadata": {"name": name}, "data": {"v": name}})
            elif op == "update":
                store.update(ns, name, {"metadata": {"name": name}, "data": {"v": str(store.resource_version())}})
            else:
                store.delete(ns, name)
        except sampleapi.StatusError as err:
            assert err.status["code"] in (404, 409)

    for op in ops[:split]:
        apply(*op)
    initial, rv = store.watch_start("x", "")
    state = {o["metadata"]["name"]: o for o in initial}
    for op in ops[split:]:
        apply(*op)
    events, newest, _ = store.events_after(rv, "x")
    for typ, obj in events:
        if typ == "DELETED":
            del state[obj["metadata"]["name"]]
        else:
            state[obj["metadata"]["name"]] = obj
    final, final_rv = store.list("x")
    assert newest == final_rv
    assert [state[k] for k in sorted(state)] == final


# -- metrics, as Go's installer instruments its routes ----------------------------------------------


def test_rest_routes_are_counted_as_go_counts_them_and_a_watch_is_long_running_until_closed():
    from prometheus_client import CollectorRegistry

    from genericserver.metrics import Metrics

    registry = CollectorRegistry()
    mux = PathRecorderMux("test")
    sampleapi.install(mux, Store(new_uid=uids()), metrics=Metrics(registry))
    c = Client(with_warning_recorder(mux))

    def code(method: str, path: str, **kw: Any) -> int:
        with c.open(path, method=method, buffered=True, **kw) as r:  # closed: its answer is recorded
            return r.status_code

    assert code("POST", NS, json=cm("a")) == 201
    assert code("GET", NS + "/a") == 200
    assert code("GET", NS + "/missing") == 404
    assert code("GET", NS) == 200
    assert code("GET", "/api/v1/configmaps") == 200
    assert code("GET", "/echo?message=x") == 200  # the non-go-restful mux: not instrumented

    def count(verb: str, scope: str, code: str) -> float:
        return registry.get_sample_value("apiserver_request_total", {
            "verb": verb, "dry_run": "", "group": "", "version": "v1", "resource": "configmaps",
            "subresource": "", "scope": scope, "component": "apiserver", "code": code}) or 0.0

    assert (count("POST", "resource", "201"), count("GET", "resource", "200"), count("GET", "resource", "404")) == (1, 1, 1)
    assert (count("LIST", "namespace", "200"), count("LIST", "cluster", "200")) == (1, 1)
    assert sum(s.value for m in registry.collect() if m.name == "apiserver_request" for s in m.samples
               if s.name == "apiserver_request_total") == 5

    def long_running() -> float:
        return sum(s.value for m in registry.collect() if m.name == "apiserver_longrunning_requests" for s in m.samples)

    signal = FakeServerShutdownSignal()
    env = EnvironBuilder(path=NS, query_string="watch=true").get_environ()
    request.with_server_shutdown_signal(env, signal)
    body = mux(env, lambda status, headers, exc_info=None: None)
    assert long_running() == 1  # streaming
    signal.ev.set()
    list(body)  # the stream ends: the server is shutting down
    assert long_running() == 1  # until the server closes it
    body.close()
    assert long_running() == 0
    assert count("WATCH", "namespace", "200") == 1
