// The differential suite: every scenario runs over plain HTTP against the test kit's fake API server and kube-apiserver v1.37.2; the normalised answers must match, or be a listed known difference.
// Run alone with `npx vitest run -c test/apiserver/vitest.config.ts test/apiserver/differential`.

import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeApiServer, type FakeApiServer } from '../../../src/testing/index.js';
import { compactEtcd, startRealApiServer, type RealApiServer } from '../harness.js';
import { compareTranscripts, covered, explained, type Comparison } from './compare.js';
import { knownDifferences, masks } from './known-differences.js';
import { orderDifferences } from './normalise.js';
import { createNamespace } from './scenarios-core.js';
import { coreScenarios } from './scenarios-core.js';
import { crdScenarios } from './scenarios-crd.js';
import { Wire } from './wire.js';

const scenarios = [...coreScenarios, ...crdScenarios];

describe('the fake API server against kube-apiserver v1.37.2', () => {
  let fake: FakeApiServer;
  let real: RealApiServer;
  let fakeWire: Wire;
  let realWire: Wire;
  let comparison: Comparison;

  beforeAll(async () => {
    // Its own server, as fresh as the fake: the scenarios compact etcd and compare cluster-scoped lists (gadgets).
    [fake, real] = await Promise.all([startFakeApiServer(), startRealApiServer({ private: true })]);
    fakeWire = new Wire({ name: 'fake', url: fake.url, token: 'fake-token', compact: async () => fake.compact() });
    realWire = new Wire({
      name: 'kube-apiserver',
      url: real.server,
      token: real.token,
      ca: real.ca,
      compact: async () => {
        await compactEtcd(real.etcdEndpoint);
      },
    });
  });
  afterAll(async () => {
    fakeWire?.close();
    realWire?.close();
    await Promise.all([fake?.close(), real?.stop()]);
  });

  it('runs every scenario on both servers, request for request', async () => {
    const run = randomBytes(2).toString('hex');
    for (const [i, scenario] of scenarios.entries()) {
      const ns = `diff-${run}-${i}`;
      for (const w of [fakeWire, realWire]) {
        w.scenario(scenario.name);
        await createNamespace(w, ns);
        await scenario.run(w, ns);
      }
    }
    comparison = compareTranscripts(fakeWire.transcript, realWire.transcript, masks);
    const { compared, differences } = comparison;
    const known = differences.filter((d) => explained(knownDifferences, d)).length;
    process.stderr.write(`differential suite: ${compared} requests compared, ${compared - differences.length} equal, ${known} known differences, ${differences.length - known} unexplained\n`);
    if (process.env.DIFFERENTIAL_DUMP !== undefined) {
      writeFileSync(process.env.DIFFERENTIAL_DUMP, JSON.stringify({ differences, fake: fakeWire.transcript, real: realWire.transcript }, null, 1));
    }
    expect(compared).toBeGreaterThanOrEqual(300);
  }, 600_000);

  it('keeps the order of resource versions, and no list is older than its items', () => {
    expect(orderDifferences(fakeWire.normaliser, realWire.normaliser)).toEqual([]);
    expect(fakeWire.normaliser.staleLists).toEqual([]);
    expect(realWire.normaliser.staleLists).toEqual([]);
  });

  it('differs only where a known difference says so, and every known difference still differs', () => {
    const { differences, masked } = comparison;
    const unexplained = differences.filter((d) => !explained(knownDifferences, d));
    const stale = knownDifferences.filter((k) => !differences.some((d) => covered(k, d).length > 0));
    expect(unexplained.map((d) => `${d.key}\n  ${d.request}\n  ${d.where.join('\n  ')}`)).toEqual([]);
    expect(stale.map((k) => `no longer differs${k.fixedOn ? ` (fixed on ${k.fixedOn}: remove the entry)` : ''}: ${String(k.keys)}: ${k.reason}`)).toEqual([]);
    expect(masks.filter((m) => (masked.get(m) ?? 0) === 0).map((m) => `mask no longer needed: ${m.name}`)).toEqual([]);
  });
});
