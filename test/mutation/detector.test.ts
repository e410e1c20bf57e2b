// The cache-mutation detector: finding changed objects by key and path, expiry, run() on a fake clock.

import diagnosticsChannel from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown, FakeClock, flushPromises } from '../../src/core/index.js';
import {
  CacheMutationDetector,
  CacheMutationError,
  cacheMutationDetectorEnabled,
  newCacheMutationDetector,
  NoopCacheMutationDetector,
} from '../../src/mutation/index.js';
import { channelNames } from '../../src/observability/channels.js';

interface Pod {
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  spec?: { containers: Array<{ name: string; image: string; ports?: number[] }> };
}

function pod(name: string, labels: Record<string, string> = {}): Pod {
  return {
    metadata: { name, namespace: 'default', labels },
    spec: { containers: [{ name: 'main', image: 'nginx:1', ports: [80] }] },
  };
}

describe('CacheMutationDetector', () => {
  // MD-1
  it('reports a label added to a cached pod at the next check through the failure callback', async () => {
    const clock = new FakeClock();
    const found: CacheMutationError[] = [];
    const detector = new CacheMutationDetector({ clock, periodMs: 1000, retentionMs: 120_000, onMutation: (e) => found.push(e) });
    const ac = new AbortController();
    const running = detector.run(ac.signal);
    const anything = pod('anything', { check: 'foo' });
    detector.addObject('default/anything', anything);
    expect(detector.size).toBe(1);
    await clock.advance(1000);
    expect(found).toEqual([]);
    anything.metadata.labels!.change = 'true';
    await clock.advance(1000);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ code: 'CACHE_MUTATED', key: 'default/anything', paths: ['metadata.labels.change'] });
    ac.abort();
    await running;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('names the key and the changed label with both values', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    p.metadata.labels!.team = 'b';
    const [error] = detector.compareObjects();
    expect(error).toBeInstanceOf(CacheMutationError);
    expect(error.key).toBe('default/web');
    expect(error.paths).toEqual(['metadata.labels.team']);
    expect(error.diff).toBe('metadata.labels.team: "a" → "b"');
    expect(error.message).toContain('"default/web"');
    expect(error.message).toContain('metadata.labels.team: "a" → "b"');
  });

  it('gives nested, array and quoted paths', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    const p = pod('web', { 'app.kubernetes.io/name': 'x' });
    detector.addObject('default/web', p);
    p.spec!.containers[0].image = 'nginx:2';
    p.spec!.containers[0].ports!.push(443);
    p.metadata.labels!['app.kubernetes.io/name'] = 'y';
    const [error] = detector.compareObjects();
    expect(error.diff.split('\n')).toEqual([
      'metadata.labels["app.kubernetes.io/name"]: "x" → "y"',
      'spec.containers[0].image: "nginx:1" → "nginx:2"',
      'spec.containers[0].ports[1]: (absent) → 443',
    ]);
  });

  it('reports added and removed fields', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    delete p.metadata.labels;
    p.metadata.annotations = { note: 'hi' };
    const [error] = detector.compareObjects();
    expect(error.changes).toEqual([
      { path: 'metadata.labels', kind: 'removed', before: { team: 'a' } },
      { path: 'metadata.annotations', kind: 'added', after: { note: 'hi' } },
    ]);
    expect(error.diff).toBe('metadata.labels: {"team":"a"} → (absent)\nmetadata.annotations: (absent) → {"note":"hi"}');
  });

  it('bounds the number of changes and the message length', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock(), maxChanges: 3 });
    const p = pod('web');
    detector.addObject('default/web', p);
    for (let i = 0; i < 50; i++) p.metadata.labels![`l${i}`] = 'v'.repeat(100);
    const [error] = detector.compareObjects();
    expect(error.paths).toEqual(['metadata.labels.l0', 'metadata.labels.l1', 'metadata.labels.l2']);
    expect(error.message).toContain('(and more)');
    expect(error.message.length).toBeLessThanOrEqual(1000);
  });

  it('reports a mutation once, then catches a further one', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    p.metadata.labels!.team = 'b';
    expect(detector.compareObjects()).toHaveLength(1);
    expect(detector.compareObjects()).toEqual([]);
    p.metadata.labels!.team = 'c';
    expect(detector.compareObjects().map((e) => e.diff)).toEqual(['metadata.labels.team: "b" → "c"']);
  });

  it('finds nothing when objects are left alone, and ignores tombstones and non-objects', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    detector.addObject('a', pod('a'));
    detector.addObject('b', new DeletedFinalStateUnknown('b', pod('b')));
    detector.addObject('c', 'a string');
    detector.addObject('d', null);
    expect(detector.size).toBe(1);
    expect(detector.compareObjects()).toEqual([]);
  });

  it('compares ConfigMap keys named toString, valueOf and constructor like any other, and dates by their time', () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    const cm = JSON.parse('{"metadata":{"name":"cm"},"data":{"toString":"t","valueOf":"v","constructor":"c"}}') as { data: Record<string, string> };
    const transformed = { metadata: { name: 't' }, seen: new Date(0) };
    detector.addObject('default/cm', cm);
    detector.addObject('default/t', transformed);
    expect(detector.compareObjects()).toEqual([]);
    Reflect.set(cm.data, 'valueOf', 'changed'); // (TypeScript types .valueOf as the method)
    transformed.seen.setTime(1);
    expect(detector.compareObjects().map((e) => e.diff)).toEqual(['data.valueOf: "v" → "changed"', 'seen: "1970-01-01T00:00:00.000Z" → "1970-01-01T00:00:00.001Z"']);
  });

  it('keeps copies between one and two retention windows, then drops them', async () => {
    const clock = new FakeClock();
    const detector = new CacheMutationDetector({ clock, retentionMs: 120_000 });
    const early = pod('early');
    detector.addObject('early', early);
    await clock.advance(119_000);
    const late = pod('late');
    detector.addObject('late', late);
    await clock.advance(2_000); // t = 121 s: first rotation; both still held
    expect(detector.compareObjects()).toEqual([]);
    expect(detector.size).toBe(2);
    early.metadata.labels!.x = '1';
    expect(detector.compareObjects().map((e) => e.key)).toEqual(['early']);
    await clock.advance(120_000); // t = 241 s: second rotation drops both
    late.metadata.labels!.x = '1';
    early.metadata.labels!.y = '2';
    expect(detector.compareObjects()).toEqual([]);
    expect(detector.size).toBe(0);
  });

  it('drops everything after a long idle gap without a comparison in between', async () => {
    const clock = new FakeClock();
    const detector = new CacheMutationDetector({ clock, retentionMs: 1000 });
    detector.addObject('a', pod('a'));
    await clock.advance(10_000);
    detector.addObject('b', pod('b'));
    expect(detector.size).toBe(1);
  });

  it('rejects run() with the mutation when no onMutation is set, leaving no timer', async () => {
    const clock = new FakeClock();
    const detector = new CacheMutationDetector({ clock, periodMs: 10_000 });
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    const running = detector.run(new AbortController().signal);
    const outcome = running.then(() => 'resolved', (e: unknown) => e);
    p.metadata.labels!.team = 'b';
    await clock.advance(9_999);
    await flushPromises();
    expect(clock.pendingTimers()).toBe(1);
    await clock.advance(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(CacheMutationError);
    expect(err).toMatchObject({ code: 'CACHE_MUTATED', key: 'default/web', paths: ['metadata.labels.team'] });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('uses a 1 second period by default and resolves run() on abort with no timer left', async () => {
    const clock = new FakeClock();
    const detector = new CacheMutationDetector({ clock });
    const ac = new AbortController();
    const running = detector.run(ac.signal);
    await flushPromises();
    expect(clock.pendingDelays()).toEqual([1000]);
    ac.abort();
    await running;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('reports a mutation after 1 second of clock time with the default options', async () => {
    const clock = new FakeClock();
    const found: CacheMutationError[] = [];
    const detector = new CacheMutationDetector({ clock, onMutation: (e) => found.push(e) });
    const ac = new AbortController();
    const running = detector.run(ac.signal);
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    p.metadata.labels!.team = 'b';
    await clock.advance(999);
    expect(found).toEqual([]);
    await clock.advance(1);
    expect(found.map((e) => [e.key, e.paths])).toEqual([['default/web', ['metadata.labels.team']]]);
    ac.abort();
    await running;
    expect(clock.pendingTimers()).toBe(0);
  });

  it('compares one last time when the signal aborts and rejects run() with the mutation when no onMutation is set', async () => {
    const clock = new FakeClock();
    const detector = new CacheMutationDetector({ clock });
    const ac = new AbortController();
    const outcome = detector.run(ac.signal).then(() => 'resolved', (e: unknown) => e);
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    await clock.advance(100);
    p.metadata.labels!.team = 'b';
    ac.abort();
    const err = await outcome;
    expect(err).toBeInstanceOf(CacheMutationError);
    expect(err).toMatchObject({ code: 'CACHE_MUTATED', key: 'default/web', paths: ['metadata.labels.team'] });
    expect(clock.now()).toBe(100);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('compares one last time when the signal aborts, passes the mutation to onMutation, then resolves run()', async () => {
    const clock = new FakeClock();
    const found: CacheMutationError[] = [];
    const detector = new CacheMutationDetector({ clock, onMutation: (e) => found.push(e) });
    const ac = new AbortController();
    const running = detector.run(ac.signal);
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    await clock.advance(100);
    p.metadata.labels!.team = 'b';
    expect(found).toEqual([]);
    ac.abort();
    await expect(running).resolves.toBeUndefined();
    expect(found.map((e) => [e.key, e.diff])).toEqual([['default/web', 'metadata.labels.team: "a" → "b"']]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('compares once when run() is given an already aborted signal', async () => {
    const detector = new CacheMutationDetector({ clock: new FakeClock() });
    const p = pod('web', { team: 'a' });
    detector.addObject('default/web', p);
    p.metadata.labels!.team = 'b';
    await expect(detector.run(AbortSignal.abort())).rejects.toMatchObject({ code: 'CACHE_MUTATED', key: 'default/web' });
    await expect(detector.run(AbortSignal.abort())).resolves.toBeUndefined();
  });

  it('rejects run() with what onMutation throws during the last comparison at abort', async () => {
    const clock = new FakeClock();
    const boom = new Error('stop now');
    const detector = new CacheMutationDetector({ clock, onMutation: () => { throw boom; } });
    const p = pod('web');
    detector.addObject('default/web', p);
    const ac = new AbortController();
    const outcome = detector.run(ac.signal).catch((e: unknown) => e);
    p.metadata.name = 'renamed';
    ac.abort();
    expect(await outcome).toBe(boom);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('refuses a second concurrent run()', async () => {
    const clock = new FakeClock();
    const detector = new CacheMutationDetector({ clock });
    const ac = new AbortController();
    const running = detector.run(ac.signal);
    await expect(detector.run(ac.signal)).rejects.toMatchObject({ code: 'ALREADY_STARTED' });
    ac.abort();
    await running;
  });

  it('rejects run() with what onMutation throws', async () => {
    const clock = new FakeClock();
    const boom = new Error('stop now');
    const detector = new CacheMutationDetector({ clock, periodMs: 100, onMutation: () => { throw boom; } });
    const p = pod('web');
    detector.addObject('default/web', p);
    const outcome = detector.run(new AbortController().signal).catch((e: unknown) => e);
    p.metadata.name = 'renamed';
    await clock.advance(100);
    expect(await outcome).toBe(boom);
  });

  it('publishes found mutations on the cacheMutation channel', () => {
    const messages: unknown[] = [];
    const listener = (m: unknown): void => { messages.push(m); };
    diagnosticsChannel.subscribe(channelNames.cacheMutation, listener);
    try {
      const detector = new CacheMutationDetector({ clock: new FakeClock() });
      const p = pod('web', { team: 'a' });
      detector.addObject('default/web', p);
      p.metadata.labels!.team = 'b';
      detector.compareObjects();
    } finally {
      diagnosticsChannel.unsubscribe(channelNames.cacheMutation, listener);
    }
    expect(messages).toEqual([{ key: 'default/web', diff: 'metadata.labels.team: "a" → "b"' }]);
  });

  it('rejects a non-positive period', () => {
    expect(() => new CacheMutationDetector({ periodMs: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('newCacheMutationDetector and the no-op detector', () => {
  it('reads KUBE_CACHE_MUTATION_DETECTOR the way Go parses a boolean', () => {
    for (const v of ['1', 't', 'T', 'true', 'TRUE', 'True']) expect(cacheMutationDetectorEnabled({ KUBE_CACHE_MUTATION_DETECTOR: v })).toBe(true);
    for (const v of [undefined, '', '0', 'false', 'yes', 'on']) expect(cacheMutationDetectorEnabled({ KUBE_CACHE_MUTATION_DETECTOR: v })).toBe(false);
  });

  it('builds a real detector when enabled and a no-op otherwise', () => {
    expect(newCacheMutationDetector({ enabled: true })).toBeInstanceOf(CacheMutationDetector);
    expect(newCacheMutationDetector({ enabled: false })).toBeInstanceOf(NoopCacheMutationDetector);
    const saved = process.env.KUBE_CACHE_MUTATION_DETECTOR;
    try {
      process.env.KUBE_CACHE_MUTATION_DETECTOR = 'true';
      expect(newCacheMutationDetector().enabled).toBe(true);
      delete process.env.KUBE_CACHE_MUTATION_DETECTOR;
      expect(newCacheMutationDetector().enabled).toBe(false);
    } finally {
      if (saved === undefined) delete process.env.KUBE_CACHE_MUTATION_DETECTOR;
      else process.env.KUBE_CACHE_MUTATION_DETECTOR = saved;
    }
  });

  it('copies nothing and finds nothing when off', () => {
    const detector = newCacheMutationDetector({ enabled: false });
    const p = new Proxy(pod('web'), {
      get: () => { throw new Error('the no-op detector read the object'); },
      ownKeys: () => { throw new Error('the no-op detector walked the object'); },
    });
    detector.addObject('default/web', p);
    expect(detector.compareObjects()).toEqual([]);
  });

  it('has a no-op run() that sets no timer and resolves on abort', async () => {
    const clock = new FakeClock();
    const detector = newCacheMutationDetector({ enabled: false, clock });
    const ac = new AbortController();
    let done = false;
    const running = detector.run(ac.signal).then(() => (done = true));
    await flushPromises();
    expect(done).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
    ac.abort();
    await running;
    expect(done).toBe(true);
    await detector.run(ac.signal);
  });
});
