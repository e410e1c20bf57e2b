// TaskScope against a plain model: thousands of random spawns, endings, failures, aborts, closes and clock moves.

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { FakeClock, flushPromises, TaskScope, type TaskScopeResult } from '../../src/core/index.js';
import { seededRandom } from '../../src/testing/random.js';

type Kind = 'obedient' | 'stubborn';

interface ModelTask {
  name: string;
  kind: Kind;
  end?: (how: 'ok' | 'fail' | 'abort-reason') => void;
}

/** What the scope should look like: written as plainly as possible. */
class Model {
  state: 'open' | 'stopping' | 'closed' = 'open';
  running = new Map<number, ModelTask>();
  failure: string | undefined;
  late: string[] = [];
  deadline = Infinity;
  abandoned: string[] = [];
  now = 0;
  constructor(readonly graceMs: number) {}

  abort(): void {
    if (this.state !== 'open') return;
    this.state = 'stopping';
    for (const [id, t] of this.running) if (t.kind === 'obedient') this.running.delete(id);
    if (this.graceMs !== Infinity) this.deadline = this.now + this.graceMs;
    this.maybeClose();
  }

  fail(message: string): void {
    if (this.state === 'closed' || this.failure !== undefined) this.late.push(message);
    else {
      this.failure = message;
      this.abort();
    }
  }

  ended(id: number): void {
    this.running.delete(id);
    this.maybeClose();
  }

  maybeClose(): void {
    if (this.state === 'stopping' && this.running.size === 0) this.close();
  }

  close(): void {
    this.state = 'closed';
    this.abandoned = [...this.running.values()].map((t) => t.name);
    this.deadline = Infinity;
  }

  advance(ms: number): void {
    this.now += ms;
    if (this.state === 'stopping' && this.now >= this.deadline) this.close();
  }
}

describe('TaskScope against a model', () => {
  it('matches a plain model over 5 000 random operations', async () => {
    const seed = Number(process.env.TASK_SCOPE_SEED ?? 20250101);
    const rand = seededRandom(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const graces = [0, 10, 50, Infinity];
    let step = 0;
    let scopes = 0;
    try {
      while (step < 5000) {
        scopes++;
        const clock = new FakeClock();
        const parent = new AbortController();
        const late: string[] = [];
        const graceMs = pick(graces);
        const scope = new TaskScope({ clock, graceMs, signal: parent.signal, onLateFailure: (err) => void late.push(err.message) });
        const m = new Model(graceMs);
        // Tasks abandoned by the grace period still end later; the model keeps them to end them.
        const alive = new Map<number, ModelTask>();
        let outcome: { value?: TaskScopeResult; error?: Error } | undefined;
        scope.closed().then(
          (value) => void (outcome = { value }),
          (error: Error) => void (outcome = { error }),
        );
        let nextId = 0;
        for (let n = 0; n < 60 && step < 5000; n++, step++) {
          const r = rand();
          if (r < 0.3) {
            const kind: Kind = rand() < 0.5 ? 'obedient' : 'stubborn';
            const id = nextId++;
            const task: ModelTask = { name: `t${id}`, kind };
            if (m.state === 'closed') {
              expect(() => scope.spawn(task.name, () => undefined)).toThrow(/has closed/);
              continue;
            }
            void scope.spawn(task.name, (signal) => {
              return new Promise<void>((resolve, reject) => {
                task.end = (how) => (how === 'ok' ? resolve() : reject(how === 'fail' ? new Error(`${task.name} failed`) : signal.reason));
                if (kind !== 'obedient') return;
                if (signal.aborted) resolve();
                else signal.addEventListener('abort', () => resolve(), { once: true });
              });
            });
            if (!(kind === 'obedient' && m.state !== 'open')) {
              m.running.set(id, task);
              alive.set(id, task);
            }
          } else if (r < 0.55 && alive.size > 0) {
            const id = pick([...alive.keys()]);
            const task = alive.get(id) as ModelTask;
            alive.delete(id);
            // Rejecting with the signal's reason is a clean stop (only meaningful once it aborted).
            const how = pick(m.state === 'open' ? (['ok', 'fail'] as const) : (['ok', 'fail', 'abort-reason'] as const));
            task.end?.(how);
            if (how === 'fail') m.fail(`${task.name} failed`);
            if (m.running.has(id)) m.ended(id);
          } else if (r < 0.65) {
            parent.abort();
            m.abort();
          } else if (r < 0.72) {
            const g = pick(graces);
            void scope.close(g).catch(() => undefined);
            m.abort();
            if (m.state === 'stopping' && g !== Infinity) m.deadline = Math.min(m.deadline, m.now + g);
          } else if (r < 0.77) {
            scope.fail(new Error(`external ${step}`));
            m.fail(`external ${step}`);
          } else {
            const ms = pick([0, 1, 5, 10, 25, 60]);
            await clock.advance(ms);
            m.advance(ms);
          }
          await flushPromises(1);
          // Obedient tasks that were alive when the scope aborted have ended by now.
          if (m.state !== 'open') for (const [id, t] of alive) if (t.kind === 'obedient') alive.delete(id);
          expect(scope.state).toBe(m.state);
          expect(scope.failure?.message).toBe(m.failure);
          expect(late).toEqual(m.late);
          if (m.state === 'closed') {
            expect(outcome).toBeDefined();
            if (m.failure === undefined) expect(outcome?.value).toEqual({ abandoned: m.abandoned });
            else expect(outcome?.error?.message).toBe(m.failure);
            expect(scope.abandoned).toEqual(m.abandoned);
            expect(clock.pendingTimers()).toBe(0);
            expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
          } else {
            expect(outcome).toBeUndefined();
            expect(scope.running().sort()).toEqual([...m.running.values()].map((t) => t.name).sort());
            expect(clock.pendingTimers()).toBe(m.state === 'stopping' && m.deadline !== Infinity ? 1 : 0);
          }
        }
        // End whatever is left so nothing dangles between scopes.
        for (const t of alive.values()) t.end?.('ok');
        await flushPromises(1);
      }
    } catch (err) {
      throw new Error(`model test failed at step ${step} (scope ${scopes}) with seed ${seed} (rerun with TASK_SCOPE_SEED=${seed})`, { cause: err });
    }
  });
});
