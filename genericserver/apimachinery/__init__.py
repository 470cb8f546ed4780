"""k8s.io/apimachinery (package): the API machinery kubectl and client-go rely on.

Each module ports one Go file of k8s.io/apimachinery v1.36.0 (its docstring names it), except
:mod:`~genericserver.apimachinery.structs`, the Go structs of the served types written out as
data, which is what Go's reflection and struct tags hand to the serializers, the OpenAPI
generator and strategic merge patch.
"""
