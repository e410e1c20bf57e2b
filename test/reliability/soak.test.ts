// A bounded soak inside `npm test`: every fault, a few thousand writes, both handlers, every exact check.
import { describe, expect, it } from 'vitest';
import { kubeInformerContender } from '../../soak/contenders/kube-informer.js';
import type { Contender, ContenderFactory } from '../../soak/contenders/types.js';
import { FAULT_KINDS } from '../../soak/faults.js';
import { describeRun } from '../../soak/report.js';
import { runSoak } from '../../soak/soak.js';

describe('the soak', () => {
  it('ends with the cache equal to the server and every handler history ending in it, under every fault', async () => {
    const result = await runSoak({
      seed: 7,
      events: 1500,
      contender: kubeInformerContender,
      faults: FAULT_KINDS,
      faultEveryWrites: 150,
      maxHeapGrowthBytes: Infinity,
      settleTimeoutMs: 15_000,
    });
    expect(result.failures, describeRun(result)).toEqual([]);
    expect(result.faults.filter((f) => f.injectedAtMs !== undefined).length).toBeGreaterThanOrEqual(3);
    expect(result.handlerCalls.fast).toEqual(result.handlerCalls.slow);
  }, 60_000);

  it('fails, naming the first divergence, when a handler misses one delete', async () => {
    // A contender that hides the first delete, and everything after it about that key, from the fast
    // handler: the checker must notice.
    let lostKey: string | undefined;
    const keyOf = (obj: unknown): string => {
      const o = (obj as { obj?: unknown; key?: string }).key !== undefined ? (obj as { obj: unknown }).obj : obj;
      const m = (o as { metadata?: { name?: string; namespace?: string } }).metadata;
      return `${m?.namespace}/${m?.name}`;
    };
    const lossy: ContenderFactory = (ctx) => {
      const handlers = ctx.handlers.map(({ name, handler }) => {
        if (name !== 'fast') return { name, handler };
        const hidden = (obj: unknown): boolean => lostKey !== undefined && keyOf(obj) === lostKey;
        return {
          name,
          handler: {
            onAdd: (obj: Parameters<typeof handler.onAdd>[0]) => (hidden(obj) ? undefined : handler.onAdd(obj)),
            onUpdate: (o: Parameters<typeof handler.onUpdate>[0], n: Parameters<typeof handler.onUpdate>[1]) =>
              hidden(n) ? undefined : handler.onUpdate(o, n),
            onDelete: (obj: Parameters<typeof handler.onDelete>[0]) => {
              if (lostKey === undefined) lostKey = keyOf(obj);
              return hidden(obj) ? undefined : handler.onDelete(obj);
            },
          },
        };
      });
      const inner: Contender = kubeInformerContender({ ...ctx, handlers });
      return inner;
    };
    const result = await runSoak({ seed: 3, events: 300, contender: lossy, maxHeapGrowthBytes: Infinity, settleTimeoutMs: 1_000 });
    expect(result.converged).toBe(false);
    expect(result.storeDivergences).toEqual([]);
    expect(result.handlerDivergences).toHaveLength(1);
    expect(result.handlerDivergences[0]).toMatchObject({ where: 'handler:fast', key: lostKey });
    expect(result.failures[0]).toMatch(/^first divergence: handler:fast: /);
    expect(result.failures[0]).toContain(lostKey);
  }, 30_000);
});
