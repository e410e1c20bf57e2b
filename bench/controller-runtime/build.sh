#!/usr/bin/env bash
# Builds bench/controller-runtime (the operator phase's controller-runtime side) once per machine; prints the binary path.
#
# The binary lands in ${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}/bin/controller-runtime-bench-<controller-runtime version>-<hash>,
# keyed by the pinned controller-runtime release and a hash of the sources, so later runs reuse it. Progress goes to
# stderr; stdout is only the path. Needs Go >= 1.25 (the go.mod pins controller-runtime v0.25.2 with k8s.io/* v0.37.2); modules come from the Go module proxy only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "controller-runtime/build.sh: no Go toolchain on PATH (need Go >= 1.25)" >&2; exit 1; }

version=$(sed -n 's|^[[:space:]]*\(require \)\{0,1\}sigs\.k8s\.io/controller-runtime \(v[^ ]*\).*|\2|p' "$here/go.mod" | head -n 1)
hash=$(cat "$here/go.mod" "$here/go.sum" "$here/main.go" "$here/build.sh" | sha256sum | cut -c1-8)
cache=${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}
bin="$cache/bin/controller-runtime-bench-$version-$hash"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

mkdir -p "$cache/bin"
exec 9>"$cache/bin/.controller-runtime-bench.lock"
flock 9
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi

echo "controller-runtime/build.sh: building the controller-runtime $version benchmark program (first run on this machine only)" >&2
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$here" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$tmp" .)
mv "$tmp" "$bin"
trap - EXIT
echo "$bin"
