"""The YAML answers are what sigs.k8s.io/yaml v1.6.0's JSONToYAML writes through go.yaml.in/yaml/v2
v2.4.3 (genericserver/apimachinery/runtime/serializer/goyaml.py; no Go twin in the Kubernetes tree).

Each expected text below was written by that Go code (a ten-line program calling yaml.JSONToYAML
on the case's JSON, built from the Go module cache), and the corpus's YAML exchanges are kube-apiserver's.
"""

from __future__ import annotations

import json

import pytest

from genericserver.apimachinery.runtime.serializer import goyaml
from genericserver.apimachinery.runtime.serializer import json as jsonserializer

# (the JSON, what JSONToYAML wrote)
RECORDED_FROM_GO = [
    ({"data": {"a": "1", "b": "yes", "c": "", "d": "hello world", "t": "2026-11-29T07:52:52Z", "u": "b44764e6-c5a1-4bc4-9b99-c7db7b799e42"}},
     "data:\n  a: \"1\"\n  b: \"yes\"\n  c: \"\"\n  d: hello world\n  t: \"2026-11-29T07:52:52Z\"\n  u: b44764e6-c5a1-4bc4-9b99-c7db7b799e42\n"),
    ({"k10": 1, "k9": 2, "a2": 3, "a10": 4, "B": 5, "_": 6, "n": None, "y": True, "Z": False},
     "_: 6\nB: 5\nZ: false\na2: 3\na10: 4\nk9: 2\nk10: 1\n\"n\": null\n\"y\": true\n"),
    ({"s": "- x", "c": "a: b", "l": " lead", "tr": "trail ", "h": "#x", "q": "it's", "dq": "say \"hi\"", "star": "*x", "pct": "%x"},
     "c: 'a: b'\ndq: say \"hi\"\nh: '#x'\nl: ' lead'\npct: '%x'\nq: it's\ns: '- x'\nstar: '*x'\ntr: 'trail '\n"),
    ({"m": "multi\nline\n", "m2": "no newline\nat end", "m3": "kept\n\n", "m4": "\n", "m5": " indented\nx"},
     "m: |\n  multi\n  line\nm2: |-\n  no newline\n  at end\nm3: |+\n  kept\n\nm4: |2+\n\nm5: |2-\n   indented\n  x\n"),
    ({"i": 3, "neg": -5, "f": 1.5, "big": 1234567.5, "small": 1e-07, "huge": 1e+21, "whole": 3.0},
     "big: 1.2345675e+06\nf: 1.5\nhuge: 1e+21\ni: 3\nneg: -5\nsmall: 1e-07\nwhole: 3\n"),
    ({"": "empty key", "e": [], "o": {}, "nested": [{"a": 1}, [1, 2], "x"]},
     "\"\": empty key\ne: []\nnested:\n- a: 1\n- - 1\n  - 2\n- x\no: {}\n"),
    ({"long": "word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word end", "longq": "1 word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word ", "tab": "a\tb", "emoji": "hi \ud83d\ude00", "nbsp": "a\u00a0b", "acc": "\u00e9"},
     "acc: é\nemoji: \"hi \\U0001F600\"\nlong: word word word word word word word word word word word word word word word word\n  word word word word word word word word word word word word word word end\nlongq: '1 word word word word word word word word word word word word word word word\n  word word word word word word word word word word word word word word word '\nnbsp: a b\ntab: \"a\\tb\"\n"),
    ({"f:data": {".": {}, "f:a": {}}, "ka": "0x1F", "kb": "017", "kc": "08", "kd": "1_000", "ke": ".5", "kf": "12:30", "kg": "~", "kh": "<<", "ki": "---", "kj": "2026-1-2", "kk": "-.inf", "kl": "0b101", "km": "1e3", "kn": ".5_0", "ko": "NULL"},
     "f:data:\n  .: {}\n  f:a: {}\nka: \"0x1F\"\nkb: \"017\"\nkc: \"08\"\nkd: \"1_000\"\nke: \".5\"\nkf: \"12:30\"\nkg: \"~\"\nkh: \u003c\u003c\nki: '---'\nkj: \"2026-1-2\"\nkk: \"-.inf\"\nkl: \"0b101\"\nkm: \"1e3\"\nkn: \".5_0\"\nko: \"NULL\"\n"),
    ({"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx": 1, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy": 2, "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9": 3, "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9": 4},
     "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: 1\n? yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n: 2\néééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé: 3\n? ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé\n: 4\n"),
]


@pytest.mark.parametrize("doc, want", RECORDED_FROM_GO, ids=range(len(RECORDED_FROM_GO)))
def test_json_to_yaml_writes_what_yaml_v2_writes(doc, want):
    # quoting: encode.go:300-335 (stringv, resolve.go:96 resolve); scalar analysis and layout:
    # emitterc.go:984 (yaml_emitter_analyze_scalar); key order: sorter.go:12 (keyList.Less)
    assert goyaml.json_to_yaml(json.loads(json.dumps(doc))) == want


def test_the_yaml_serializer_answers_kube_apiservers_bytes():
    # get-yaml in tests/parity/go-api.json, its managedFields left out: strings double-quoted where
    # they would not read back as strings, as yaml.v2 quotes them (encode.go:326-333)
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "hw-a", "namespace": "default",
          "uid": "b44764e6-c5a1-4bc4-9b99-c7db7b799e42", "resourceVersion": "54", "creationTimestamp": "2026-11-29T07:52:52Z",
          "labels": {"app": "web"}}, "data": {"a": "1"}}
    assert jsonserializer.encode_yaml(cm) == (
        b'apiVersion: v1\ndata:\n  a: "1"\nkind: ConfigMap\nmetadata:\n  creationTimestamp: "2026-11-29T07:52:52Z"\n'
        b'  labels:\n    app: web\n  name: hw-a\n  namespace: default\n  resourceVersion: "54"\n'
        b'  uid: b44764e6-c5a1-4bc4-9b99-c7db7b799e42\n')


@pytest.mark.parametrize("s, tag", [("1", "int"), ("0x1F", "int"), ("017", "int"), ("08", "float"), ("1_000", "int"),
                                    (".5", "float"), (".5_0", "float"), ("._5", "str"), ("1e400", "str"), ("yes", "bool"),
                                    ("Off", "bool"), ("", "null"), ("~", "null"), ("<<", "str"), ("2026-1-2", "timestamp"),
                                    ("2026-02-30", "str"), ("2026-11-29T07:52:52Z", "timestamp"), ("2026-11-29T07:52:52", "str"),
                                    ("2026-11-29 07:52:52", "timestamp"), ("12:30", "str"), ("-", "str"), ("-.inf", "float")])
def test_resolve_reads_a_plain_scalar_as_yaml_v2_does(s, tag):
    assert goyaml.resolve(s) == tag


def test_a_non_transitive_key_order_is_insertion_sorted_as_gos_pdqsort_does_for_a_short_map():
    # keyList.Less: 017 < 0x1F (a letter after a digit), 0x1F < 12:30 (0 < 12), 12:30 < 017 (12 < 17)
    assert goyaml.key_less("017", "0x1F") and goyaml.key_less("0x1F", "12:30") and goyaml.key_less("12:30", "017")
    # each pair in order, so insertion sort leaves them; Go starts from its map's random iteration order,
    # so such a map's YAML is not the same twice there either
    assert goyaml.sorted_keys(["12:30", "017", "0x1F"]) == ["12:30", "017", "0x1F"]
    assert goyaml.sorted_keys(["0x1F", "017"]) == ["017", "0x1F"]
    assert goyaml.sorted_keys(["a10", "a9", "B", "_", "a09"]) == ["_", "B", "a9", "a09", "a10"]  # equal numbers: the shorter run first
