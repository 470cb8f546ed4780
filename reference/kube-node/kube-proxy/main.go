// kube-proxy v1.36.0, built from the k8s.io/kubernetes module for the real node (reference/node.py).
// Only this entry point is ours; the proxy is the module's.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
