"""k8s.io/kubernetes/pkg/printers (package): the columns kube prints."""
