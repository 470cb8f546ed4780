"""k8s.io/apimachinery/pkg/apis/meta/v1 (package): the meta.k8s.io/v1 types every kind shares."""
