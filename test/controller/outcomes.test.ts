// Reconcile outcomes: a stop is not a failure, the runtime's programming errors stop the controller, TerminalError, ctx.reason.

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { flushPromises, type KubeObject } from '../../src/core/index.js';
import { resources } from '../../src/core/resources.js';
import { Action, Controller } from '../../src/controller/index.js';
import { newResourceClient, type ResourceClient } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { configMap, fixture, widget, widgets } from './fixture.js';

failOnUnhandledRejections();

describe('reconcile outcomes', () => {
  let server: FakeApiServer;
  let client: ResourceClient<KubeObject>;
  beforeEach(async () => {
    server = await startFakeApiServer();
    client = newResourceClient(server.kubeConfig, resources.configmaps as never);
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('a write aborted by the stop is not a failure: not logged as one, not counted, not retried', async () => {
    const f = fixture();
    f.source(widgets).add(widget('b1'));
    server.injectFault({ verb: 'create', resource: 'configmaps', type: 'stall' });
    const controller = Controller.for(f.factory, widgets).build(
      async (key, ctx) => {
        await client.create(configMap(`${ctx.name}-cm`), ctx.signal);
        return Action.done();
      },
      { clock: f.clock, logger: f.log.logger, reconcileTimeoutMs: 0 },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await vi.waitFor(() => expect(server.requests().some((r) => r.method === 'POST')).toBe(true));
    f.ac.abort();
    await running;
    expect(controller.stats()).toMatchObject({ succeeded: 0, failed: 0, failing: 0 });
    expect(f.log.lines.filter((l) => l.startsWith('warn:') || l.startsWith('error:'))).toEqual([]);
    await f.clock.advance(10_000);
    expect(server.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});

describe('programming errors the runtime raises', () => {
  it('ctx.children of a resource the controller does not own stops the controller: run rejects with INVALID_OPTION, logged, never retried', async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    let calls = 0;
    const controller = Controller.for(f.factory, widgets).build(
      async (_key, ctx) => {
        calls++;
        ctx.children(resources.secrets);
        return Action.done();
      },
      { clock: f.clock, logger: f.log.logger },
    );
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    const settled = running.then(
      () => undefined,
      (err: unknown) => err,
    );
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(1_000);
    await flushPromises(6);
    expect(calls).toBe(1);
    const err = await settled;
    expect(err).toMatchObject({ code: 'INVALID_OPTION', message: expect.stringContaining('needs the resource to be owned') });
    expect(f.log.lines.filter((l) => l.startsWith('warn:'))).toEqual([]);
    expect(f.log.lines).toContainEqual(expect.stringMatching(/^error: controller example.com\/v1\/widgets: the reconcile of ns\/a misused the runtime \(INVALID_OPTION\)/));
    expect(controller.stats()).toMatchObject({ active: false, failed: 1 });
  });
});
