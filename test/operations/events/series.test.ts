// The recorder's pure parts: token buckets and the series cache on plain numbers, names, MicroTimes and notes.

import { describe, expect, it } from 'vitest';
import { eventName, isQualifiedName, microTime, referenceOf, truncateNote } from '../../../src/operations/events/build.js';
import { SeriesCache, TokenBuckets, type SeriesEntry } from '../../../src/operations/events/series.js';

describe('TokenBuckets', () => {
  it('allows burst, then one per refillMs, continuously; each key has its own bucket', () => {
    const buckets = new TokenBuckets(3, 100, 10);
    expect([0, 0, 0, 0].map(() => buckets.tryTake('a', 0))).toEqual([true, true, true, false]);
    expect(buckets.tryTake('b', 0)).toBe(true);
    expect(buckets.tryTake('a', 99)).toBe(false);
    expect(buckets.tryTake('a', 100)).toBe(true);
    expect(buckets.tryTake('a', 150)).toBe(false);
    expect(buckets.tryTake('a', 200)).toBe(true);
    // A long pause refills to the burst, not beyond.
    expect([0, 0, 0, 0].map(() => buckets.tryTake('a', 10_000))).toEqual([true, true, true, false]);
  });

  it('forgets the least recently used bucket beyond its capacity (which then starts full again)', () => {
    const buckets = new TokenBuckets(1, 1_000, 2);
    expect(buckets.tryTake('a', 0)).toBe(true);
    expect(buckets.tryTake('b', 0)).toBe(true);
    expect(buckets.tryTake('a', 0)).toBe(false); // a is now the most recent
    expect(buckets.tryTake('c', 0)).toBe(true); // evicts b
    expect(buckets.tryTake('a', 0)).toBe(false);
    expect(buckets.tryTake('b', 0)).toBe(true);
  });

  it('never limits with refillMs 0', () => {
    const buckets = new TokenBuckets(1, 0, 2);
    expect(Array.from({ length: 100 }, () => buckets.tryTake('a', 0)).every(Boolean)).toBe(true);
  });
});

describe('SeriesCache', () => {
  const entry = (key: string, at: number): SeriesEntry => ({
    key,
    event: {} as SeriesEntry['event'],
    count: 1,
    lastObservedAt: at,
    lastObservedTime: '',
    pending: 1,
    writtenCount: 0,
    created: false,
    ambiguousCount: 0,
    queued: false,
  });

  it('finds a series within the window after its last occurrence, and prunes expired ones from the front', () => {
    const cache = new SeriesCache(100, 10);
    const a = entry('a', 0);
    cache.add(a);
    cache.add(entry('b', 50));
    expect(cache.get('a', 100)).toBe(a);
    a.lastObservedAt = 120;
    cache.touch(a);
    expect(cache.get('b', 151)).toBeUndefined();
    expect(cache.size).toBe(1);
    expect(cache.get('a', 220)).toBe(a);
    expect(cache.get('a', 221)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('keeps at most capacity series, forgetting the least recently observed', () => {
    const cache = new SeriesCache(1_000, 2);
    const [a, b, c] = ['a', 'b', 'c'].map((k) => entry(k, 0));
    cache.add(a);
    cache.add(b);
    cache.touch(a);
    cache.add(c);
    expect([cache.get('a', 0), cache.get('b', 0), cache.get('c', 0)]).toEqual([a, undefined, c]);
  });
});

describe('Event building', () => {
  it('names Events <object>.<hex nanoseconds> with a sequence in the last digits, or a UUID when that is not a valid name', () => {
    const ms = 1_700_000_000_123.456;
    expect(eventName('w', ms, 0)).toBe(`w.${(1_700_000_000_123_456n * 1000n).toString(16)}`);
    expect(eventName('w', ms, 1)).not.toBe(eventName('w', ms, 0));
    expect(eventName('system:controller', ms, 0)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(eventName('x'.repeat(250), ms, 0)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('writes MicroTimes with six fractional digits', () => {
    expect(microTime(Date.UTC(2025, 0, 2, 3, 4, 5, 6) + 0.789)).toBe('2025-01-02T03:04:05.006789Z');
    expect(microTime(Date.UTC(2025, 0, 2))).toBe('2025-01-02T00:00:00.000000Z');
  });

  it('cuts notes by UTF-8 bytes, keeping whole characters', () => {
    expect(truncateNote('short')).toBe('short');
    expect(truncateNote('a'.repeat(1024))).toBe('a'.repeat(1024));
    const cut = truncateNote('a'.repeat(1024) + 'b');
    expect(cut).toBe(`${'a'.repeat(1021)}…`);
    const emoji = truncateNote('😀'.repeat(300)); // 4 bytes each
    expect(Buffer.byteLength(emoji)).toBeLessThanOrEqual(1024);
    expect(emoji).toBe(`${'😀'.repeat(255)}…`);
  });

  it('accepts qualified names only as reportingController', () => {
    for (const ok of ['widgets', 'example.com/widget-controller', 'kubernetes.io/kubelet', 'a_b.c-D']) expect(isQualifiedName(ok), ok).toBe(true);
    for (const bad of ['', 'a/b/c', '/x', 'Example.com/x', 'x-', 'my controller', 'x'.repeat(64)]) expect(isQualifiedName(bad), bad).toBe(false);
  });

  it('references an object by apiVersion, kind, namespace, name, uid and resourceVersion', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '3', labels: { a: 'b' } }, spec: {} };
    expect(referenceOf('t', 'regarding', pod)).toEqual({ apiVersion: 'v1', kind: 'Pod', name: 'p', namespace: 'ns', uid: 'u', resourceVersion: '3' });
  });
});
