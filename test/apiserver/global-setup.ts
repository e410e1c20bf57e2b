// Vitest global setup of the real-apiserver suite: builds (or finds cached) kube-apiserver and etcd once,
// then starts the one etcd + kube-apiserver that the test files share (startRealApiServer() with the
// default flags hands them a handle on it; files that restart, compact or reconfigure keep their own).

import type { TestProject } from 'vitest/node';
import { buildRealApiServer, sharedApiServerInfo, startRealApiServer } from './harness.js';

/**
 * Runs build.sh before any test file starts, so no test or hook timeout has to cover a first build, and
 * starts the shared server unless `KI_SHARED_APISERVER=0` (then every file starts its own, as before).
 * Resolves with the teardown that stops the shared server after the last file.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const bin = await buildRealApiServer();
  process.stderr.write(`real-apiserver suite: binaries in ${bin}\n`);
  if (process.env.KI_SHARED_APISERVER === '0') {
    project.provide('sharedRealApiServer', undefined);
    return async () => {};
  }
  const started = performance.now();
  const server = await startRealApiServer({ private: true });
  project.provide('sharedRealApiServer', sharedApiServerInfo(server));
  process.stderr.write(`real-apiserver suite: shared kube-apiserver at ${server.server} (${Math.round(performance.now() - started)} ms to start), logs in ${server.dir}\n`);
  return () => server.stop();
}
