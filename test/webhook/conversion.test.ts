import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/testing/random.js';
import { conversionWebhook, jsonPatchDiff } from '../../src/webhook/index.js';
import { applyJsonPatch } from '../../src/core/index.js';
import { post, startServer } from './helpers.js';

// A widget whose v1 has `spec.size` and `spec.color`; v2 (the hub) has `spec.dimensions.size`, `spec.colors[]`
// and `spec.shape`, which v1 cannot hold: v1 keeps it (and extra colours) in an annotation so the round trip is lossless.
interface Meta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface WidgetV1 {
  apiVersion: string;
  kind: 'Widget';
  metadata: Meta;
  spec: { size: number; color?: string };
}
interface WidgetV2 {
  apiVersion: string;
  kind: 'Widget';
  metadata: Meta;
  spec: { dimensions: { size: number }; colors: string[]; shape?: string };
}

const STASH = 'example.com/v2-extra';

const widgets = () =>
  conversionWebhook<{ v1: WidgetV1; v2: WidgetV2 }, 'v2'>({
    name: 'widgets.example.com',
    group: 'example.com',
    hub: 'v2',
    spokes: {
      v1: {
        toHub(o) {
          const annotations = { ...o.metadata.annotations };
          const extra = annotations[STASH] === undefined ? {} : (JSON.parse(annotations[STASH]) as { colors?: string[]; shape?: string });
          delete annotations[STASH];
          return {
            apiVersion: 'example.com/v2',
            kind: 'Widget',
            metadata: { ...o.metadata, annotations },
            spec: {
              dimensions: { size: o.spec.size },
              colors: extra.colors ?? (o.spec.color === undefined ? [] : [o.spec.color]),
              ...(extra.shape === undefined ? {} : { shape: extra.shape }),
            },
          };
        },
        fromHub(h) {
          const [color, ...rest] = h.spec.colors;
          const extra = rest.length || h.spec.shape !== undefined ? JSON.stringify({ colors: h.spec.colors, shape: h.spec.shape }) : undefined;
          return {
            apiVersion: 'example.com/v1',
            kind: 'Widget',
            metadata: { ...h.metadata, annotations: { ...h.metadata.annotations, ...(extra ? { [STASH]: extra } : {}) } },
            spec: { size: h.spec.dimensions.size, ...(color === undefined ? {} : { color }) },
          };
        },
      },
    },
  });

function randomV1(rnd: () => number, i: number): WidgetV1 {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: `w${i}`, namespace: 'default', ...(rnd() < 0.5 ? { labels: { tier: pick(['a', 'b']) } } : {}), annotations: rnd() < 0.3 ? { note: `n${i}` } : {} },
    spec: { size: Math.floor(rnd() * 1000), ...(rnd() < 0.7 ? { color: pick(['red', 'green', 'blue']) } : {}) },
  };
}

function randomV2(rnd: () => number, i: number): WidgetV2 {
  const colors = Array.from({ length: Math.floor(rnd() * 4) }, () => ['red', 'green', 'blue'][Math.floor(rnd() * 3)]!);
  return {
    apiVersion: 'example.com/v2',
    kind: 'Widget',
    metadata: { name: `w${i}`, annotations: {} },
    spec: { dimensions: { size: Math.floor(rnd() * 1000) }, colors, ...(rnd() < 0.5 ? { shape: rnd() < 0.5 ? 'round' : 'square' } : {}) },
  };
}

const SEED = Number(process.env.WEBHOOK_CONVERSION_SEED ?? 2811);
const running: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of running.splice(0)) await stop();
});

describe('conversion webhooks', () => {
  it('refuses at construction a served version no converter reaches from the hub', () => {
    expect(() =>
      conversionWebhook<{ v1: WidgetV1; v2: WidgetV2 }, 'v2'>({ name: 'w', group: 'example.com', hub: 'v2', spokes: { v1: { toHub: (o) => o as never, fromHub: (h) => h as never } }, servedVersions: ['v1', 'v2', 'v3'] }),
    ).toThrow(expect.objectContaining({ code: 'WEBHOOK_CONFIG', message: expect.stringContaining('v3') }));
    expect(() => conversionWebhook<{ v1: WidgetV1; v2: WidgetV2 }, 'v2'>({ name: 'w', group: 'example.com', hub: 'v2', spokes: {} as never })).not.toThrow();
    expect(() => conversionWebhook<{ v1: WidgetV1; v2: WidgetV2 }, 'v2'>({ name: 'w', group: 'example.com', hub: 'v2', spokes: {} as never, servedVersions: ['v1', 'v2'] })).toThrow(/v1/);
  });

  it(`v1 → hub → v1 is the identity on 2 000 generated objects (seed ${SEED}), and so is v2 → v1 → v2`, () => {
    const webhook = widgets();
    const rnd = seededRandom(SEED);
    try {
      for (let i = 0; i < 2_000; i++) {
        const v1 = randomV1(rnd, i) as unknown as Record<string, unknown>;
        const there = webhook.convert(v1, 'example.com/v2');
        expect(there.apiVersion).toBe('example.com/v2');
        expect(there.metadata).toEqual(v1.metadata);
        expect(webhook.convert(there, 'example.com/v1')).toEqual(v1);
        const v2 = randomV2(rnd, i) as unknown as Record<string, unknown>;
        const back = webhook.convert(webhook.convert(v2, 'example.com/v1'), 'example.com/v2');
        expect(back.spec).toEqual(v2.spec);
      }
    } catch (e) {
      (e as Error).message = `round trip failed with seed ${SEED} (rerun with WEBHOOK_CONVERSION_SEED=${SEED}): ${(e as Error).message}`;
      throw e;
    }
  });

  it('answers a ConversionReview over HTTPS with every object converted and the uid echoed', async () => {
    const s = await startServer((server) => server.register('/convert', widgets()));
    running.push(s.stop);
    const objects = [randomV1(seededRandom(1), 1), randomV1(seededRandom(2), 2)];
    const reply = await post(
      s.port,
      '/convert',
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c-1', desiredAPIVersion: 'example.com/v2', objects } },
      s.ca,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.response.uid).toBe('c-1');
    expect(reply.body.response.result).toEqual({ status: 'Success' });
    expect(reply.body.response.convertedObjects.map((o: WidgetV2) => [o.apiVersion, o.spec.dimensions.size])).toEqual(objects.map((o) => ['example.com/v2', o.spec.size]));
  });

  it('answers Failure naming the version for an unserved version, and a generic Failure when a converter throws', async () => {
    const broken = conversionWebhook<{ v1: WidgetV1; v2: WidgetV2 }, 'v2'>({
      name: 'broken',
      group: 'example.com',
      hub: 'v2',
      spokes: {
        v1: {
          toHub: () => {
            throw new Error('bug');
          },
          fromHub: (h) => h as never,
        },
      },
    });
    const s = await startServer(
      (server) => {
        server.register('/convert', widgets());
        server.register('/broken', broken);
      },
      { logger: false },
    );
    running.push(s.stop);
    const review = (desiredAPIVersion: string) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'c-2', desiredAPIVersion, objects: [randomV1(seededRandom(3), 3)] } });
    const unserved = await post(s.port, '/convert', review('example.com/v9'), s.ca);
    expect(unserved.body.response.result).toEqual({ status: 'Failure', message: expect.stringContaining('version v9 is not served') });
    const failed = await post(s.port, '/broken', review('example.com/v2'), s.ca);
    expect(failed.body.response.result).toEqual({ status: 'Failure', message: 'broken: conversion failed: internal error (see the webhook\'s log)' });
  });
});

describe('jsonPatchDiff', () => {
  const PATCH_SEED = Number(process.env.WEBHOOK_PATCH_SEED ?? 77);
  function randomValue(rnd: () => number, depth: number): unknown {
    const r = rnd();
    if (depth > 3 || r < 0.3) return [1, 'a', true, null, 'x/y', 'a~b'][Math.floor(rnd() * 6)];
    if (r < 0.5) return Array.from({ length: Math.floor(rnd() * 3) }, () => randomValue(rnd, depth + 1));
    const keys = ['a', 'b', 'c/d', 'e~f', ''];
    return Object.fromEntries(keys.filter(() => rnd() < 0.5).map((k) => [k, randomValue(rnd, depth + 1)]));
  }
  it(`applying the diff of two random documents to the first gives the second (3 000 pairs, seed ${PATCH_SEED})`, () => {
    const rnd = seededRandom(PATCH_SEED);
    for (let i = 0; i < 3_000; i++) {
      const a = { metadata: randomValue(rnd, 1), spec: randomValue(rnd, 1) };
      const b = rnd() < 0.2 ? structuredClone(a) : { metadata: randomValue(rnd, 1), spec: randomValue(rnd, 1) };
      const ops = jsonPatchDiff(a, b);
      expect(applyJsonPatch(a, ops), `seed ${PATCH_SEED}, pair ${i}`).toEqual(b);
    }
    expect(jsonPatchDiff({ a: 1 }, { a: 1 })).toEqual([]);
  });
});
