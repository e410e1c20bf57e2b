#!/usr/bin/env bash
# Builds Toxiproxy's server from test/toxiproxy (Go module proxy only) once per machine; prints the binary's path.
#
# Usage: scripts/toxiproxy/build.sh   -> e.g. ~/.cache/kube-informer/bin/toxiproxy-v2.5.0-1a2b3c4d/toxiproxy-server
#
# Same cache as scripts/apiserver/build.sh: ${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}/bin/<key>, the
# key naming the pinned release plus a hash of the module files. A few seconds from a warm module cache.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$(cd "$here/../../test/toxiproxy" && pwd)
command -v go >/dev/null 2>&1 || PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN=local
command -v go >/dev/null 2>&1 || { echo "toxiproxy/build.sh: no Go toolchain on PATH" >&2; exit 1; }

version=$(sed -n 's|^require github\.com/Shopify/toxiproxy/v2 \(v[^ ]*\).*|\1|p' "$module/go.mod")
[ -n "$version" ] || { echo "toxiproxy/build.sh: cannot read the pin from $module/go.mod" >&2; exit 1; }
hash=$(cd "$module" && { grep -v '^//' go.mod; cat go.sum; go env GOVERSION; } | sha256sum | cut -c1-8)
cache=${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}
bin="$cache/bin/toxiproxy-$version-$hash"
if [ -x "$bin/toxiproxy-server" ]; then echo "$bin/toxiproxy-server"; exit 0; fi

mkdir -p "$cache/bin"
exec 9>"$cache/bin/.build-toxiproxy.lock"
flock 9
if [ -x "$bin/toxiproxy-server" ]; then echo "$bin/toxiproxy-server"; exit 0; fi
tmp=$(mktemp -d "$cache/bin/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "toxiproxy/build.sh: building toxiproxy-server $version" >&2
(cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -buildvcs=false -ldflags "-s -w" -o "$tmp/toxiproxy-server" github.com/Shopify/toxiproxy/v2/cmd/server)
rm -rf "$bin"
mv "$tmp" "$bin"
trap - EXIT
echo "$bin/toxiproxy-server"
