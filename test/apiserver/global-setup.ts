// Vitest global setup of the real-apiserver suite: builds (or finds cached) kube-apiserver and etcd once.

import { buildRealApiServer } from './harness.js';

/** Runs build.sh before any test file starts, so no test or hook timeout has to cover a first build. */
export default async function setup(): Promise<void> {
  const bin = await buildRealApiServer();
  process.stderr.write(`real-apiserver suite: binaries in ${bin}\n`);
}
