#!/usr/bin/env bash
# The scaffold leg: what `npx kube-informer init` gives a user, with the tarball the install leg packed
# (scripts/ci/install-leg.sh --keep-tarball DIR; this script never packs). For each project:
#   1. `npx kube-informer init` from the tarball into a temporary folder;
#   2. the tarball in place of the registry's kube-informer, `npm install` (the registry serves the rest);
#   3. `npm run typecheck`, `npm test` (the fake API server), `npm run manifests` (the CRD and the RBAC),
#      and `kubectl kustomize config/` when kubectl is on the machine;
# and for the self-managed project (the Dockerfile is the same for every project) the image: the Dockerfile's steps run as they are (scripts/ci/dockerfile-run.mjs,
# no docker or registry here), then the built entry point started as the image's non-root user against the
# fake API server (scripts/ci/scaffold-pod.mjs): /readyz, a reconcile, /metrics, SIGTERM within the grace.
# Prints each step's time. KEEP_SCRATCH=1 keeps the projects and the image folder (their path is printed).
#   scripts/ci/scaffold-leg.sh <kube-informer-x.y.z.tgz>
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: scripts/ci/scaffold-leg.sh <packed tarball>" >&2; exit 2; }
tarball=$(realpath "$1")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kube-informer-scaffold-XXXXXX")
if [ "${KEEP_SCRATCH:-}" = 1 ]; then echo "scaffold leg: keeping $scratch"; else trap 'rm -rf "$scratch"' EXIT; fi
leg_start=$SECONDS
step() { printf '   %4d s  %s\n' $((SECONDS - leg_start)) "$*"; }

# project NAME ARGS...: init, install, typecheck, test, manifests.
project() {
  local name=$1
  shift
  step "$name: npx kube-informer init $name $*"
  (cd "$scratch" && npx --yes --package "$tarball" -- kube-informer init "$name" "$@" >/dev/null)
  local dir=$scratch/$name
  (
    cd "$dir"
    npm pkg set "dependencies.kube-informer=file:$tarball"
    step "$name: npm install"
    npm install --no-audit --no-fund --loglevel=error
    step "$name: npm run typecheck"
    npm run --silent typecheck
    step "$name: npm test (fake API server)"
    npm test --silent -- --reporter=dot
    step "$name: npm run manifests"
    npm run --silent manifests
    for f in config/rbac/role.yaml $(sed -n 's/^  - \(crd\/.*\|webhook\/manifests.yaml\)$/\1/p' config/kustomization.yaml | sed 's#^#config/#'); do
      [ -s "$f" ] || { echo "scaffold leg: $name: npm run manifests did not write $f" >&2; exit 1; }
      echo "     $f: $(grep -c '^kind:' "$f") objects ($(grep '^kind:' "$f" | sort | uniq -c | awk '{print $3 "×" $1}' | paste -sd' '))"
    done
    if command -v kubectl >/dev/null; then
      step "$name: kubectl kustomize config/ (what kubectl apply -k config/ sends)"
      kubectl kustomize config/ >"$scratch/$name.yaml"
      echo "     $(grep -c '^kind:' "$scratch/$name.yaml") objects ($(grep '^kind:' "$scratch/$name.yaml" | sort | uniq -c | awk '{print $3 "×" $1}' | paste -sd' '))"
    fi
  )
}

# image NAME: the Dockerfile's steps, then the image's CMD as its USER against the fake API server.
image() {
  local dir=$scratch/$1 out=$scratch/image-$1
  step "$1: the Dockerfile's steps (scripts/ci/dockerfile-run.mjs)"
  node "$repo/scripts/ci/dockerfile-run.mjs" "$dir" "$out" | tee "$scratch/build-$1.log" | sed 's/^/     /'
  tail -n 1 "$scratch/build-$1.log" >"$out/stage.json"
  chmod -R a+rX "$out" && chmod a+x "$scratch"
  step "$1: the image's CMD as its USER, against the fake API server (scripts/ci/scaffold-pod.mjs)"
  cp "$repo/scripts/ci/scaffold-pod.mjs" "$dir/scaffold-pod.mjs"
  local grace
  grace=$(sed -n 's/^ *terminationGracePeriodSeconds: *\([0-9]*\).*/\1/p' "$dir/config/manager/deployment.yaml")
  (cd "$dir" && node scaffold-pod.mjs "$out/stage.json" "$grace") | sed 's/^/     /'
}

project demo-operator
project hooks-operator --webhooks validating,defaulting,conversion --certificates cert-manager
project self-operator --webhooks validating,conversion --certificates self-managed --kind Widget --group widgets.example.com
image self-operator   # its webhook server's own CA, the configurations it registers, the CRD it installs
step "scaffold leg: passed"
