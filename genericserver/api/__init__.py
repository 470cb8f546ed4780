"""k8s.io/api (package): the built-in kinds this server serves, as data (see genericserver.apimachinery.structs)."""
