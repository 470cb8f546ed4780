"""Port of k8s.io/kube-openapi/pkg/builder/openapi.go (v0.0.0-20260317180543-43fb72c5454a, as Kubernetes v1.36.0 pins it): the OpenAPI v2 (Swagger 2.0) document.

``/openapi/v2`` is one Swagger 2.0 document for everything served: the same paths and
definitions as the v3 documents (:mod:`genericserver.openapi.builder3`), written the v2 way:
``definitions`` instead of ``components.schemas`` (``$ref: #/definitions/...``), a body
parameter instead of ``requestBody``, ``consumes``/``produces`` lists, query parameters with
their type inline, and each answer's ``schema`` directly under its code.
"""

from __future__ import annotations

import json
from typing import Any

from genericserver.openapi.builder3 import document as document3
from genericserver.registry.rest.rest import Resource


def _v2_refs(value: Any) -> Any:
    text = json.dumps(value).replace('"#/components/schemas/', '"#/definitions/')
    return json.loads(text)


def _operation(op: dict) -> dict:
    out: dict[str, Any] = {k: op[k] for k in ("description", "operationId", "tags") if k in op}
    params = []
    for p in op.get("parameters", []):
        q = {"uniqueItems": True, "type": p["schema"].get("type", "string"), "description": p["description"], "name": p["name"], "in": p["in"]}
        if p.get("required"):
            q["required"] = True
        params.append(q)
    if "requestBody" in op:
        content = op["requestBody"]["content"]
        out["consumes"] = list(content)
        params.insert(0, {"name": "body", "in": "body", "required": True, "schema": next(iter(content.values()))["schema"]})
    out["parameters"] = params
    responses = {}
    for code, answer in op["responses"].items():
        r = {"description": answer["description"]}
        if "content" in answer:
            out["produces"] = list(answer["content"])
            r["schema"] = next(iter(answer["content"].values()))["schema"]
        responses[code] = r
    out["responses"] = responses
    out["schemes"] = ["https"]
    for k in ("x-kubernetes-action", "x-kubernetes-group-version-kind"):
        out[k] = op[k]
    return out


def document(resources: list[Resource], title: str = "Kubernetes", version: str = "v1.36.0") -> dict:
    """The Swagger 2.0 document of ``resources`` (every group version at once)."""
    v3 = _v2_refs(document3(resources, title, version))
    paths: dict[str, Any] = {}
    for path, item in v3["paths"].items():
        out: dict[str, Any] = {}
        for verb, op in item.items():
            if verb == "parameters":
                out["parameters"] = [{"uniqueItems": True, "type": p["schema"].get("type", "string"), "description": p["description"],
                                      "name": p["name"], "in": p["in"], **({"required": True} if p.get("required") else {})}
                                     for p in op]
            else:
                out[verb] = _operation(op)
        paths[path] = out
    return {"swagger": "2.0", "info": v3["info"], "paths": paths, "definitions": v3["components"]["schemas"],
            "securityDefinitions": {"BearerToken": v3["components"]["securitySchemes"]["BearerToken"]},
            "security": [{"BearerToken": []}]}
