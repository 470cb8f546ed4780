"""go-restful's route selection (genericserver/github_com/emicklei/go_restful/v3, a port of
github.com/emicklei/go-restful/v3 v3.13.0), the Status k8s.io/apiserver writes for its refusals
(pkg/server/handler.go's serviceErrorHandler), and the order on the server: the route is chosen
before any handler runs (no Go twin: Go tests go-restful in its own module)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.apimachinery.api import errors
from genericserver.github_com.emicklei.go_restful.v3.container import Container
from genericserver.github_com.emicklei.go_restful.v3.curly import CurlyRouter
from genericserver.github_com.emicklei.go_restful.v3.jsr311 import detect_route
from genericserver.github_com.emicklei.go_restful.v3.path_processor import extract_parameters
from genericserver.github_com.emicklei.go_restful.v3.route import Route, tokenize_path
from genericserver.github_com.emicklei.go_restful.v3.service_error import ServiceError
from genericserver.github_com.emicklei.go_restful.v3.web_service import WebService
from genericserver.handler import service_error_handler
from genericserver.mux import PathRecorderMux

MEDIA = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]
NS = "/api/v1/namespaces/default/configmaps"


def route(method: str = "GET", path: str = "/x", *, produces=MEDIA, consumes=("*/*",)) -> Route:
    return Route(method, path, lambda environ, start_response, params: [], produces=produces, consumes=consumes)


# -- route.go ------------------------------------------------------------------------------------


@pytest.mark.parametrize("accept, fits", [
    ("application/json", True), ("*/*", True), ("text/html, */*;q=0.1", True),
    ("application/json;as=Table;v=v1;g=meta.k8s.io", True), ("  application/yaml  ", True),
    # only */* is a wildcard (route.go:97-99): application/* is a type no route lists
    ("application/*", False), ("text/html", False), ("nonsense", False), ("application/json ;q=1", True),
    ("text/html,", False),
])
def test_matches_accept_compares_each_type_without_its_parameters(accept, fits):
    # route.go:82-106 (go-restful v3.13.0)
    assert route().matches_accept(accept) is fits


def test_a_route_that_produces_any_type_fits_every_accept():
    assert route(produces=["*/*"]).matches_accept("text/html")


@pytest.mark.parametrize("method, content_type, fits", [
    ("GET", "", True), ("DELETE", "", True), ("HEAD", "", True), ("OPTIONS", "", True), ("TRACE", "", True),
    # a method that sends a body is taken to send application/octet-stream (route.go:128-129)
    ("PATCH", "", False), ("POST", "", False),
    ("PATCH", "application/merge-patch+json", True), ("PATCH", "application/merge-patch+json; charset=utf-8", True),
    ("PATCH", "application/json", False), ("PATCH", "text/plain", False),
    ("PATCH", "text/plain, application/json-patch+json", True),
])
def test_matches_content_type_by_method_when_there_is_none(method, content_type, fits):
    # route.go:111-159 (go-restful v3.13.0)
    patch_types = ["application/json-patch+json", "application/merge-patch+json"]
    assert route(method, consumes=patch_types).matches_content_type(content_type) is fits


def test_a_route_that_lists_no_consumed_type_consumes_any():
    assert route("POST", consumes=()).matches_content_type("")


_TYPES = st.sampled_from(MEDIA + ["text/html", "application/*", "*/*", "image/png", ""])


@given(st.lists(_TYPES, min_size=1, max_size=5), st.randoms(), st.lists(st.sampled_from([";q=0.5", ";v=1", " ", ""]), min_size=5, max_size=5))
def test_accept_fits_whatever_the_order_and_parameters_of_its_types(types, rnd, params):
    # go-restful's comparison is a set membership: order and parameters do not matter
    r = route()
    want = r.matches_accept(",".join(types))
    shuffled = list(types)
    rnd.shuffle(shuffled)
    assert r.matches_accept(",".join(shuffled)) is want
    assert r.matches_accept(",".join(t + p for t, p in zip(types, params))) is want
    assert want is any(t == "*/*" or t in MEDIA for t in types)


def test_tokenize_path_trims_the_slashes_at_both_ends():
    # route.go:166-177 with TrimRightSlashEnabled (its default)
    assert tokenize_path("/") == []
    assert tokenize_path("/api/v1/") == ["api", "v1"]
    assert tokenize_path("/api//v1") == ["api", "", "v1"]


# -- jsr311.go -----------------------------------------------------------------------------------


def refusal(routes, **environ) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        detect_route(routes, {"REQUEST_METHOD": "GET", **environ})
    return caught.value


def test_detect_route_checks_the_method_then_the_content_type_then_the_accept():
    # jsr311.go:69-160 (go-restful v3.13.0): a request at fault three ways gets the first check's answer
    routes = [route("GET", produces=MEDIA), route("PATCH", consumes=["application/merge-patch+json"])]
    three = refusal(routes, REQUEST_METHOD="PUT", CONTENT_TYPE="text/plain", HTTP_ACCEPT="text/html")
    assert (three.code, three.message, three.header) == (405, "405: Method Not Allowed", {"Allow": ["GET, PATCH"]})
    two = refusal(routes, REQUEST_METHOD="PATCH", CONTENT_TYPE="text/plain", HTTP_ACCEPT="text/html")
    assert (two.code, two.message) == (415, "415: Unsupported Media Type")
    one = refusal(routes, REQUEST_METHOD="PATCH", CONTENT_TYPE="application/merge-patch+json", HTTP_ACCEPT="text/html")
    assert (one.code, one.message) == (406, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "
                                             "application/vnd.kubernetes.protobuf")


def test_a_406_lists_what_the_routes_left_by_the_method_produce():
    routes = [route("GET", "/a", produces=["application/json"]), route("GET", "/b", produces=["text/plain"]),
              route("POST", "/a", produces=["image/png"])]
    err = refusal(routes, HTTP_ACCEPT="application/*")
    assert err.message.endswith("Available representations: application/json, text/plain")


def test_no_accept_is_any_and_the_first_route_left_serves():
    first, second = route("GET", "/a"), route("GET", "/b")
    assert detect_route([first, second], {"REQUEST_METHOD": "GET"}) is first


def test_a_route_whose_condition_fails_is_not_found():
    r = route()
    r.conditions.append(lambda environ: False)
    err = refusal([r])
    assert (err.code, err.message) == (404, "404: Not Found")


# -- curly.go, curly_route.go, path_processor.go ---------------------------------------------------------


def test_the_web_service_whose_root_matches_most_literally_is_chosen():
    # curly.go:184-229: /api scores 20 for /api/v9's first token, /api/v1 cannot match it; /api/v1/x picks /api/v1
    api, v1 = WebService("/api"), WebService("/api/v1")
    router = CurlyRouter()
    assert router.detect_web_service(tokenize_path("/api/v1/x"), [api, v1]) is v1
    assert router.detect_web_service(tokenize_path("/api/v9"), [api, v1]) is api
    assert router.detect_web_service(tokenize_path("/apis/x"), [api, v1]) is None


def test_routes_with_more_literal_tokens_sort_first():
    # curly_route.go:35-55: most static tokens, then most parameters, then the greater path
    ws = WebService("/r")
    params = ws.route("GET", "/{a}/{b}", lambda *_: [])
    literal = ws.route("GET", "/x/{b}", lambda *_: [])
    both = ws.route("GET", "/x/y", lambda *_: [])
    assert [c.route for c in CurlyRouter().select_routes(ws, tokenize_path("/r/x/y"))] == [both, literal, params]
    assert [c.route for c in CurlyRouter().select_routes(ws, tokenize_path("/r/z/y"))] == [params]


def test_a_path_no_route_of_the_web_service_matches_is_404_page_not_found():
    ws = WebService("/api/v1")
    ws.route("GET", "/namespaces/{namespace}/configmaps/{name}", lambda *_: [])
    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/api/v1/namespaces/a/configmaps/b/c"}
    with pytest.raises(ServiceError) as caught:
        CurlyRouter().select_route([ws], environ)
    assert (caught.value.code, caught.value.message) == (404, "404: Page Not Found")
    with pytest.raises(ServiceError) as caught:
        CurlyRouter().select_route([ws], {**environ, "PATH_INFO": "/apis"})
    assert (caught.value.code, caught.value.message) == (404, "404: Page Not Found")


def test_a_wildcard_parameter_takes_the_rest_of_the_path():
    ws = WebService("/p")
    r = ws.route("GET", "/{name}/proxy/{path:*}", lambda *_: [])
    matched, params, static = CurlyRouter().matches_route_by_path_tokens(r.path_parts, tokenize_path("/p/a/proxy/b/c"))
    assert (matched, params, static) == (True, 2, 2)
    assert extract_parameters(r, "/p/a/proxy/b/c") == {"name": "a", "path": "b/c"}


def test_path_parameters_are_extracted_by_position():
    r = route("GET", "/api/v1/namespaces/{namespace}/configmaps/{name}")
    assert extract_parameters(r, "/api/v1/namespaces/ns/configmaps/cm/") == {"namespace": "ns", "name": "cm"}
    assert extract_parameters(route("GET", "/f/a{id}.json"), "/f/a42.json") == {"id": "42"}


# -- container.go and handler.go's serviceErrorHandler ------------------------------------------------


def serve(app, **environ) -> tuple[str, dict, bytes]:
    got = {}

    def start_response(status, headers, exc_info=None):
        got["status"], got["headers"] = status, dict(headers)

    body = b"".join(app({"REQUEST_METHOD": "GET", **environ}, start_response))
    return got["status"], got["headers"], body


def test_a_refused_request_never_reaches_the_route_function():
    calls = []
    ws = WebService("/x", produces=["application/json"])

    def function(environ, start_response, params):
        calls.append(params)
        start_response("200 OK", [])
        return []

    ws.route("GET", "/{name}", function)
    c = Container().add(ws)
    status, headers, body = serve(c, PATH_INFO="/x/a", HTTP_ACCEPT="text/html")
    # go-restful's own writeServiceError: the text as it is (container.go:187-194)
    assert (status, body) == ("406 Not Acceptable", b"406: Not Acceptable\n\nAvailable representations: application/json")
    assert calls == []
    serve(c, PATH_INFO="/x/a", HTTP_ACCEPT="application/json")
    assert calls == [{"name": "a"}]


def test_two_web_services_at_one_root_are_refused():
    c = Container().add(WebService("/x"))
    with pytest.raises(ValueError):
        c.add(WebService("/x"))


@pytest.mark.parametrize("code, message, reason, text", [
    (404, "404: Page Not Found", "NotFound", "the server could not find the requested resource"),
    (405, "405: Method Not Allowed", "MethodNotAllowed", "the server does not allow this method on the requested resource"),
    (415, "415: Unsupported Media Type", "UnsupportedMediaType", "415: Unsupported Media Type"),
    (406, "406: Not Acceptable\n\nAvailable representations: application/json", "NotAcceptable",
     "406: Not Acceptable\n\nAvailable representations: application/json"),
])
def test_the_service_error_handler_writes_gos_status_as_json_whatever_the_accept(code, message, reason, text):
    # apiserver pkg/server/handler.go:176-184 (v1.36.0): NewGenericServerResponse(code, "", {}, "", message),
    # ErrorNegotiated: an Accept nothing fits gets JSON
    err = ServiceError(code, message, {"Allow": ["GET"]})
    status, headers, body = serve(lambda e, s: service_error_handler(err, e, s), HTTP_ACCEPT="text/html")
    assert int(status.split()[0]) == code
    assert headers["Content-Type"] == "application/json" and "Allow" not in headers
    assert json.loads(body) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": text, "reason": reason, "details": {}, "code": code}


def test_new_generic_server_response_names_the_resource_and_keeps_a_500s_message():
    # apimachinery pkg/api/errors/errors.go:437-526 (v0.36.0)
    st = errors.new_generic_server_response(409, "POST", "deployments.apps", "d", "", 0, False).status
    assert (st["reason"], st["message"], st["details"]) == (
        "AlreadyExists", "the server reported a conflict (post deployments.apps d)", {"name": "d", "group": "apps", "kind": "deployments"})
    st = errors.new_generic_server_response(502, "", "", "", "bad", 3, True).status
    assert st["message"] == 'an error on the server ("bad") has prevented the request from succeeding'
    assert st["details"] == {"causes": [{"reason": "UnexpectedServerResponse", "message": "bad"}], "retryAfterSeconds": 3}
    assert "reason" not in errors.new_generic_server_response(418, "", "", "", "", 0, False).status


# -- the server: route selection, then the handler ------------------------------------------------


@pytest.fixture
def client():
    mux = PathRecorderMux("test")
    store = sampleapi.install(mux)
    c = Client(mux)
    assert c.post(NS, json={"metadata": {"name": "a"}, "data": {"k": "v"}}).status_code == 201
    return store, c


def test_application_star_is_not_acceptable_to_go_restful(client):
    # the handlers' negotiation would answer JSON; go-restful's comparison refuses first (get-application-star)
    _, c = client
    r = c.get(NS + "/a", headers={"Accept": "application/*"})
    assert r.status_code == 406
    assert json.loads(r.data)["message"] == ("406: Not Acceptable\n\nAvailable representations: application/json, "
                                             "application/yaml, application/vnd.kubernetes.protobuf")


def test_a_refusal_to_a_client_that_accepts_nothing_written_is_indented_raw_json(client):
    # responsewriters/writers.go:333-339 and :400-409 (apiserver v1.36.0): the negotiation fails, so
    # WriteRawJSON writes the Status with json.MarshalIndent (two spaces, no newline at the end), as
    # kube-apiserver answers GET /api with Accept: text/html
    _, c = client
    r = c.get("/api", headers={"Accept": "text/html"})
    assert r.headers["Content-Type"] == "application/json"
    assert r.data == json.dumps(json.loads(r.data), indent=2).encode()
    assert r.data.startswith(b'{\n  "kind": "Status",') and r.data.endswith(b'"code": 406\n}')


def test_a_list_route_produces_the_watch_stream_types_too(client):
    _, c = client
    r = c.get(NS + "?watch=1", headers={"Accept": "text/html"})
    assert json.loads(r.data)["message"].endswith(
        "application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")


def test_a_patch_of_another_content_type_is_refused_before_the_handler_reads_it(client):
    store, c = client
    r = c.patch(NS + "/a", data=b'{"data":{"k":"w"}}', headers={"Content-Type": "application/json"})
    assert (r.status_code, json.loads(r.data)["message"]) == (415, "415: Unsupported Media Type")
    assert store.get("default", "a")["data"] == {"k": "v"}
    no_type = c.patch(NS + "/a", data=b'{"data":{"k":"w"}}')
    assert no_type.status_code == 415  # PATCH without a Content-Type is application/octet-stream
    assert c.patch(NS + "/a", data=b'{"data":{"k":"w"}}', headers={"Content-Type": "application/merge-patch+json"}).status_code == 200


def test_a_post_or_put_of_any_content_type_reaches_its_handler(client):
    # the web service consumes */* (installer.go:233): the handler's decoder answers, not go-restful
    _, c = client
    r = c.post(NS, data=b"x", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert json.loads(r.data)["message"].startswith("the body of the request was in an unknown format")


def test_the_accept_is_refused_before_a_missing_object_is_looked_up(client):
    # delete-two-faults-accept-and-missing: 406 wins over the store's 404
    _, c = client
    r = c.delete(NS + "/missing", headers={"Accept": "text/html"})
    assert r.status_code == 406
    assert c.delete(NS + "/missing").status_code == 404


def test_an_empty_namespace_lists_every_namespace_and_names_no_object(client):
    # go-restful matches {namespace} to an empty token (curly.go:107-121); kube-apiserver v1.36.0 then lists
    # every namespace (the store's key root) and refuses an object's key (store.go NamespaceKeyFunc)
    store, c = client
    assert c.post("/api/v1/namespaces/other/configmaps", json={"metadata": {"name": "b"}}).status_code == 201
    before = store.resource_version()
    r = c.get("/api/v1/namespaces//configmaps")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in json.loads(r.data)["items"]] == [
        ("default", "a"), ("other", "b")]
    for method, path in [("GET", "/a"), ("PUT", "/a"), ("DELETE", "/a"), ("DELETE", ""), ("POST", "")]:
        r = c.open("/api/v1/namespaces//configmaps" + path, method=method, json={"metadata": {"name": "a"}})
        assert (r.status_code, json.loads(r.data)["message"]) == (400, "Namespace parameter required."), (method, path)
    assert store.resource_version() == before  # nothing written


def test_discovery_routes_are_go_restfuls_too(client):
    _, c = client
    assert c.get("/api/v1/", headers={"Accept": "application/json"}).status_code == 200
    r = c.get("/api", headers={"Accept": "text/html"})
    assert (r.status_code, json.loads(r.data)["message"]) == (406, "406: Not Acceptable\n\nAvailable representations: "
                                                               "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    # legacy.go:59-63: the discovery route is a GET; a POST is go-restful's 405
    assert c.post("/api", json={}).status_code == 405
    assert json.loads(c.get("/apis/authentication.k8s.io/v2").data)["reason"] == "NotFound"
