// EventRecorder's lifecycle and contract: run once, drain on stop within drainTimeoutMs, flush, and INVALID_OPTION only for programming errors.

import { describe, expect, it } from 'vitest';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { flushPromises, type DeepReadonly, type KubeObject } from '../../../src/core/index.js';
import { EventRecorder, type EventDetails, type EventSubject } from '../../../src/operations/events/index.js';
import type { Runnable } from '../../../src/controller.js';
import { bench, CONTROLLER, until, widget } from './fixture.js';

const b = bench();
const failed = { type: 'Warning', reason: 'ReconcileFailed', action: 'Reconcile' } as const;

describe('EventRecorder lifecycle', () => {
  it('runs once; on stop it drains what is queued, closes, and drops (and counts) what comes after', async () => {
    const recorder = b.recorder();
    const { done, stop } = b.run(recorder);
    await expect(recorder.run(new AbortController().signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    recorder.event(widget('a'), failed);
    recorder.event(widget('b'), failed);
    await stop(); // aborts at once: both are still written, in the drain
    await done;
    expect(b.events().map((e) => e.regarding?.name).sort()).toEqual(['a', 'b']);
    recorder.event(widget('c'), failed);
    expect(recorder.stats()).toMatchObject({ emitted: 3, created: 2, dropped: 1, pending: 0 });
    expect(b.log.lines).toContain(`warn: events:${CONTROLLER}: the recorder has stopped; dropped the event Warning ReconcileFailed about Widget ns/c`);
    await recorder.flush(); // resolves at once once stopped
    expect(b.clock.pendingTimers()).toBe(0);
  });

  it('gives the drain drainTimeoutMs on the clock: the request in flight is aborted and what is left is dropped and counted', async () => {
    const recorder = b.recorder({ drainTimeoutMs: 2_000 });
    const ac = new AbortController();
    let settled = false;
    const done = recorder.run(ac.signal).then(() => void (settled = true));
    b.server.injectFault({ type: 'stall', verb: 'create', resource: 'events' });
    recorder.event(widget('a'), failed);
    recorder.event(widget('b'), failed);
    recorder.event(widget('b'), failed);
    await until(() => b.writes().length === 1, 'the stalled create');
    ac.abort();
    await b.clock.advance(1_999);
    expect(settled).toBe(false);
    await b.clock.advance(1);
    await done;
    expect(recorder.stats()).toMatchObject({ emitted: 3, created: 0, failed: 0, dropped: 3, pending: 0 });
    expect(b.log.lines.filter((l) => l.startsWith('warn:'))).toEqual([
      expect.stringMatching(/the drain ran out of time writing Event ns\/a\./),
      `warn: events:${CONTROLLER}: stopped with 2 event occurrence(s) not written (drainTimeoutMs 2000)`,
    ]);
    expect(b.clock.pendingTimers()).toBe(0);
  });

  it('makes one last attempt, without retries, for a write waiting to retry when the stop comes', async () => {
    const recorder = b.recorder({ retryDelayMs: 1_000, writeTimeoutMs: 60_000 });
    const { stop } = b.run(recorder);
    b.server.injectFault({ type: 'status', code: 500, verb: 'create', resource: 'events' });
    recorder.event(widget('a'), failed);
    await until(() => b.clock.pendingDelays()[0] !== undefined && b.clock.pendingDelays()[0] < 60_000, 'the retry wait');
    await stop();
    expect(recorder.stats()).toMatchObject({ created: 1, failed: 0 });
    expect(b.writes()).toEqual(['POST', 'POST']);
  });

  it('flush waits for run, and rejects with ABORTED when its signal aborts first', async () => {
    const recorder = b.recorder();
    recorder.event(widget('a'), failed);
    const ac = new AbortController();
    const waiting = recorder.flush(ac.signal);
    ac.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(recorder.flush(ac.signal)).rejects.toMatchObject({ code: 'ABORTED' });
    let flushed = false;
    const flushing = recorder.flush().then(() => void (flushed = true));
    await flushPromises();
    expect(flushed).toBe(false);
    b.run(recorder);
    await flushing;
    expect(b.events()).toHaveLength(1);
    expect(await recorder.flush()).toBeUndefined(); // idle: at once
  });
});

describe('EventRecorder contract', () => {
  it('throws INVALID_OPTION for a programming error in event(), and counts nothing', () => {
    const recorder = b.recorder();
    const bad: Array<[EventSubject, Partial<EventDetails> | null]> = [
      [widget('w'), { ...failed, reason: '' }],
      [widget('w'), { type: 'Warning', action: 'Reconcile' }],
      [widget('w'), { ...failed, action: undefined }],
      [widget('w'), { ...failed, type: 'Error' as 'Warning' }],
      [widget('w'), { ...failed, reason: 'R'.repeat(129) }],
      [widget('w'), { ...failed, note: 42 as unknown as string }],
      [widget('w'), null],
      [{ metadata: { name: 'w', namespace: 'ns' } }, failed],
      [{ apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns' } }, failed],
      [{ apiVersion: 'v1', name: 'p' } as EventSubject, failed],
      [widget('w'), { ...failed, related: { apiVersion: 'v1', kind: 'ConfigMap' } as KubeObject }],
    ];
    for (const [regarding, details] of bad) {
      expect(() => recorder.event(regarding, details as EventDetails), JSON.stringify(details)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    }
    expect(() => recorder.event(widget('w'), failed)).not.toThrow();
    expect(recorder.stats()).toMatchObject({ emitted: 1, pending: 1 });
  });

  it('checks its options: a qualified reportingController, a reportingInstance of at most 128 characters, counts and durations', () => {
    const kc = b.server.kubeConfig;
    const make = (options: unknown) => () => new EventRecorder(kc, options as { reportingController: string });
    for (const options of [
      undefined,
      {},
      { reportingController: 'Widget Controller' },
      { reportingController: 'example.com/' },
      { reportingController: 'Example.com/widgets' },
      { reportingController: CONTROLLER, reportingInstance: 'x'.repeat(129) },
      { reportingController: CONTROLLER, reportingInstance: '' },
      { reportingController: CONTROLLER, bufferSize: 0 },
      { reportingController: CONTROLLER, rateLimitRefillMs: -1 },
      { reportingController: CONTROLLER, writeTimeoutMs: 0 },
      { reportingController: CONTROLLER, logger: true },
    ]) {
      expect(make(options), JSON.stringify(options)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    }
    expect(make({ reportingController: 'widget-controller' })).not.toThrow();
    const recorder = new EventRecorder(kc, { reportingController: CONTROLLER, logger: false });
    const runnable: Runnable = recorder; // fits a Manager's runnables
    expect(runnable.name).toBe(`events:${CONTROLLER}`);
    // Objects from the cache are DeepReadonly: event() takes them as they are.
    const cached: DeepReadonly<Pod> = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } };
    recorder.event(cached, { type: 'Normal', reason: 'Seen', action: 'Observe', related: cached });
    expect(recorder.stats().emitted).toBe(1);
  });

  it('defaults reportingInstance to <controller>-<hostname>, as client-go does', async () => {
    const { hostname } = await import('node:os');
    const recorder = b.recorder({ reportingInstance: undefined });
    b.run(recorder);
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(b.events()[0].reportingInstance).toBe(`${CONTROLLER}-${hostname()}`.slice(0, 128));
  });

  it('turns the rate limit off with rateLimitRefillMs 0', async () => {
    const recorder = b.recorder({ rateLimitRefillMs: 0, rateLimitBurst: 1 });
    b.run(recorder);
    for (let i = 0; i < 50; i++) recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ emitted: 50, rateLimited: 0 });
    expect(b.events()[0].series?.count).toBe(50);
  });
});
