#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from test/apiserver (Go module proxy only) once per machine; prints the bin dir.
#
# Usage: scripts/apiserver/build.sh            -> prints e.g. ~/.cache/kube-informer/bin/k8s-v1.35.4-etcd-v3.6.5-1a2b3c4d
#
# The binaries land in ${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}/bin/<key>, where <key> names the
# pinned Kubernetes and etcd releases plus a hash of the module files, so a second run (or a CI cache
# restore of that directory) reuses them and a change to the pins builds a fresh pair. Progress goes to
# stderr; stdout is only the directory. Concurrent callers wait on a lock instead of building twice.
# Needs Go >= 1.25 on PATH (or in /usr/local/go/bin); nothing but the module proxy is contacted.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$(cd "$here/../../test/apiserver" && pwd)
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN=local   # build with the Go on this machine, never download another toolchain
command -v go >/dev/null 2>&1 || { echo "build.sh: no Go toolchain on PATH (need Go >= 1.25)" >&2; exit 1; }

# The one place the versions live is go.mod; read them from there.
pinned() { sed -n "s|^[[:space:]]*\(require \)\{0,1\}$1 \(v[^ ]*\).*|\2|p" "$module/go.mod" | head -n 1; }
kube_version=$(pinned 'k8s\.io/kubernetes')
etcd_version=$(pinned 'go\.etcd\.io/etcd/server/v3')
[ -n "$kube_version" ] && [ -n "$etcd_version" ] || { echo "build.sh: cannot read the pins from $module/go.mod" >&2; exit 1; }

# Version stamps as kube's own build sets them, so /version answers with the real release.
minor=${kube_version#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

# The cache key: the pins, plus a hash of everything else that changes the binaries (comments aside).
hash=$(cd "$module" && { grep -v '^//' go.mod; cat go.sum cmd/*/main.go; go env GOVERSION; echo "$ldflags"; } |
  sha256sum | cut -c1-8)
cache=${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}
bin="$cache/bin/k8s-$kube_version-etcd-$etcd_version-$hash"

have() { [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/etcd" ]; }
if have; then echo "$bin"; exit 0; fi

mkdir -p "$cache/bin"
exec 9>"$cache/bin/.build.lock"
flock 9
if have; then echo "$bin"; exit 0; fi   # another caller built it while we waited

tmp=$(mktemp -d "$cache/bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "build.sh: building kube-apiserver and kube-controller-manager $kube_version, and etcd $etcd_version (first run on this machine only)" >&2
start=$SECONDS
(
  cd "$module"
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly
  go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp/" ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/etcd
)
echo "build.sh: built in $((SECONDS - start))s" >&2
"$tmp/kube-apiserver" --version >&2
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"
