"""The REST handlers' Go rules beyond the sample API's basics: list options, paging, dry run,
delete options and the options' checks, deletecollection."""

from __future__ import annotations

import base64
import json

import pytest
from werkzeug.test import Client, EnvironBuilder

from genericserver import authz, request, sampleapi
from genericserver.mux import PathRecorderMux
from genericserver.testing.sim import Simulation
from genericserver.endpoints.filters.warning import with_warning_recorder  # the chain's: warnings as headers

NS = "/api/v1/namespaces/ns/configmaps"


def uids():
    n = iter(range(1, 10_000))
    return lambda: f"uid-{next(n)}"


@pytest.fixture
def setup():
    mux = PathRecorderMux("test")
    store = sampleapi.install(mux, sampleapi.Store(new_uid=uids()))
    c = Client(with_warning_recorder(mux))
    for name in "abcde":
        assert c.post(NS, json={"metadata": {"name": name, "labels": {"n": name}}}).status_code == 201
    return store, c


def names(resp) -> list[str]:
    return [i["metadata"]["name"] for i in json.loads(resp.data)["items"]]


def test_a_list_is_cut_at_its_limit_and_continues_where_it_stopped(setup):
    _, c = setup
    first = json.loads(c.get(NS + "?limit=2").data)
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert first["metadata"]["remainingItemCount"] == 3
    token = first["metadata"]["continue"]
    decoded = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    # etcd3's token: the key after the list's prefix (/registry/configmaps/ns/), storage/continue.go
    assert decoded == {"v": "meta.k8s.io/v1", "rv": 6, "start": "b\x00"}
    everywhere = json.loads(c.get("/api/v1/configmaps?limit=2").data)["metadata"]["continue"]
    assert json.loads(base64.urlsafe_b64decode(everywhere + "=" * (-len(everywhere) % 4)))["start"] == "ns/b\x00"
    second = json.loads(c.get(NS + f"?limit=2&continue={token}").data)
    assert [i["metadata"]["name"] for i in second["items"]] == ["c", "d"]
    last = json.loads(c.get(NS + f"?limit=2&continue={second['metadata']['continue']}").data)
    assert [i["metadata"]["name"] for i in last["items"]] == ["e"]
    assert "continue" not in last["metadata"]


def test_resource_version_0_lists_whole_whatever_the_limit(setup):
    # the watch cache serves resourceVersion=0 and ignores its limit (storage/cacher/cacher.go's
    # computeListLimit): every item, no continue token
    _, c = setup
    doc = json.loads(c.get(NS + "?resourceVersion=0&limit=1").data)
    assert [i["metadata"]["name"] for i in doc["items"]] == list("abcde")
    assert set(doc["metadata"]) == {"resourceVersion"}


def test_a_page_a_selector_narrows_still_continues_while_keys_follow(setup):
    # the cache's GetList (and etcd's list) has more whenever a key follows the last item taken,
    # matching or not: the page after it may be empty, and the token has no remainingItemCount
    _, c = setup
    first = json.loads(c.get(NS + "?labelSelector=n+in+(a,b)&limit=2").data)
    assert [i["metadata"]["name"] for i in first["items"]] == ["a", "b"]
    assert "continue" in first["metadata"] and "remainingItemCount" not in first["metadata"]
    rest = json.loads(c.get(NS + f"?labelSelector=n+in+(a,b)&limit=2&continue={first['metadata']['continue']}").data)
    assert (rest["items"], set(rest["metadata"])) == ([], {"resourceVersion"})
    last = json.loads(c.get(NS + "?labelSelector=n%3De&limit=1").data)
    assert [i["metadata"]["name"] for i in last["items"]] == ["e"] and "continue" not in last["metadata"]


@pytest.mark.parametrize("token", ["!!!", base64.urlsafe_b64encode(b'{"v":"other","rv":1,"start":"x"}').decode()])
def test_a_continue_token_it_cannot_read_is_400(setup, token):
    _, c = setup
    r = c.get(NS + f"?continue={token}")
    assert r.status_code == 400
    assert json.loads(r.data)["message"].startswith("invalid continue token: ")


@pytest.mark.parametrize("query, message", [
    ("resourceVersionMatch=NotOlderThan", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
    ("resourceVersion=0&resourceVersionMatch=Exact", 'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'),
    ("resourceVersion=1&resourceVersionMatch=Newest", 'resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""'),
    ("sendInitialEvents=true", "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"),
    ("watch=1&resourceVersionMatch=NotOlderThan",
     "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"),
])
def test_list_options_are_checked_as_validate_list_options_does(setup, query, message):
    store, c = setup
    r = c.get(NS + "?" + query)
    assert r.status_code == 422
    assert json.loads(r.data)["message"] == f'ListOptions.meta.k8s.io "" is invalid: {message}'


# Each as kube-apiserver v1.36.0 answered it (reference/pair.py): the parameter codec reads a bool
# as true unless "0" or "false" (runtime.Convert_Slice_string_To_bool), and a named number must parse.
@pytest.mark.parametrize("query, code, message", [
    ("watch=1&sendInitialEvents=maybe", 422,  # true, so it needs its match (it was a 400 for ParseBool here)
     'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting '
     'resourceVersionMatch to NotOlderThan'),
    ("limit=", 400, 'strconv.ParseInt: parsing "": invalid syntax'),  # a named value must parse (it was ignored here)
    ("timeoutSeconds=", 400, 'strconv.ParseInt: parsing "": invalid syntax'),
    ("limit=1_0", 400, 'strconv.ParseInt: parsing "1_0": invalid syntax'),
    ("limit=99999999999999999999", 400, 'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("limit=%2B2", 200, None),
    ("watch=fal%C5%BFe", 200, None),  # strings.EqualFold: a list
])
def test_query_parameters_are_read_as_gos_parameter_codec_reads_them(setup, query, code, message):
    _, c = setup
    r = c.get(NS + "?" + query)
    assert r.status_code == code
    if message is not None:
        assert json.loads(r.data)["message"] == message
    else:
        assert json.loads(r.data)["kind"] == "ConfigMapList"


def test_a_patch_with_force_reports_every_fault_of_its_options(setup):
    _, c = setup
    r = c.patch(NS + "/a?force=false&dryRun=x&fieldValidation=bad", data="{}", content_type="application/merge-patch+json")
    assert r.status_code == 422
    st = json.loads(r.data)  # kube-apiserver v1.36.0's answer, word for word
    assert st["message"] == ('PatchOptions.meta.k8s.io "" is invalid: [force: Forbidden: may not be specified for non-apply '
                             'patch, dryRun: Unsupported value: ["x"]: supported values: "All", fieldValidation: Unsupported '
                             'value: "bad": supported values: "", "Ignore", "Strict", "Warn"]')
    assert [cause["field"] for cause in st["details"]["causes"]] == ["force", "dryRun", "fieldValidation"]


def test_delete_preconditions_from_the_query_are_held(setup):
    # Convert_url_Values_To_v1_DeleteOptions takes uid and resourceVersion as preconditions
    # (kube-apiserver: DELETE ?uid=nope is this 409); they were ignored here
    _, c = setup
    r = c.delete(NS + "/a?uid=nope")
    assert (r.status_code, json.loads(r.data)["message"]) == (
        409, 'Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (nope) does not match the UID in '
             'record (uid-1). The object might have been deleted and then recreated')
    assert c.delete(NS + "/a?resourceVersion=1").status_code == 409
    assert c.delete(NS + "/a?gracePeriodSeconds=").status_code == 400
    assert c.delete(NS + "/a?uid=uid-1&resourceVersion=2").status_code == 200


@pytest.mark.parametrize("query, code", [("export=true", 400), ("export=1", 400), ("export=yes", 400),
                                         ("export=false", 200), ("export=0", 200), ("export=FALSE", 200)])
def test_a_get_with_export_is_refused_as_gos_get_resource_does(setup, query, code):
    # handlers/get.go:91-102 (v1.36.0): export read as a bool (Convert_Slice_string_To_bool: all but "0"
    # and "false" is true), and a true one refused before the store is asked
    _, c = setup
    r = c.get(NS + "/a?" + query)
    assert r.status_code == code
    if code == 400:
        assert json.loads(r.data)["message"] == "the export parameter, deprecated since v1.14, is no longer supported"


@pytest.mark.parametrize("path", ["/a", "/missing"])
def test_a_get_at_a_resource_version_that_does_not_parse_is_the_storages_500(setup, path):
    # APIObjectVersioner.ParseResourceVersion (apiserver pkg/storage/api_object_versioner.go:90,
    # v1.36.0), called by the watch cache's Get before the lookup (pkg/storage/cacher/delegator.go:160), gives a storage
    # InvalidError: not an API status, so ErrorToAPIStatus answers 500 with its text and no reason
    _, c = setup
    r = c.get(NS + path + "?resourceVersion=abc")
    assert r.status_code == 500
    body = json.loads(r.data)
    assert body["message"] == 'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax'
    assert "reason" not in body and "details" not in body
    assert c.get(NS + "/a?resourceVersion=12").status_code == 200


def test_dry_run_answers_as_if_but_stores_nothing(setup):
    store, c = setup
    before = store.resource_version()
    r = c.post(NS + "?dryRun=All", json={"metadata": {"name": "dry"}})
    assert r.status_code == 201 and json.loads(r.data)["metadata"]["name"] == "dry"
    assert c.put(NS + "/a?dryRun=All", json={"metadata": {"name": "a"}, "data": {"x": "y"}}).status_code == 200
    assert c.delete(NS + "/b?dryRun=All").status_code == 200
    assert store.resource_version() == before
    assert names(c.get(NS)) == list("abcde")


@pytest.mark.parametrize("method, path, kind", [("post", NS, "CreateOptions"), ("put", NS + "/a", "UpdateOptions")])
def test_a_dry_run_other_than_all_is_422_on_the_options(setup, method, path, kind):
    store, c = setup
    r = getattr(c, method)(path + "?dryRun=Some", json={"metadata": {"name": "a"}})
    assert r.status_code == 422
    st = json.loads(r.data)
    assert st["message"] == f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"'
    assert st["details"] == {"group": "meta.k8s.io", "kind": kind, "causes": [
        {"reason": "FieldValueNotSupported", "message": 'Unsupported value: ["Some"]: supported values: "All"', "field": "dryRun"}]}


def test_field_manager_and_field_validation_are_checked(setup):
    _, c = setup
    r = c.post(NS + "?fieldManager=" + "m" * 129 + "&fieldValidation=Loud", json={"metadata": {"name": "z"}})
    assert r.status_code == 422
    assert json.loads(r.data)["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Too long: may not be more than 128 bytes, '
        'fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"]')


def test_delete_preconditions_are_a_409_when_they_do_not_hold(setup):
    # BeforeDelete holds them first (k8s.io/apiserver pkg/registry/rest/delete.go:83-90): a Conflict on
    # the object's kind, GroupResource{Resource: "ConfigMap"}, in its words (tests/parity/go-api.json,
    # delete-precondition-uid)
    _, c = setup
    r = c.delete(NS + "/a", json={"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": "other"}})
    assert r.status_code == 409
    st = json.loads(r.data)
    assert st["message"] == ('Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (other) does not match '
                             'the UID in record (uid-1). The object might have been deleted and then recreated')
    assert st["details"] == {"name": "a", "kind": "ConfigMap"}
    r = c.delete(NS + "/a", json={"preconditions": {"resourceVersion": "1"}})
    assert (r.status_code, json.loads(r.data)["message"]) == (
        409, 'Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (1) does not match the '
             'ResourceVersion in record (2). The object might have been modified')
    ok = c.delete(NS + "/a", json={"preconditions": {"uid": "uid-1"}})
    assert ok.status_code == 200
    assert json.loads(ok.data)["details"] == {"name": "a", "kind": "configmaps", "uid": "uid-1"}


def test_delete_options_are_checked(setup):
    _, c = setup
    r = c.delete(NS + "/a?propagationPolicy=Never")
    assert r.status_code == 422
    assert json.loads(r.data)["message"] == ('DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Never": '
                                             'supported values: "Foreground", "Background", "Orphan", "nil"')
    wrong = c.delete(NS + "/a", json={"kind": "Pod"})
    assert (wrong.status_code, json.loads(wrong.data)["message"]) == (
        400, 'no kind "Pod" is registered for version "meta.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"')


# what kube-apiserver v1.36.0 answered each body (reference/pair.py): delete.go:96-107 decodes it with
# the meta internal version codecs, the kind and version defaulting to meta.k8s.io/v1 DeleteOptions;
# a kind that scheme does not know in that version is runtime's notRegisteredErr (error.go:68), named
# after the scheme (pkg/runtime/scheme.go:111 in the reference build: runtime/scheme.py says why)
@pytest.mark.parametrize("body, message", [
    ('{"kind": "ConfigMap", "apiVersion": "v1"}', 'no kind "ConfigMap" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"'),
    ('{"kind": "ConfigMap"}', 'no kind "ConfigMap" is registered for version "meta.k8s.io/v1" in scheme "pkg/runtime/scheme.go:111"'),
    ('{"kind": "GetOptions", "apiVersion": "v1"}', 'no kind "GetOptions" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"'),
    ('{"kind": "ListOptions", "apiVersion": "meta.k8s.io/v1beta1"}',
     'no kind "ListOptions" is registered for version "meta.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111"'),
    ('{"kind": "ListOptions", "apiVersion": "meta.k8s.io/v1"}', "converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion"),
    ('{"kind": "Status", "apiVersion": "v1"}', "converting (v1.Status) to (v1.DeleteOptions): unknown conversion"),
    ('{"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1beta1"}',
     "converting (v1beta1.PartialObjectMetadataList) to (v1.DeleteOptions): unknown conversion"),
    ('{"kind": "DeleteOptions", "gracePeriodSeconds": "x"}',
     "json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64"),
    ("{not json", "couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string"),
])
def test_a_delete_body_that_is_not_delete_options_is_400_with_the_meta_schemes_text(setup, body, message):
    store, c = setup
    r = c.delete(NS + "/a", data=body, content_type="application/json")
    assert (r.status_code, json.loads(r.data)["message"]) == (400, message)
    assert store.get("ns", "a") is not None


def test_delete_options_of_another_version_delete(setup):
    # DeleteOptions is one of the meta scheme's unversioned kinds: any apiVersion reads it
    store, c = setup
    r = c.delete(NS + "/a", data='{"kind": "DeleteOptions", "apiVersion": "v2"}', content_type="application/json")
    assert r.status_code == 200


def test_deletecollection_deletes_what_is_listed_and_answers_the_list(setup):
    store, c = setup
    r = c.delete(NS)
    assert r.status_code == 200
    doc = json.loads(r.data)
    assert (doc["kind"], doc["apiVersion"]) == ("ConfigMapList", "v1")
    assert [i["metadata"]["name"] for i in doc["items"]] == list("abcde")
    assert names(c.get(NS)) == []


def test_a_watch_list_sends_the_state_then_the_bookmark_that_ends_it():
    def main():
        mux = PathRecorderMux("sim")
        sampleapi.install(mux)
        c = Client(with_warning_recorder(mux))
        for name in "abcde":
            c.post(NS, json={"metadata": {"name": name}})
        env = EnvironBuilder(path=NS, query_string="watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                                                   "&allowWatchBookmarks=true&timeoutSeconds=1").get_environ()
        body = b"".join(mux(env, lambda *a: None))  # the watch ends at its timeout, on the virtual clock
        return [json.loads(line) for line in body.splitlines()]

    events = Simulation().run(main)
    assert [(e["type"], e["object"]["metadata"].get("name")) for e in events] == [("ADDED", n) for n in "abcde"] + [("BOOKMARK", None)]
    assert events[-1]["object"]["metadata"] == {"resourceVersion": "6", "annotations": {"k8s.io/initial-events-end": "true"}}


def test_a_watch_from_no_version_is_a_watch_list():
    # SetListOptionsDefaults (WatchList is on in v1.36): kube-apiserver answers ?watch=1&allowWatchBookmarks=1
    # with the objects and the bookmark that ends them, as if the client had asked for its initial events
    def main():
        mux = PathRecorderMux("sim")
        sampleapi.install(mux)
        c = Client(with_warning_recorder(mux))
        rv = json.loads(c.post(NS, json={"metadata": {"name": "a"}}).data)["metadata"]["resourceVersion"]
        events = []
        for query in ("watch=1&allowWatchBookmarks=1&timeoutSeconds=1", "watch=1&resourceVersion=0&allowWatchBookmarks=1&timeoutSeconds=1",
                      f"watch=1&resourceVersion={rv}&allowWatchBookmarks=1&timeoutSeconds=1"):  # from a version: not defaulted
            body = b"".join(mux(EnvironBuilder(path=NS, query_string=query).get_environ(), lambda *a: None))
            events.append([json.loads(line)["type"] for line in body.splitlines()])
        return events

    assert Simulation().run(main) == [["ADDED", "BOOKMARK"], ["ADDED", "BOOKMARK"], []]


REVIEWS = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
REVIEW = {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1"}
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def test_a_self_subject_access_review_asks_the_servers_authorizer_about_the_requests_user():
    asked = []

    def decide(ctx, a):
        asked.append(a)
        return (authz.Decision.DENY, "no deleting here", None) if a.verb == "delete" else (authz.Decision.ALLOW, "", None)

    mux = PathRecorderMux("test")
    sampleapi.install(mux, authorizer=authz.AuthorizerFunc(decide))
    alice = request.UserInfo("alice", "uid-1", ("dev",), {})

    def as_alice(environ, start_response):
        request.with_user(environ, alice)
        return mux(environ, start_response)

    def review(spec: dict, **extra) -> tuple[int, dict]:
        r = Client(as_alice).post(ACCESS_REVIEWS, json={"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
                                                        "spec": spec, **extra})
        return r.status_code, json.loads(r.data)

    code, doc = review({"resourceAttributes": {"namespace": "ns", "verb": "delete", "resource": "configmaps", "name": "a"}})
    assert (code, doc["status"]) == (201, {"allowed": False, "denied": True, "reason": "no deleting here"})
    assert (asked[-1].user, asked[-1].verb, asked[-1].namespace, asked[-1].resource, asked[-1].name, asked[-1].resource_request) == (
        alice, "delete", "ns", "configmaps", "a", True)
    code, doc = review({"nonResourceAttributes": {"path": "/healthz", "verb": "get"}})
    assert (code, doc["status"]) == (201, {"allowed": True})
    assert (asked[-1].path, asked[-1].resource_request) == ("/healthz", False)
    # Go's validation: exactly one kind of attributes, and no metadata; the 422 is NewInvalid of
    # authorizationapi.Kind(selfSAR.Kind) (selfsubjectaccessreview/rest.go:77), the internal object's
    # Kind being empty: the group alone, no details.kind; the values as ErrorBody marshals them (a nil
    # pointer is null, the internal NonResourceAttributes has no json tags), as kube-apiserver answered
    code, doc = review({})
    assert code == 422 and doc["message"] == ('.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: null: '
                                              "exactly one of nonResourceAttributes or resourceAttributes must be specified")
    assert doc["details"] == {"group": "authorization.k8s.io", "causes": [
        {"reason": "FieldValueInvalid", "field": "spec.resourceAttributes",
         "message": "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"}]}
    code, doc = review({"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}})
    assert code == 422 and doc["message"] == ('.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
                                              '{"Path":"/x","Verb":"get"}: cannot be specified in combination with resourceAttributes')
    code, doc = review({"resourceAttributes": {"verb": "get"}}, metadata={"name": "mine"})
    assert code == 422 and doc["details"]["causes"][0]["field"] == "metadata"
    assert len(asked) == 2  # the invalid ones asked nobody
    # a plain function has no rule resolver: the rules review is not served
    assert Client(as_alice).post(RULES_REVIEWS, json={"spec": {"namespace": "ns"}}).status_code == 404


RULES_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews"


def test_a_self_subject_rules_review_lists_the_rule_resolvers_rules():
    mux = PathRecorderMux("test")
    sampleapi.install(mux, authorizer=authz.union(authz.new_always_deny_authorizer(), authz.new_always_allow_authorizer()))

    def as_alice(environ, start_response):
        request.with_user(environ, request.UserInfo("alice", "", (), {}))
        return mux(environ, start_response)

    def review(namespace: str) -> tuple[int, dict]:
        r = Client(as_alice).post(RULES_REVIEWS, json={"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1",
                                                       "spec": {"namespace": namespace}})
        return r.status_code, json.loads(r.data)

    code, doc = review("ns")
    # AlwaysDeny lists nothing, AlwaysAllow everything; Go answers an empty spec
    assert (code, doc["spec"], doc["status"]) == (201, {}, {
        "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False})
    code, doc = review("")
    assert (code, doc["message"]) == (400, "no namespace on request")


def test_a_self_subject_review_answers_the_requests_user():
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    user = request.UserInfo("alice", "uid-1", ("dev", "system:authenticated"), {"scopes": ("a", "b")})

    def with_user(environ, start_response):
        request.with_user(environ, user)
        return mux(environ, start_response)

    r = Client(with_user).post(REVIEWS, json=REVIEW)
    assert r.status_code == 201
    doc = json.loads(r.data)
    assert doc["status"] == {"userInfo": {"username": "alice", "uid": "uid-1", "groups": ["dev", "system:authenticated"],
                                          "extra": {"scopes": ["a", "b"]}}}
    assert set(doc["metadata"]) == {"creationTimestamp"}


def test_a_self_subject_review_without_a_user_is_gos_400():
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    r = Client(with_warning_recorder(mux)).post(REVIEWS, json=REVIEW)
    assert (r.status_code, json.loads(r.data)["message"]) == (400, "no user present on request")
    assert Client(with_warning_recorder(mux)).get(REVIEWS).status_code == 405  # create is its only verb


# what client-go v0.36's typed Delete sent with a uid precondition (reference/clientgo): its typed
# clients send protobuf unless told otherwise (rest.Request's UseProtobufAsDefault)
PROTOBUF_DELETE_OPTIONS = (b'k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12(\x12&\n$00000000-0000-0000-0000-000000000000'
                           b'\x1a\x00"\x00')


def test_a_protobuf_delete_options_body_is_read_with_the_serializer_its_content_type_names(setup):
    # delete.go reads the body with NegotiateInputSerializer's serializer: it was read as JSON here,
    # a 400 "couldn't get version/kind; json parse error: invalid character 'k'" for every client-go delete
    store, c = setup
    r = c.delete(NS + "/a", data=PROTOBUF_DELETE_OPTIONS, content_type="application/vnd.kubernetes.protobuf")
    doc = json.loads(r.data)
    assert (r.status_code, doc["reason"]) == (409, "Conflict")
    assert "the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match" in doc["message"]
    wrong_kind = PROTOBUF_DELETE_OPTIONS.replace(b"\x12\rDeleteOptions", b"\x12\rDeleteOptionz")
    r = c.delete(NS + "/a", data=wrong_kind, content_type="application/vnd.kubernetes.protobuf")
    assert (r.status_code, json.loads(r.data)["message"]) == (
        400, 'no kind "DeleteOptionz" is registered for version "v1" in scheme "pkg/runtime/scheme.go:111"')
    assert c.delete(NS + "/a", data=b"k8s\x00\n\x13\n\x02v1\x12\rDeleteOptions\x12\x00",
                    content_type="application/vnd.kubernetes.protobuf").status_code == 200


def test_a_yaml_delete_options_body_is_read_as_yaml(setup):
    store, c = setup
    r = c.delete(NS + "/a", data=b"kind: DeleteOptions\napiVersion: v1\npreconditions:\n  uid: nope\n", content_type="application/yaml")
    assert (r.status_code, json.loads(r.data)["reason"]) == (409, "Conflict")


def test_a_body_of_null_is_an_empty_object_as_go_decodes_it(setup):
    # kube-apiserver v1.36.0: null read into the kind's struct leaves it empty, so a create lacks its
    # name (422), a PUT's name is undeterminable (400), and a DELETE's options are the defaults (200)
    store, c = setup
    r = c.post(NS, data="null", content_type="application/json")
    assert (r.status_code, json.loads(r.data)["message"]) == (
        422, 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required')
    r = c.put(NS + "/a", data="null", content_type="application/json")
    assert (r.status_code, json.loads(r.data)["message"]) == (
        400, "the name of the object (a based on URL) was undeterminable: name must be provided")
    assert c.delete(NS + "/a", data="null", content_type="application/json").status_code == 200


@pytest.mark.parametrize("directive, warning", [
    ("Warn", '299 - "duplicate field \\"data\\"", 299 - "duplicate field \\"data.c\\""'), ("Ignore", None)])
def test_duplicate_maps_in_a_body_merge_as_go_decodes_them(setup, directive, warning):
    # encoding/json decodes a repeated object field into what the first filled: a map's keys merge
    _, c = setup
    r = c.post(NS + f"?fieldValidation={directive}", content_type="application/json",
               data='{"metadata":{"name":"dup"},"data":{"a":"1"},"data":{"b":"2"},"data":{"c":"3","c":"4"}}')
    warnings = ", ".join(r.headers.getlist("Warning")) or None
    assert (r.status_code, json.loads(r.data)["data"], warnings) == (201, {"a": "1", "b": "2", "c": "4"}, warning)


NONSENSE_AS = {"Accept": "application/json;as=Nonsense;g=x;v=y"}


def _answer_to_a_missing_object_asked_as_nothing_converts_to() -> tuple[int, str]:
    mux = PathRecorderMux("test")
    sampleapi.install(mux)
    r = Client(with_warning_recorder(mux)).get(NS + "/missing", headers=NONSENSE_AS)
    return r.status_code, json.loads(r.data)["message"]


def test_a_get_negotiates_before_it_reads_the_store():
    # get.go's getResourceHandler: NegotiateOutputMediaType (go-restful takes application/json with any
    # parameters; the handler refuses the conversion) comes before the getter, so a missing object is
    # 406, not 404, as kube-apiserver v1.36.0 answers
    assert _answer_to_a_missing_object_asked_as_nothing_converts_to() == (
        406, "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")


def test_a_get_that_read_the_store_first_would_fail_the_test_above(monkeypatch):
    # the order the test above holds: a handler that reads the store before it negotiates answers 404
    from genericserver.endpoints import installer
    from genericserver.endpoints.handlers import get, response

    def store_first(scope, req, start_response, namespace, name):
        result = scope.store.get(namespace, name)
        return response.transform_response_object(scope, req, start_response, 200, response.negotiate_output(scope, req.environ), result)

    monkeypatch.setitem(installer._ITEM, "GET", (store_first, "GET"))
    assert get.get_resource is not store_first
    assert _answer_to_a_missing_object_asked_as_nothing_converts_to()[0] == 404
