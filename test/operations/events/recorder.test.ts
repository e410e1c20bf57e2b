// EventRecorder against the fake API server: Events created, repeats folded into series by PATCH, rate limits and the buffer on the injected clock.

import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/core/index.js';
import { eventName, wallMs } from '../../../src/operations/events/build.js';
import { bench, CONTROLLER, until, widget } from './fixture.js';

const b = bench();
const failed = { type: 'Warning', reason: 'ReconcileFailed', action: 'Reconcile', note: 'the cloud is down' } as const;
const MICRO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe('EventRecorder: events and series', () => {
  it('creates an events.k8s.io/v1 Event naming the object, the related object, the controller and the instance', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w-config', namespace: 'ns', uid: 'uid-cm' } };
    recorder.event(widget('w'), { type: 'Normal', reason: 'Created', action: 'CreateConfigMap', note: 'made w-config', related: cm });
    expect(recorder.stats()).toMatchObject({ emitted: 1, pending: 1 });
    await recorder.flush();

    const [event, ...more] = b.events();
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      type: 'Normal',
      reason: 'Created',
      action: 'CreateConfigMap',
      note: 'made w-config',
      reportingController: CONTROLLER,
      reportingInstance: 'widgets-0',
      regarding: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', namespace: 'ns', uid: 'uid-w', resourceVersion: '7' },
      related: { apiVersion: 'v1', kind: 'ConfigMap', name: 'w-config', namespace: 'ns', uid: 'uid-cm' },
    });
    expect(event.eventTime).toMatch(MICRO_TIME);
    expect(event.series).toBeUndefined();
    expect(event.metadata?.name).toMatch(/^w\.[0-9a-f]+$/);
    expect(b.server.requests().find((r) => r.method === 'POST')?.query.fieldManager).toBe('kube-informer');
    expect(recorder.stats()).toEqual({ emitted: 1, created: 1, patched: 0, rateLimited: 0, dropped: 0, failed: 0, pending: 0, series: 1 });
  });

  it('puts the Event about a cluster-scoped object in default, and takes a ready-made ObjectReference with a fieldPath', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    recorder.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } }, { type: 'Normal', reason: 'Cordoned', action: 'Cordon' });
    recorder.event({ apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'ns', fieldPath: 'spec.containers{app}' }, { type: 'Warning', reason: 'BackOff', action: 'Restart' });
    await recorder.flush();
    expect(b.events('default').map((e) => e.regarding)).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'node-1' }]);
    expect(b.events().map((e) => e.regarding)).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'ns', fieldPath: 'spec.containers{app}' }]);
  });

  it('turns each repeat within the window into a PATCH of the same Event: series.count 2, 3, 4, lastObservedTime moving on', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    recorder.event(widget('w'), failed);
    await recorder.flush();
    const first = b.events()[0];
    let last = first.eventTime;
    for (let count = 2; count <= 4; count++) {
      await b.clock.advance(1_000);
      recorder.event(widget('w'), { ...failed, note: `attempt ${count}` });
      await recorder.flush();
      const events = b.events();
      expect(events).toHaveLength(1);
      expect(events[0].series?.count).toBe(count);
      expect(events[0].series!.lastObservedTime > last).toBe(true);
      last = events[0].series!.lastObservedTime;
    }
    const event = b.events()[0];
    expect(event.series?.lastObservedTime).toMatch(MICRO_TIME);
    expect(event.note).toBe('the cloud is down'); // the note is immutable; the series keeps the first (client-go)
    expect(event.eventTime).toBe(first.eventTime);
    const name = first.metadata!.name!;
    expect(b.writes()).toEqual(['POST', `PATCH ${name}`, `PATCH ${name}`, `PATCH ${name}`]);
    expect(b.server.requests().filter((r) => r.method === 'PATCH').every((r) => r.contentType === 'application/merge-patch+json')).toBe(true);
    expect(recorder.stats()).toMatchObject({ emitted: 4, created: 1, patched: 3, failed: 0 });
  });

  it('folds repeats that come while a write waits into that write: five occurrences before run are one create with count 5', async () => {
    const recorder = b.recorder();
    for (let i = 0; i < 5; i++) recorder.event(widget('w'), failed);
    expect(recorder.stats()).toMatchObject({ emitted: 5, pending: 1, dropped: 0 });
    b.run(recorder);
    await recorder.flush();
    expect(b.events().map((e) => e.series?.count)).toEqual([5]);
    expect(b.writes()).toEqual(['POST']);
    expect(recorder.stats()).toMatchObject({ created: 1, patched: 0 });
  });

  it('starts a new Event for another type, reason, action, object or related object, but not for another note', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } };
    recorder.event(widget('w'), failed);
    recorder.event(widget('w'), { ...failed, note: 'another note' }); // same series
    recorder.event(widget('w'), { ...failed, type: 'Normal' });
    recorder.event(widget('w'), { ...failed, reason: 'Throttled' });
    recorder.event(widget('w'), { ...failed, action: 'Delete' });
    recorder.event(widget('v'), failed);
    recorder.event(widget('w'), { ...failed, related: cm });
    recorder.event({ ...widget('w'), metadata: { ...widget('w').metadata, resourceVersion: '8' } }, failed); // same object, newer version: same series
    await recorder.flush();
    const events = b.events();
    expect(events).toHaveLength(6);
    expect(events.map((e) => e.series?.count ?? 1).sort()).toEqual([1, 1, 1, 1, 1, 3]);
    expect(recorder.stats()).toMatchObject({ emitted: 8, created: 6, series: 6 });
  });

  it('starts a new Event once seriesWindowMs passed since the last occurrence, and forgets expired series', async () => {
    const recorder = b.recorder({ seriesWindowMs: 60_000 });
    b.run(recorder);
    recorder.event(widget('w'), failed);
    await recorder.flush(); // (advance the clock only while no request is in flight: its timeout is on the clock too)
    await b.clock.advance(60_000); // exactly the window: still the series
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(b.events().map((e) => e.series?.count ?? 1)).toEqual([2]);
    await b.clock.advance(60_001);
    recorder.event(widget('v'), failed); // prunes the expired series of w
    expect(recorder.stats().series).toBe(1);
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(b.events().map((e) => `${e.regarding?.name} ${e.series?.count ?? 1}`).sort()).toEqual(['v 1', 'w 1', 'w 2']);
  });

  it('truncates a note over 1024 bytes on a character boundary, ending in …', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    recorder.event(widget('w'), { ...failed, note: 'é'.repeat(600) }); // 1200 bytes
    await recorder.flush();
    const note = b.events()[0].note!;
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(note).toMatch(/^é+…$/);
  });
});

describe('EventRecorder: rate limit and buffer', () => {
  it('drops and counts events beyond the burst per object, type and reason, and refills one token per rateLimitRefillMs on the clock', async () => {
    const recorder = b.recorder({ rateLimitBurst: 3, rateLimitRefillMs: 60_000 });
    b.run(recorder);
    for (let i = 0; i < 5; i++) recorder.event(widget('w'), failed);
    recorder.event(widget('w'), { ...failed, reason: 'Other' }); // another reason: its own bucket
    recorder.event(widget('v'), failed); // another object: its own bucket
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ emitted: 7, rateLimited: 2 });
    const summary = () => b.events().map((e) => `${e.regarding?.name} ${e.reason} ${e.series?.count ?? 1}`).sort();
    expect(summary()).toEqual(['v ReconcileFailed 1', 'w Other 1', 'w ReconcileFailed 3']);

    await b.clock.advance(59_999);
    recorder.event(widget('w'), failed);
    expect(recorder.stats().rateLimited).toBe(3);
    await b.clock.advance(1);
    recorder.event(widget('w'), failed); // one token back
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(recorder.stats().rateLimited).toBe(4);
    expect(summary()).toEqual(['v ReconcileFailed 1', 'w Other 1', 'w ReconcileFailed 4']);
    expect(b.log.lines.some((l) => l.startsWith('debug:') && l.includes('rate limit reached for Warning ReconcileFailed about Widget ns/w'))).toBe(true);
  });

  it('defaults to client-go’s spam filter: 25 events, then one per 5 minutes', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    for (let i = 0; i < 30; i++) recorder.event(widget('w'), failed);
    await b.clock.advance(300_000);
    recorder.event(widget('w'), failed);
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ emitted: 32, rateLimited: 6 });
    expect(b.events().map((e) => e.series?.count)).toEqual([26]);
  });

  it('drops and counts what does not fit in the buffer; a repeat of a queued write takes no room', async () => {
    const recorder = b.recorder({ bufferSize: 2 });
    recorder.event(widget('a'), failed);
    recorder.event(widget('b'), failed);
    recorder.event(widget('c'), failed); // dropped
    recorder.event(widget('a'), failed); // folded into a's queued write
    expect(recorder.stats()).toMatchObject({ emitted: 4, dropped: 1, pending: 2, series: 2 });
    expect(b.log.lines.filter((l) => l.includes('buffer is full'))).toEqual([
      `warn: events:${CONTROLLER}: the event buffer is full (2 writes waiting); dropped the event Warning ReconcileFailed about Widget ns/c`,
    ]);
    b.run(recorder);
    await recorder.flush();
    expect(b.events().map((e) => `${e.regarding?.name} ${e.series?.count ?? 1}`).sort()).toEqual(['a 2', 'b 1']);
    recorder.event(widget('c'), failed); // room again
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ emitted: 5, created: 3, dropped: 1 });
  });
});

describe('EventRecorder: API failures', () => {
  it('counts and logs a write the API refuses (403), never throws it, and goes on with the next', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    b.server.injectFault({ type: 'status', code: 403, verb: 'create', resource: 'events', message: 'events.events.k8s.io is forbidden' });
    expect(() => recorder.event(widget('w'), failed)).not.toThrow();
    recorder.event(widget('v'), failed);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ emitted: 2, created: 1, failed: 1 });
    expect(b.events().map((e) => e.regarding?.name)).toEqual(['v']);
    expect(b.writes()).toEqual(['POST', 'POST']); // a 403 is not retried
    const warn = b.log.lines.find((l) => l.includes('gave up'));
    expect(warn).toMatch(/^warn: events:example\.com\/widget-controller: gave up writing Event ns\/w\.[0-9a-f]+ \(Warning ReconcileFailed about Widget ns\/w\) after 1 attempt: .*forbidden/);
    // The next occurrence of the failed series tries again (a create: the Event was never written).
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(b.events().find((e) => e.regarding?.name === 'w')?.series?.count).toBe(2);
  });

  it('retries a 5xx after retryDelayMs (plus up to 25 % jitter) on the clock, then writes', async () => {
    const recorder = b.recorder({ retryDelayMs: 1_000, writeTimeoutMs: 60_000 });
    b.run(recorder);
    b.server.injectFault({ type: 'status', code: 500, verb: 'create', resource: 'events' });
    b.server.injectFault({ type: 'status', code: 503, verb: 'create', resource: 'events' });
    recorder.event(widget('w'), failed);
    for (let attempt = 1; attempt <= 2; attempt++) {
      await until(() => b.writes().length === attempt && b.clock.pendingDelays()[0] < 60_000, `attempt ${attempt} to fail`);
      const [delay] = b.clock.pendingDelays();
      expect(delay).toBeGreaterThanOrEqual(1_000);
      expect(delay).toBeLessThanOrEqual(1_250);
      await b.clock.runNext();
    }
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ created: 1, failed: 0 });
    expect(b.events()).toHaveLength(1);
    expect(b.log.lines.filter((l) => l.startsWith('debug:') && l.includes('retrying in'))).toHaveLength(2);
  });

  it('takes the retry jitter from the injected random source', async () => {
    const draws = [0, 0.5, 0.999];
    const recorder = b.recorder({ retryDelayMs: 1_000, writeTimeoutMs: 60_000, random: () => draws.shift() ?? 0 });
    b.run(recorder);
    for (let i = 0; i < 3; i++) b.server.injectFault({ type: 'status', code: 503, verb: 'create', resource: 'events' });
    recorder.event(widget('w'), failed);
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      await until(() => b.writes().length === attempt && b.clock.pendingDelays()[0] < 60_000, `attempt ${attempt} to fail`);
      delays.push(b.clock.pendingDelays()[0]);
      await b.clock.runNext();
    }
    await recorder.flush();
    expect(delays).toEqual([1_000, 1_125, 1_249.75]);
    expect(recorder.stats()).toMatchObject({ created: 1, failed: 0 });
  });

  it('waits for Retry-After on a 429, and gives up after maxAttempts', async () => {
    const recorder = b.recorder({ retryDelayMs: 1_000, maxAttempts: 2, writeTimeoutMs: 60_000 });
    b.run(recorder);
    b.server.injectFault({ type: 'status', code: 429, verb: 'create', resource: 'events', retryAfterSeconds: 30 });
    b.server.injectFault({ type: 'status', code: 500, verb: 'create', resource: 'events' });
    recorder.event(widget('w'), failed);
    await until(() => b.clock.pendingDelays()[0] === 30_000, 'the 429');
    expect(b.clock.pendingDelays()).toEqual([30_000]);
    await b.clock.advance(30_000);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ created: 0, failed: 1 });
    expect(b.log.lines.some((l) => l.startsWith('warn:') && l.includes('after 2 attempts'))).toBe(true);
  });

  it('aborts a request with no answer after writeTimeoutMs and retries it', async () => {
    const recorder = b.recorder({ writeTimeoutMs: 5_000, retryDelayMs: 1_000 });
    b.run(recorder);
    b.server.injectFault({ type: 'stall', verb: 'create', resource: 'events' });
    recorder.event(widget('w'), failed);
    await until(() => b.writes().length === 1, 'the stalled create');
    expect(b.clock.pendingDelays()).toEqual([5_000]);
    await b.clock.advance(5_000);
    await until(() => b.clock.pendingTimers() === 1 && b.clock.pendingDelays()[0] <= 1_250, 'the retry wait');
    await b.clock.advance(1_250);
    await recorder.flush();
    expect(recorder.stats()).toMatchObject({ created: 1, failed: 0 });
    expect(b.events()).toHaveLength(1);
  });

  it('creates the Event again, same name, current count, when it vanished from the server (deleted, or expired by its TTL)', async () => {
    const recorder = b.recorder();
    b.run(recorder);
    recorder.event(widget('w'), failed);
    await recorder.flush();
    const name = b.events()[0].metadata!.name!;
    b.server.delete(eventsRef, name, 'ns');
    recorder.event(widget('w'), failed);
    await recorder.flush();
    expect(b.writes()).toEqual(['POST', `PATCH ${name}`, 'POST']);
    expect(b.events().map((e) => [e.metadata?.name, e.series?.count])).toEqual([[name, 2]]);
    expect(recorder.stats()).toMatchObject({ created: 2, patched: 0, failed: 0 });
  });

  it('gives a new name to an Event whose name is taken, and patches (not duplicates) a create whose answer was lost', async () => {
    const recorder = b.recorder({ writeTimeoutMs: 5_000, retryDelayMs: 1_000 });
    b.run(recorder);
    // A create that times out: did it go through? Here it did (the test stores it), so the retry's 409 means "ours".
    b.server.injectFault({ type: 'stall', verb: 'create', resource: 'events' });
    recorder.event(widget('w'), failed);
    await until(() => b.writes().length === 1, 'the stalled create');
    const lostName = nameAt('w', 0);
    await b.clock.advance(5_000);
    await until(() => b.clock.pendingTimers() === 1, 'the retry wait');
    b.server.create(eventsRef, { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: lostName, namespace: 'ns' }, reason: 'ReconcileFailed' } as KubeObject);
    recorder.event(widget('w'), failed); // count 2 while the write waits
    await b.clock.advance(1_250);
    await recorder.flush();
    expect(b.events().map((e) => [e.metadata?.name, e.series?.count])).toEqual([[lostName, 2]]);
    expect(recorder.stats()).toMatchObject({ created: 0, patched: 1, failed: 0 });

    // A name another writer took: a new name.
    b.server.clearRequests();
    recorder.event(widget('v'), failed);
    const taken = nameAt('v', 1);
    b.server.create(eventsRef, { apiVersion: 'events.k8s.io/v1', kind: 'Event', metadata: { name: taken, namespace: 'ns' }, reason: 'Someone' } as KubeObject);
    await recorder.flush();
    const v = b.events().filter((e) => e.regarding?.name === 'v');
    expect(v).toHaveLength(1);
    expect(v[0].metadata?.name).not.toBe(taken);
    expect(b.writes()).toEqual(['POST', 'POST']);
  });
});

const eventsRef = { group: 'events.k8s.io', version: 'v1', resource: 'events' };

/** The name the recorder gives its `seq`-th new Event about `object` now (client-go's scheme: `<name>.<hex time>`). */
function nameAt(object: string, seq: number): string {
  return eventName(object, wallMs(b.clock.now()), seq);
}
