"""Go's k8s.io/apiserver/pkg/warning package: a request's warnings (package)."""
