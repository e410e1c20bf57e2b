#!/usr/bin/env bash
# Regenerates test/fixtures/sharding-vectors.json with kube-apiserver's own shard-selector code
# (k8s.io/apimachinery/pkg/sharding, the version in scripts/sharding/vectors/go.mod), so the client-side
# hash and matcher are checked bit-exactly against the server's. Needs Go and the Go module proxy.
set -euo pipefail
cd "$(dirname "$0")/vectors"
GOFLAGS=-mod=mod go run . > ../../../test/fixtures/sharding-vectors.json
echo "wrote test/fixtures/sharding-vectors.json"
