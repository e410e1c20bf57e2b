// Command kube-controller-manager is the upstream controller manager, built from the pinned
// k8s.io/kubernetes release: the deployment, replicaset, endpointslice, garbage-collector and namespace
// controllers that make real churn for the real-apiserver suite (see docs/real-apiserver.md).
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as in the upstream binary

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // --logging-format=json
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics on /metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // the version metric
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
