// kube-apiserver v1.36.0, built from the k8s.io/kubernetes module: the real server whose answers
// genericserver's parity corpora record. Only this entry point is ours; the server is the module's.
package main

import (
	"os"

	_ "time/tzdata"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
