"""k8s.io/apimachinery/pkg/apis/meta/internalversion (package): the list options as the server reads them."""
