// controller.requests(): the Controller's reconcile requests in the user's own `for await` loop — the
// scheduler's merging and one run per key kept, a request finished with done()/fail(), one abandoned on
// break handed back, concurrency as the number of requests held, misuse refused loudly.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import { Action, Controller, type ReconcileRequest } from '../../src/controller/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { fixture, recorder, widget, widgets, type Widget } from './fixture.js';

failOnUnhandledRejections();

async function started(options: { concurrency?: number } = {}) {
  const f = fixture();
  const w = f.source(widgets);
  w.add(widget('a'));
  w.add(widget('b'));
  const controller = Controller.for(f.factory, widgets).build({ clock: f.clock, logger: false, ...options });
  f.factory.start(f.ac.signal);
  const running = controller.run(f.ac.signal);
  await f.factory.waitForCacheSync(f.ac.signal);
  return { f, w, controller, running };
}

describe('controller.requests()', () => {
  it('hands out each cached primary once, with its object and reason; a key changed while held runs again only after done()', async () => {
    const { f, w, controller, running } = await started();
    const requests = controller.requests(f.ac.signal);
    const first = (await requests.next()).value as ReconcileRequest<Widget>;
    expect(first.ctx.object?.metadata?.name).toBe(first.key.split('/')[1]);
    expect(first.ctx.reason).toMatchObject({ kind: 'watch', initial: true });
    w.modify(widget(first.key.split('/')[1], { spec: { v: 2 } } as never));
    await flushPromises(6);
    expect(controller.stats().running).toBe(1); // concurrency 1: the other key waits for this one
    const second = requests.next();
    let handed: ReconcileRequest<Widget> | undefined;
    void second.then((r) => (handed = r.value as ReconcileRequest<Widget>));
    await flushPromises(6);
    expect(handed).toBeUndefined();
    expect(first.done()).toBe(true);
    expect(first.done()).toBe(false); // once
    await flushPromises(6);
    // The change merged while it was held runs next: a changed object is high priority, the initial list low.
    expect(handed?.key).toBe(first.key);
    expect(handed?.ctx.reason).toMatchObject({ kind: 'watch', initial: false });
    handed?.done();
    const third = (await requests.next()).value as ReconcileRequest<Widget>;
    expect(third.key).not.toBe(first.key);
    third.done();
    f.ac.abort();
    await running;
    expect(controller.stats()).toMatchObject({ succeeded: 3, failed: 0 });
  });

  it('fail(error) goes to the onError policy: the key is retried with backoff', async () => {
    const { f, controller, running } = await started();
    const requests = controller.requests(f.ac.signal);
    const first = (await requests.next()).value as ReconcileRequest<Widget>;
    first.fail(new Error('boom'));
    (await requests.next()).value?.done();
    await f.clock.advance(1000);
    const retry = (await requests.next()).value as ReconcileRequest<Widget>;
    expect(retry.key).toBe(first.key);
    expect(retry.ctx.attempt).toBe(1); // failures before this one
    expect(retry.ctx.reason).toMatchObject({ kind: 'retry' });
    retry.done();
    f.ac.abort();
    await running;
    expect(controller.stats()).toMatchObject({ failed: 1, succeeded: 2 });
  });

  it('hands back a request abandoned by break: the next loop gets the same key again, with its priority', async () => {
    const { f, controller, running } = await started();
    let abandoned: ReconcileRequest<Widget> | undefined;
    for await (const req of controller.requests(f.ac.signal)) {
      abandoned = req;
      break;
    }
    expect(abandoned?.done()).toBe(false); // over: handed back
    const next = controller.requests(f.ac.signal);
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) {
      const req = (await next.next()).value as ReconcileRequest<Widget>;
      keys.push(req.key);
      if (req.key === abandoned?.key) expect(req.ctx.priority).toBe(abandoned.ctx.priority);
      req.done();
    }
    expect(keys.sort()).toEqual(['ns/a', 'ns/b']); // the abandoned key is reconciled again, not lost
    f.ac.abort();
    await running;
  });

  it('holds as many requests at once as the concurrency; the stop ends a held request and the loop ends with its signal', async () => {
    const { f, controller, running } = await started({ concurrency: 2 });
    const requests = controller.requests(f.ac.signal);
    const a = (await requests.next()).value as ReconcileRequest<Widget>;
    const b = (await requests.next()).value as ReconcileRequest<Widget>;
    expect([a.key, b.key].sort()).toEqual(['ns/a', 'ns/b']);
    expect(controller.stats().running).toBe(2);
    const waiting = requests.next();
    f.ac.abort();
    expect(await waiting).toEqual({ value: undefined, done: true });
    await running; // the held requests did not hold the stop: their signal aborted
    expect(a.ctx.signal.aborted).toBe(true);
    expect(a.done()).toBe(false);
    expect(controller.stats(), JSON.stringify(controller.stats())).toMatchObject({ stopped: 2 });
  });

  it('refuses requests() on a controller built with a reconcile function, naming the fix', () => {
    const f = fixture();
    const controller = Controller.for(f.factory, widgets).build(recorder().reconcile, { logger: false });
    expect(() => controller.requests()).toThrow(/built without a reconcile function \(builder\.build\(options\)\)/);
    expect(() => Controller.for(f.factory, widgets).build({ concurency: 2 } as never)).toThrow(/concurency/);
    expect(Action.done()).toEqual({ kind: 'done' });
  });
});
