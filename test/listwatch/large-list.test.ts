// newListWatch decoding list bodies item by item (the path for lists past V8's string limit), over real HTTP.

import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/index.js';
import { ResponseDecodeError, newListWatch, type KubeListWatch } from '../../src/listwatch/index.js';
import { parseLargeList } from '../../src/listwatch/list-body.js';
import { kubeConfigFor, useCleanups, type TestServer } from './helpers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const SMALL_THRESHOLD = 1024;
const { cleanups, serve } = useCleanups();



function listWatch(server: TestServer, threshold = SMALL_THRESHOLD): KubeListWatch<unknown> {
  const lw = newListWatch(kubeConfigFor(server.url), PODS, { largeListThresholdBytes: threshold });
  cleanups.push(() => lw.close());
  return lw;
}

/** Serves `body` once per request, in `chunkSize`-byte writes when given. */
async function serveBody(body: string, chunkSize?: number): Promise<TestServer> {
  return serve((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    if (chunkSize === undefined) {
      res.end(body);
      return;
    }
    const bytes = Buffer.from(body);
    for (let at = 0; at < bytes.length; at += chunkSize) res.write(bytes.subarray(at, at + chunkSize));
    res.end();
  });
}

/** A small deterministic PRNG so the tricky items are the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return a / 4294967296;
  };
}

const NASTY = ['[', ']', '{', '}', ',', '"', '\\', '\\"', '"]', '},{', 'é', '日本', '😀', '\u2028', '\n', ':', ' '];

function trickyItem(i: number, random: () => number): Record<string, unknown> {
  const text = (): string => Array.from({ length: 1 + Math.floor(random() * 6) }, () => NASTY[Math.floor(random() * NASTY.length)]).join('');
  const item: Record<string, unknown> = {
    metadata: { name: `pod-${i}-${text()}`, namespace: 'default', resourceVersion: String(100 + i), labels: { [text()]: text() } },
    spec: { nested: [[1, [2, [text()]]], { deep: { deeper: [text(), null, true, -1.5e3] } }], empty: [], obj: {} },
  };
  if (i % 3 === 0) item.kind = 'Pod';
  if (i % 5 === 0) item.apiVersion = 'v1';
  return item;
}

/** A list body with the envelope fields before or after the items, pretty-printed or compact. */
function listBody(items: unknown, where: 'before' | 'after', pretty = false): string {
  const metadata = { resourceVersion: '4242', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==', remainingItemCount: 17 };
  const object =
    where === 'before'
      ? { apiVersion: 'v1', kind: 'PodList', metadata, items }
      : { items, metadata, kind: 'PodList', apiVersion: 'v1' };
  return pretty ? JSON.stringify(object, null, 2) : JSON.stringify(object);
}

/** What the whole-string path makes of `body`: JSON.parse plus the filled-in item kinds. */
function expected(body: string): unknown {
  const list = JSON.parse(body) as { items: Array<Record<string, unknown>> };
  for (const item of list.items) {
    item.apiVersion ??= 'v1';
    item.kind ??= 'Pod';
  }
  return list;
}

const signal = (): AbortSignal => new AbortController().signal;

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('expected a rejection'),
    (err: unknown) => err,
  );
}

describe('newListWatch large list bodies', () => {
  const random = prng(7);
  const items = Array.from({ length: 300 }, (_, i) => trickyItem(i, random));

  for (const where of ['before', 'after'] as const) {
    for (const pretty of [false, true]) {
      it(`decodes items with brackets, escapes and unicode like JSON.parse, envelope ${where} the items${pretty ? ', pretty-printed' : ''}`, async () => {
        const body = listBody(items, where, pretty);
        expect(Buffer.byteLength(body)).toBeGreaterThan(50 * SMALL_THRESHOLD);
        const lw = listWatch(await serveBody(body));
        const list = await lw.list({ resourceVersion: '0' }, signal());
        expect(list).toEqual(expected(body));
        expect(list.metadata).toEqual({ resourceVersion: '4242', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ==', remainingItemCount: 17 });
        expect(list.items).toHaveLength(300);
      });
    }
  }

  it('gives the same list from the whole-string path and the item-by-item path', async () => {
    const body = listBody(items, 'after');
    const server = await serveBody(body);
    const small = await listWatch(server).list({}, signal());
    const whole = await listWatch(server, Number.MAX_SAFE_INTEGER).list({}, signal());
    expect(small).toEqual(whole);
  });

  it('decodes a body that arrives in 1-byte writes', async () => {
    const body = listBody(items.slice(0, 20), 'after');
    const lw = listWatch(await serveBody(body, 1));
    expect(await lw.list({}, signal())).toEqual(expected(body));
  });

  it('decodes an empty items array and keeps the envelope', async () => {
    const body = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","pad":"${'x'.repeat(2000)}"},"items": [ ] }`;
    const list = await listWatch(await serveBody(body)).list({}, signal());
    expect(list).toEqual(JSON.parse(body));
  });

  it('decodes items: null as an empty list on both paths, as Go does', async () => {
    const body = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","pad":"${'x'.repeat(2000)}"},"items":null}`;
    const server = await serveBody(body);
    for (const threshold of [SMALL_THRESHOLD, Number.MAX_SAFE_INTEGER]) {
      const list = await listWatch(server, threshold).list({}, signal());
      expect(list.items).toEqual([]);
      expect(list.metadata.resourceVersion).toBe('9');
    }
  });

  it('keeps the last value of a repeated items key and ignores items keys nested deeper', () => {
    const body = '{"metadata":{"items":[9]},"items":[1,2],"x":{"items":[3]},"items":[{"items":[4]}, "]"]}';
    expect(parseLargeList(Buffer.from(body), 'list')).toEqual(JSON.parse(body));
    const escapedKey = '{"\\u0069tems":[{"a":"b"}],"kind":"PodList"}';
    expect(parseLargeList(Buffer.from(escapedKey), 'list')).toEqual(JSON.parse(escapedKey));
  });

  const malformed: Array<[string, string]> = [
    ['an item that does not parse', '{"items":[{"a":1},{"a":nope}]}'],
    ['two items without a comma', '{"items":[{"a":1} {"a":2}]}'],
    ['a trailing comma', '{"items":[1,2,]}'],
    ['a leading comma', '{"items":[,1]}'],
    ['a truncated body', '{"metadata":{},"items":[{"a":"b"},{"a":'],
    ['an unclosed string', '{"items":[{"a":"b'],
    ['a broken envelope', '{"metadata":{"resourceVersion":},"items":[]}'],
    ['trailing garbage', '{"items":[]} garbage'],
    ['text that is not JSON', '<html>bad gateway</html>'],
  ];
  for (const [name, body] of malformed) {
    it(`rejects ${name} with ResponseDecodeError malformed-json and a bounded preview`, async () => {
      const padded = body.startsWith('{') ? `{"pad":"${'y'.repeat(2000)}",${body.slice(1)}` : body + ' '.repeat(2000);
      expect(() => JSON.parse(padded)).toThrow();
      const err = await rejection(listWatch(await serveBody(padded)).list({}, signal()));
      expect(err).toBeInstanceOf(ResponseDecodeError);
      expect(err).toMatchObject({ code: ErrorCodes.WATCH_DECODE, failure: 'malformed-json' });
      expect((err as ResponseDecodeError).preview.length).toBeLessThanOrEqual(200);
    });
  }

  it('rejects a large body without an items array as not-a-list', async () => {
    for (const body of [`{"kind":"PodList","pad":"${'z'.repeat(2000)}"}`, `[${'1,'.repeat(1000)}1]`]) {
      const err = await rejection(listWatch(await serveBody(body)).list({}, signal()));
      expect(err).toMatchObject({ code: ErrorCodes.WATCH_DECODE, failure: 'not-a-list' });
    }
  });
});
