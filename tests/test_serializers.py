"""The serializers and content negotiation (apimachinery's json/protobuf serializers, apiserver's negotiate.go)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug.test import Client

from genericserver import sampleapi
from genericserver.api.core.v1.types import CONFIG_MAP, POD
from genericserver.apimachinery.runtime.serializer import codec_factory, protobuf
from genericserver.apimachinery.runtime.serializer import json as jsonserializer
from genericserver.endpoints.handlers.negotiation import negotiate
from genericserver.mux import PathRecorderMux
from genericserver.endpoints.filters.warning import with_warning_recorder  # the chain's: warnings as headers

NS = "/api/v1/namespaces/ns/configmaps"
PB = "application/vnd.kubernetes.protobuf"

NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
CONFIG_MAPS = st.builds(
    lambda name, data, labels, ts: {"kind": "ConfigMap", "apiVersion": "v1",
                                    "metadata": {"name": name, **({"creationTimestamp": ts} if ts else {}),
                                                 **({"labels": labels} if labels else {})},
                                    **({"data": data} if data else {})},
    NAMES, st.dictionaries(NAMES, st.text(max_size=5), max_size=3), st.dictionaries(NAMES, NAMES, max_size=2),
    st.sampled_from(["", "2026-01-02T03:04:05Z"]))


@given(CONFIG_MAPS)
def test_protobuf_round_trips_a_config_map(obj):
    assert protobuf.decode(protobuf.encode(obj)) == {**obj, "data": dict(sorted(obj.get("data", {}).items()))} if obj.get("data") else obj


def test_protobuf_writes_what_gos_generated_code_writes():
    # the bytes kubectl sends for metadata {name: a}: every non-pointer field present, even empty
    data = protobuf.encode({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}})
    assert data.hex() == ("6b387300" "0a0f0a0276311209436f6e6669674d6170"
                          "1213" "0a11" "0a0161" "1200" "1a00" "2200" "2a00" "3200" "3800" "4200"
                          "1a00" "2200")


def test_a_probe_s_handler_is_a_message_of_its_own_and_an_int_or_string_has_all_three_fields():
    # Go embeds ProbeHandler in Probe inline: in JSON its httpGet sits beside the delays, in protobuf
    # it is message 1 and the delays are fields 2 to 6 (written as fields 1 to 7 of the probe,
    # kubectl describe pod failed: "proto: wrong wireType = 2 for field InitialDelaySeconds");
    # IntOrString's generated marshaller writes type, intVal and strVal, the unused one empty
    probe = {"httpGet": {"path": "/readyz", "port": 8080}, "timeoutSeconds": 1, "periodSeconds": 1,
             "successThreshold": 1, "failureThreshold": 3}
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"},
           "spec": {"containers": [{"name": "app", "readinessProbe": probe}]}}
    port = "1207" "0800" "10903f" "1a00"  # type 0, intVal 8080, strVal ""
    http_get = "0a07" + b"/readyz".hex() + port + "1a00" "2200"  # path, port, host, scheme
    assert ("0a18" "1216" + http_get + "1000" "1801" "2001" "2801" "3003") in protobuf.encode(pod).hex()
    assert protobuf.decode(protobuf.encode(pod))["spec"]["containers"][0]["readinessProbe"] == probe


def test_a_quantity_is_a_string_in_json_and_a_message_in_protobuf():
    container = {"name": "app", "resources": {"limits": {"cpu": "250m"}, "requests": {"memory": "64Mi"}}}
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"}, "spec": {"containers": [container]}}
    data = protobuf.encode(pod).hex()
    # resources (8): limits (1) an entry cpu -> Quantity{string (1): 250m}; requests (2) memory -> 64Mi
    limits = "0a0d" "0a03" + b"cpu".hex() + "1206" "0a04" + b"250m".hex()
    requests = "1210" "0a06" + b"memory".hex() + "1206" "0a04" + b"64Mi".hex()
    assert ("4221" + limits + requests) in data
    assert protobuf.decode(bytes.fromhex(data))["spec"]["containers"][0]["resources"] == container["resources"]
    # a bare number is a quantity too (YAML's cpu: 1), as Go's UnmarshalJSON reads it
    _, obj, strict = jsonserializer.decode(json.dumps({**pod, "spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": 1}}}]}}).encode(), POD)
    assert obj["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}} and strict == []


@pytest.mark.parametrize("written, message", [
    ("lots", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("1K", "unable to parse quantity's suffix"), ("2e", "unable to parse quantity's suffix"),
])
def test_a_string_that_is_no_quantity_refuses_the_body_in_gos_words(written, message):
    # it was stored as written, and the cluster's scheduler could not add it up
    body = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"},
            "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": written}}}]}}
    with pytest.raises(jsonserializer.DecodeError) as err:
        jsonserializer.decode(json.dumps(body).encode(), POD)
    assert str(err.value) == message


@pytest.mark.parametrize("where, value, message", [
    ("port", True, "json: cannot unmarshal bool into Go struct field HTTPGetAction.spec.containers.readinessProbe.httpGet.port of type int32"),
    ("port", 1.5, "json: cannot unmarshal number 1.5 into Go struct field HTTPGetAction.spec.containers.readinessProbe.httpGet.port of type int32"),
    ("created", 5, "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"),
])
def test_a_type_with_its_own_unmarshaljson_reports_the_value_it_could_not_read(where, value, message):
    # IntOrString reads a non-string into its int32 and Time its text into a string: encoding/json
    # names that inner type, and the field where the outer decode was
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "a"},
           "spec": {"containers": [{"name": "app", "readinessProbe": {"httpGet": {"port": 80}}}]}}
    if where == "port":
        pod["spec"]["containers"][0]["readinessProbe"]["httpGet"]["port"] = value
    else:
        pod["metadata"]["creationTimestamp"] = value
    with pytest.raises(jsonserializer.DecodeError) as err:
        jsonserializer.decode(json.dumps(pod).encode(), POD)
    assert str(err.value) == message


@pytest.mark.parametrize("text, milli, units", [
    ("50m", 50, 1), ("2", 2000, 2), ("1.5", 1500, 2), (".5", 500, 1), ("64Mi", 64 * 2 ** 20 * 1000, 64 * 2 ** 20),
    ("1e3", 1_000_000, 1000), ("100k", 100_000_000, 100_000), ("1E", 10 ** 21, 10 ** 18), (" 3 ".strip(), 3000, 3),
])
def test_quantities_read_as_go_reads_them_rounding_up(text, milli, units):
    from genericserver.apimachinery.api.quantity import milli_value, value
    assert (milli_value(text), value(text)) == (milli, units)


@pytest.mark.parametrize("data, message", [
    (b"{}", "provided data does not appear to be a protobuf message, expected prefix [107, 56, 115, 0]"),
    (b"k8s\x00" + bytes.fromhex("0a0c0a0276311206536563726574"), 'no kind "Secret" is registered for version "v1"'),
])
def test_protobuf_errors(data, message):
    with pytest.raises(protobuf.ProtobufError) as err:
        protobuf.decode(data)
    assert str(err.value) == message


def test_json_escapes_html_as_go_does():
    assert jsonserializer.encode({"a": "<b>&"}) == b'{"a":"\\u003cb\\u003e\\u0026"}\n'


@settings(max_examples=50)
@given(CONFIG_MAPS.map(lambda cm: {**cm, "data": dict(reversed(list(cm.get("data", {}).items())))}),
       st.sampled_from(["object", "list", "watch-event", "table-row"]))
def test_json_writes_a_maps_keys_sorted_and_a_structs_fields_in_order(cm, where):
    # encoding/json sorts a map's keys (go/src/encoding/json/encode.go:795, mapEncoder.encode) and
    # writes a struct's fields in the struct's order: ConfigMap.data and ObjectMeta.labels are maps
    wrapped = {"object": cm,
               "list": {"kind": "ConfigMapList", "apiVersion": "v1", "metadata": {}, "items": [cm]},
               "watch-event": {"type": "ADDED", "object": cm},
               "table-row": {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                             "rows": [{"cells": [], "object": {"kind": "PartialObjectMetadata", "metadata": cm["metadata"]}}]}}[where]
    text = jsonserializer.encode(wrapped).decode()
    assert json.loads(text) == wrapped
    written = json.loads(text)
    back = {"object": lambda d: d, "list": lambda d: d["items"][0], "watch-event": lambda d: d["object"],
            "table-row": lambda d: d["rows"][0]["object"]}[where](written)
    assert list(back["metadata"].get("labels", {})) == sorted(cm["metadata"].get("labels", {}))
    assert list(back["metadata"]) == list(cm["metadata"])  # a struct: its own order, not sorted
    if where != "table-row":
        assert list(back.get("data", {})) == sorted(cm.get("data", {}))
        assert list(back) == list(cm)


def test_json_writes_the_patched_config_map_as_kube_apiserver_does():
    # tests/parity/go-api.json, patch-dry-run: the data map comes out sorted, whatever order the patches left it in
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "hw-b", "labels": {"z": "1", "app": "x"}},
          "data": {"x": "z", "m": "1", "s": "1", "j": "1", "d": "1", "ap": "1"}}
    assert jsonserializer.encode(cm) == (b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"hw-b","labels":{"app":"x","z":"1"}},'
                                         b'"data":{"ap":"1","d":"1","j":"1","m":"1","s":"1","x":"z"}}\n')


def test_strict_decoding_reports_unknown_and_duplicate_fields():
    _, obj, strict = jsonserializer.decode(b'{"metadata":{"name":"a","x":1},"data":{},"data":{"k":"v"},"spec":1}', CONFIG_MAP)
    assert obj == {"metadata": {"name": "a"}, "data": {"k": "v"}}
    assert sorted(strict) == ['duplicate field "data"', 'unknown field "metadata.x"', 'unknown field "spec"']


@pytest.mark.parametrize("body, want", [
    # each as kube-apiserver v1.36.0 answered the same create live (strict decoding error: ...):
    # sigs.k8s.io/json meets them in one pass over the document, each in its place
    (b'{"metadata":{"foo":1,"name":"v4"},"data":{"k":"v","k":"w"},"bar":2,"data":{"q":"1"}}',
     ['unknown field "metadata.foo"', 'duplicate field "data.k"', 'unknown field "bar"', 'duplicate field "data"']),
    (b'{"metadata":{"name":"v2","foo":1,"name":"v2"}}', ['unknown field "metadata.foo"', 'duplicate field "metadata.name"']),
    # an unknown key met again is still one unknown field, no duplicate
    (b'{"metadata":{"name":"v5"},"bar":1,"bar":2,"data":{"k":"v"},"data":{"k":"w"}}',
     ['unknown field "bar"', 'duplicate field "data"']),
    # a list's item by its index
    (b'{"metadata":{"name":"w8","ownerReferences":[{"foo":1}]}}', ['unknown field "metadata.ownerReferences[0].foo"']),
])
def test_strict_errors_come_in_the_order_go_s_decoder_meets_them(body, want):
    assert jsonserializer.decode(body, CONFIG_MAP)[2] == want


@pytest.mark.parametrize("body, error", [
    # kube-apiserver v1.36.0's answers (the generated corpus): encoding/json keeps the first type
    # error it meets in the document and reads on
    (b'{"metadata":{"name":"a"},"data":{"a":"","c.d":1},"immutable":"yes"}',
     "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
    (b'{"metadata":{"name":"a"},"immutable":"yes","data":{"a":"","c.d":1}}',
     "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"),
    (b'{"metadata":{"name":"a"},"binaryData":{"b":"not base64!"},"immutable":"yes"}', "illegal base64 data at input byte 3"),
])
def test_the_first_error_in_the_document_is_the_decode_s(body, error):
    with pytest.raises(jsonserializer.DecodeError, match=f"^{error}$"):
        jsonserializer.decode(body, CONFIG_MAP)


@pytest.mark.parametrize("accept, want, convert", [
    ("", "application/json", None),
    ("application/yaml", "application/yaml", None),
    ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", "application/json", "Table"),
    ("text/html;q=0.9,application/vnd.kubernetes.protobuf", PB, None),
    ("*/*", "application/json", None),
])
def test_output_negotiation(accept, want, convert):
    opts = negotiate.negotiate_media_type_options(accept, codec_factory.SUPPORTED, _TableAllowed())
    assert opts.accepted.media_type == want
    assert (opts.convert.kind if opts.convert else None) == convert


class _TableAllowed(negotiate.DefaultEndpointRestrictions):
    def allows_media_type_transform(self, mime_type, mime_subtype, gvk):
        return gvk is None or gvk.kind == "Table"


@pytest.fixture
def client():
    mux = PathRecorderMux("test")
    store = sampleapi.install(mux)
    return store, Client(with_warning_recorder(mux))


def test_406_and_415_with_gos_texts(client):
    store, c = client
    # go-restful refuses a type no route produces before the handler negotiates (tests/test_go_restful.py);
    # the handler's own 406 is for a type go-restful lets through (a conversion nothing serves)
    r = c.get(NS, headers={"Accept": "application/json;as=Nonsense;g=x;v=y"})
    assert (r.status_code, json.loads(r.data)["message"]) == (
        406, "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
    r = c.post(NS, data=b"x", content_type="text/plain")
    assert (r.status_code, json.loads(r.data)["message"]) == (
        415, "the body of the request was in an unknown format - accepted media types include: "
             "application/json, application/yaml, application/vnd.kubernetes.protobuf")
    assert store.resource_version() == 1


def test_a_protobuf_envelope_of_the_wrong_kind_is_400_and_stores_nothing(client):
    store, c = client
    body = b"k8s\x00" + bytes.fromhex("0a0c0a0276311206536563726574") + bytes.fromhex("1200")
    r = c.post(NS, data=body, content_type=PB)
    assert r.status_code == 400
    assert json.loads(r.data)["message"] == ('Secret in version "v1" cannot be handled as a ConfigMap: no kind "Secret" is '
                                             'registered for version "v1" in scheme "pkg/runtime/scheme.go:111"')
    assert store.resource_version() == 1


def test_protobuf_and_yaml_in_and_out(client):
    _, c = client
    body = protobuf.encode({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "p"}, "data": {"k": "v"}})
    r = c.post(NS, data=body, content_type=PB, headers={"Accept": PB})
    assert (r.status_code, r.headers["Content-Type"]) == (201, PB)
    assert protobuf.decode(r.data)["data"] == {"k": "v"}
    y = c.get(NS + "/p", headers={"Accept": "application/yaml"})
    assert y.headers["Content-Type"] == "application/yaml" and b"kind: ConfigMap\n" in y.data
    made = c.post(NS, data=b"kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: yy\n", content_type="application/yaml")
    assert made.status_code == 201
    # YAML 1.1 (yaml.v2): a bare y is true, no name; kube-apiserver v1.36.0 answers the same 400
    bool_name = c.post(NS, data=b"kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: y\n", content_type="application/yaml")
    assert (bool_name.status_code, json.loads(bool_name.data)["message"]) == (
        400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field '
             "ObjectMeta.metadata.name of type string")


def test_an_error_to_a_client_that_accepts_protobuf_is_a_protobuf_status(client):
    # kube-apiserver's answer to kubectl's second `create configmap k-demo` (tests/parity/go-api.json):
    # ErrorNegotiated writes the Status with the negotiated serializer (apiserver
    # pkg/endpoints/handlers/responsewriters/writers.go:ErrorNegotiated), and metav1.Status is
    # registered for protobuf as the unversioned v1 kind (apimachinery pkg/apis/meta/v1/register.go:75)
    _, c = client
    ns = "/api/v1/namespaces/default/configmaps"
    body = protobuf.encode({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "k-demo"}, "data": {"a": "1"}})
    accept = {"Accept": PB + ",application/json"}
    assert c.post(ns, data=body, content_type=PB, headers=accept).status_code == 201
    r = c.post(ns, data=body, content_type=PB, headers=accept)
    assert (r.status_code, r.headers["Content-Type"]) == (409, PB)
    assert r.data.hex() == ("6b3873000a0c0a027631120653746174757312630a060a0012001a0012074661696c7572651a22636f6e6669676d61"
                            "707320226b2d64656d6f2220616c726561647920657869737473220d416c72656164794578697374732a1a0a066b2d"
                            "64656d6f12001a0a636f6e6669676d617073280032003099031a002200")


def test_protobuf_reads_an_empty_message_as_go_keeps_it():
    # kubectl auth can-i's SelfSubjectAccessReview (tests/parity/go-api.json) sends an empty ObjectMeta:
    # Go's struct holds it, and encoding/json writes "metadata":{} (an empty struct is not omitted)
    import genericserver.registry.reviews  # noqa: F401 - registers the review kinds

    sent = bytes.fromhex("6b3873000a320a17617574686f72697a6174696f6e2e6b38732e696f2f7631121753656c665375626a65637441"
                         "636365737352657669657712450a100a0012001a0022002a0032003800420012270a250a0764656661756c7412"
                         "066372656174651a0022002a0a636f6e6669676d61707332003a001a08080012001a0020001a002200")
    assert protobuf.decode(sent) == {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
                                     "spec": {"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "configmaps"}},
                                     "status": {"allowed": False}}


def test_a_table_answers_kubes_columns_and_a_watch_sends_them_once(client):
    _, c = client
    c.post(NS, json={"metadata": {"name": "t"}, "data": {"a": "1", "b": "2"}})
    t = json.loads(c.get(NS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).data)
    assert (t["kind"], t["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [col["name"] for col in t["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert t["rows"][0]["cells"][:2] == ["t", 2]
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    none = json.loads(c.get(NS + "?includeObject=None", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).data)
    assert none["rows"][0]["object"] is None  # the row's RawExtension left empty: kube-apiserver writes null
    bad = c.get(NS + "?includeObject=All", headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert bad.status_code == 400


def test_a_protobuf_watch_frame_is_the_bare_watch_event_and_only_its_object_is_an_envelope():
    # client-go's typed client with ContentType protobuf read "watch closed without event" when each
    # frame was itself a k8s\x00 envelope: Go's codec factory gives protobuf's stream the raw
    # serializer (apimachinery pkg/runtime/serializer/codec_factory.go, protobuf.NewRawSerializer),
    # and watch.go's embedded encoder writes the object with the ordinary one
    from werkzeug.test import EnvironBuilder

    from genericserver.testing.sim import Simulation

    def main():
        mux = PathRecorderMux("sim")
        sampleapi.install(mux)
        Client(with_warning_recorder(mux)).post(NS, json={"metadata": {"name": "w"}, "data": {"k": "v"}})
        env = EnvironBuilder(path=NS, query_string="watch=1&timeoutSeconds=1", headers={"Accept": PB}).get_environ()
        heads = []
        body = b"".join(mux(env, lambda status, headers, *a: heads.append(dict(headers))))
        return heads[0]["Content-Type"], body

    content_type, stream = Simulation().run(main)
    assert content_type == PB + ";stream=watch"
    size = int.from_bytes(stream[:4], "big")
    assert len(stream) == 4 + size  # one event, the ADDED of the one object
    frame = stream[4:]
    # field 1 (type) "ADDED", then field 2 (object: a RawExtension, its field 1 the raw bytes)
    assert frame[:7] == b"\x0a\x05ADDED" and frame[7] == 0x12
    inner = frame[frame.index(b"k8s\x00"):]
    assert protobuf.decode(inner)["data"] == {"k": "v"}
    assert protobuf.decode_watch_events(stream) == [("ADDED", protobuf.decode(inner))]


def test_partial_object_metadata_lists_have_typed_items_and_the_wrong_shape_is_406(client):
    # response.go's asPartialObjectMetadataList: each item a PartialObjectMetadata with its kind and
    # apiVersion (they had neither here); asking for one object's form of a list, or the list's of
    # one object, is a 406 naming the storage's internal type
    _, c = client
    c.post(NS, json={"metadata": {"name": "p", "labels": {"x": "y"}}, "data": {"a": "1"}})
    pom = "application/json;as=PartialObjectMetadata{};g=meta.k8s.io;v={}"
    doc = json.loads(c.get(NS, headers={"Accept": pom.format("List", "v1")}).data)
    assert (doc["kind"], doc["apiVersion"]) == ("PartialObjectMetadataList", "meta.k8s.io/v1")
    assert [(i["kind"], i["apiVersion"], i["metadata"]["labels"]) for i in doc["items"]] == [
        ("PartialObjectMetadata", "meta.k8s.io/v1", {"x": "y"})]
    beta = json.loads(c.get(NS, headers={"Accept": pom.format("List", "v1beta1")}).data)
    assert beta["items"][0]["apiVersion"] == "meta.k8s.io/v1beta1"
    one = c.get(NS + "/p", headers={"Accept": pom.format("List", "v1")})
    assert (one.status_code, json.loads(one.data)["message"]) == (
        406, "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)")
    many = c.get(NS, headers={"Accept": pom.format("", "v1")})
    assert (many.status_code, json.loads(many.data)["message"]) == (
        406, "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)")


def test_yaml_reads_yaml_1_1_booleans_and_reports_repeated_keys_as_yaml_v2_does(client):
    # kube-apiserver v1.36.0 (sigs.k8s.io/yaml over yaml.v2): y, on, N, off and yes are booleans, so
    # the keys repeat; each repeat a warning under Warn, one strict error under Strict (400)
    _, c = client
    body = 'metadata:\n  name: y1\ndata:\n  y: "1"\n  on: "2"\n  N: "3"\n  off: "4"\n  yes: "5"\n'
    r = c.post(NS, data=body, content_type="application/yaml")
    assert (r.status_code, json.loads(r.data)["data"]) == (201, {"false": "4", "true": "5"})
    assert r.headers.getlist("Warning") == ['299 - "line 5: key true already set in map"', '299 - "line 7: key false already set in map"',
                                            '299 - "line 8: key true already set in map"']
    r = c.post(NS + "?fieldValidation=Strict", data='metadata:\n  name: y2\ndata:\n  a: "1"\n  a: "2"\n', content_type="application/yaml")
    assert (r.status_code, json.loads(r.data)["message"]) == (
        400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:\n'
             '  line 5: key "a" already set in map')
    r = c.post(NS + "?fieldValidation=Ignore", data='metadata:\n  name: y3\ndata:\n  a: "1"\n  a: "2"\n', content_type="application/yaml")
    assert (r.status_code, json.loads(r.data)["data"], r.headers.get("Warning")) == (201, {"a": "2"}, None)


def test_partial_object_metadata_is_written_in_protobuf_to_a_client_that_asks(client):
    # kube-apiserver v1.36.0 answers as=PartialObjectMetadata[List] in protobuf (metav1 has messages for
    # both); this server answered JSON. A Table stays a 406 in protobuf, in both.
    _, c = client
    c.post(NS, json={"metadata": {"name": "p", "labels": {"x": "y"}}})
    one = c.get(NS + "/p", headers={"Accept": PB + ";as=PartialObjectMetadata;g=meta.k8s.io;v=v1"})
    assert (one.status_code, one.headers["Content-Type"]) == (200, PB)
    assert protobuf.decode(one.data)["metadata"]["labels"] == {"x": "y"}
    many = c.get(NS, headers={"Accept": PB + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"})
    doc = protobuf.decode(many.data)
    assert (many.headers["Content-Type"], doc["kind"], doc["items"][0]["metadata"]["name"]) == (PB, "PartialObjectMetadataList", "p")
    assert c.get(NS, headers={"Accept": PB + ";as=Table;g=meta.k8s.io;v=v1"}).status_code == 406
