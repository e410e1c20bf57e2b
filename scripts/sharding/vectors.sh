#!/usr/bin/env bash
# Regenerates test/fixtures/sharding-vectors.json with kube-apiserver's own shard-selector code
# (k8s.io/apimachinery/pkg/sharding for the hash and the matcher, k8s.io/apiserver/pkg/sharding for the
# parser; the versions in scripts/sharding/vectors/go.mod), so the client's hash, matcher and parser are
# checked against the server's (test/core/shard-selector.test.ts, test/sharding/selector.test.ts). Needs
# Go and the Go module proxy. Deterministic: the same versions write the same file.
set -euo pipefail
cd "$(dirname "$0")/vectors"
GOFLAGS=-mod=mod go run . > ../../../test/fixtures/sharding-vectors.json
echo "wrote test/fixtures/sharding-vectors.json"
