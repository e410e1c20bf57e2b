// The retry limit end to end: a Controller whose ctx.client write the fake API server answers 429 with Retry-After, its metrics through prom-client.

import * as promClient from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { FakeClock, flushPromises, resources } from '../../src/core/index.js';
import { Action, Controller } from '../../src/controller/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { prometheusControllerMetricsProvider } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { metricValue } from '../operations/prom.js';
import { memoryLog, widget, widgets } from './fixture.js';

let server: FakeApiServer;
let stop: AbortController;
beforeEach(async () => {
  server = await startFakeApiServer({ resources: [{ ...widgets, generation: true }] });
  stop = new AbortController();
});
afterEach(async () => {
  stop.abort();
  await server.close();
});

/** Lets I/O and promise chains run (setImmediate turns, never a timer) until `cond()` holds. */
async function until(cond: () => boolean, what: string, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const child = (name: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns' }, data: { k: 'v' } });

describe('the retry limit on the fake API server', () => {
  it('a write answered 429 with Retry-After: 3 is retried no sooner than 3 s, and the other failing key waits with it', async () => {
    const clock = new FakeClock();
    const registry = new promClient.Registry();
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    factory.start(stop.signal);
    const attempts: Array<[string, number]> = [];
    const errors: unknown[] = [];
    const log = memoryLog();
    const controller = Controller.for(factory, widgets).build(
      async (key, ctx) => {
        attempts.push([key, clock.now()]);
        if (key === 'ns/other' && attempts.filter(([k]) => k === key).length === 1) throw new Error('not yet');
        await ctx.client(resources.configmaps).create(child(`${ctx.object!.metadata!.name!}-child`)).catch((err: unknown) => {
          errors.push(err);
          throw err;
        });
        return Action.done();
      },
      { name: 'throttled', clock, logger: log.logger, metricsProvider: prometheusControllerMetricsProvider(promClient, { registry }) },
    );
    server.injectFault({ verb: 'create', resource: 'configmaps', type: 'status', code: 429, retryAfterSeconds: 3 });
    server.create(widgets, widget('w'));
    const running = controller.run(stop.signal);
    await until(() => errors.length === 1, 'the 429');
    expect(errors[0]).toMatchObject({ statusCode: 429, retryAfterSeconds: 3 });
    // The warning says when the retry comes: the server's 3 s, not the policy's 5 ms.
    expect(log.lines.filter((l) => l.startsWith('warn: controller throttled: reconcile of ns/w failed'))).toEqual([expect.stringMatching(/; retrying in 3000 ms$/)]);
    server.create(widgets, widget('other'));
    await until(() => attempts.some(([k]) => k === 'ns/other'), 'the other key');
    await clock.advance(2_999);
    for (let i = 0; i < 50; i++) await flushPromises(1);
    // Neither retried yet: the 429's Retry-After holds ns/w, and the bucket's pause holds ns/other (its backoff was 5 ms).
    expect(attempts).toEqual([
      ['ns/w', 0],
      ['ns/other', 0],
    ]);
    await clock.advance(1);
    await until(() => server.list('configmaps', 'ns').length === 2, 'both children');
    expect(attempts.slice(2).map(([, at]) => at)).toEqual([3_000, 3_000]);
    const c = { controller: 'throttled' };
    expect(await metricValue(registry, 'kube_informer_controller_rate_limited_retries_total', { ...c, cause: 'retry_after' })).toBe(2);
    expect(await metricValue(registry, 'kube_informer_controller_rate_limited_retries_total', { ...c, cause: 'bucket' })).toBe(0);
    expect(await metricValue(registry, 'kube_informer_controller_rate_limit_tokens', c)).toBe(98);
    stop.abort();
    await running;
  });
});
