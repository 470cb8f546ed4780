// kube-controller-manager v1.36.0, built from the k8s.io/kubernetes module for the real node (reference/node.py).
// Only this entry point is ours; the controller manager is the module's.
package main

import (
	"os"
	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
