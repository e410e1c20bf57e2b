// Command etcd is the upstream etcd server, built from the go.etcd.io/etcd/server/v3 release that the
// pinned Kubernetes release depends on (Debian's etcd-server is 3.4; see docs/real-apiserver.md).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
