"""k8s.io/apiserver/pkg/endpoints/handlers/negotiation (package): which media type a request gets and sends."""
