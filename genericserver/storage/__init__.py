"""k8s.io/apiserver/pkg/storage (package): what the generic store asks of its storage (continue tokens, list rules, selection)."""
