// The configmapset operator in a pod, on the real kube-apiserver in RBAC mode: a ServiceAccount bound only to the rules its Manager generates, a token from the TokenRequest API in the mount kubelet writes, rotation, SIGTERM handover.
//
// One private server for every run (its audit log is the oracle of what the operator did). The
// operator runs as a separate process started "as a kubelet would": examples/configmapset/in-cluster.ts
// with KUBERNETES_SERVICE_HOST/PORT and the mount's root, no kubeconfig.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installCrd } from '../../examples/configmapset/crd.js';
import { AuditLog } from './audit.js';
import { startRealApiServer, type RealApiServer } from './harness.js';
import { servingCertificate, ServiceAccountIdentity } from './service-account.js';

describe('a ServiceAccount of the real kube-apiserver, as a pod has one', () => {
  let server: RealApiServer;
  let dir: string;
  let audit: AuditLog;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ki-in-cluster-'));
    audit = new AuditLog(dir);
    server = await startRealApiServer({ private: true, apiServerArgs: audit.apiServerArgs });
    await installCrd(server.kubeConfig, AbortSignal.timeout(60_000));
  });
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('serves a certificate valid for 127.0.0.1 that verifies against the CA the mount gets', async () => {
    const cert = await servingCertificate(server);
    expect(cert.authorizationError).toBeUndefined();
    expect(cert.authorized).toBe(true);
    expect(cert.validFor127).toBe(true);
  });

  it('issues a token bound to a Secret: accepted, then refused once the Secret is deleted (a 401 in the audit log)', async () => {
    const sa = await ServiceAccountIdentity.create(server, 'ki-token', 'probe');
    const issued = await sa.issueToken(600);
    expect(issued.token.split('.')).toHaveLength(3);
    expect(await sa.accepts(issued.token)).toBe(true);
    const revokedAt = Date.now();
    await sa.revoke(issued);
    // The apiserver caches a successful token review for 10 s: poll until the token is refused.
    let refusedAfterMs = -1;
    for (let i = 0; i < 80; i++) {
      if (!(await sa.accepts(issued.token))) {
        refusedAfterMs = Date.now() - revokedAt;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(refusedAfterMs, 'the token was still accepted 20 s after its Secret was deleted').toBeGreaterThanOrEqual(0);
    process.stderr.write(`in-cluster: a bound token is refused ${refusedAfterMs} ms after its Secret was deleted\n`);
    expect(audit.unauthorized(revokedAt).map((e) => `${e.verb} ${e.resource} ${e.user || '(no user)'}`)).toEqual(['create selfsubjectreviews (no user)']);
    expect(audit.of(sa.username).filter((e) => e.resource === 'selfsubjectreviews').length).toBeGreaterThan(0);
  });
});
