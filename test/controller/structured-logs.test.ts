// Structured logs of a controller: every line carries controller, key, reconcileID, attempt and code as fields.

import { describe, expect, it } from 'vitest';
import { flushPromises } from '../../src/core/index.js';
import type { LogFields, Logger } from '../../src/core/log.js';
import { Action, Controller } from '../../src/controller/index.js';
import { InvalidOptionError } from '../../src/core/options.js';
import { fixture, recorder, widget, widgets } from './fixture.js';

function fieldLog(): { lines: Array<{ level: string; message: string; fields: LogFields }>; logger: Logger } {
  const lines: Array<{ level: string; message: string; fields: LogFields }> = [];
  const at = (level: string) => (message: string, fields?: LogFields) => void lines.push({ level, message, fields: fields ?? {} });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

describe('controller logs', () => {
  it("a failed reconcile's line names controller, key, reconcileID, attempt and code; ctx.logger adds the same key and reconcileID", async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const log = fieldLog();
    const ids: string[] = [];
    const r = recorder((_key, ctx) => {
      ids.push(ctx.reconcileID);
      ctx.logger.info('reconciling');
      if (ids.length === 1) throw new InvalidOptionError('spec.size is not a number');
      return Action.done();
    });
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, { name: 'widgets', clock: f.clock, logger: log.logger });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    await f.clock.advance(10);
    await flushPromises(6);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[1]).not.toBe(ids[0]);
    const own = log.lines.filter((l) => l.message === 'reconciling');
    expect(own.map((l) => l.fields)).toEqual([
      { component: 'controller', controller: 'widgets', key: 'ns/a', reconcileID: ids[0] },
      { component: 'controller', controller: 'widgets', key: 'ns/a', reconcileID: ids[1] },
    ]);
    const failed = log.lines.find((l) => l.level === 'warn' && l.message.includes('failed (attempt 1)'));
    expect(failed?.fields).toEqual({
      component: 'controller',
      controller: 'widgets',
      key: 'ns/a',
      reconcileID: ids[0],
      attempt: 1,
      code: 'INVALID_OPTION',
      error: 'spec.size is not a number',
    });
    f.ac.abort();
    await running;
  });
  it("logs a failed reconcile's stack at debug level and its message at its own level (issue 47, defect 6)", async () => {
    const f = fixture();
    f.source(widgets).add(widget('a'));
    const log = fieldLog();
    let calls = 0;
    const r = recorder(() => {
      calls++;
      if (calls === 1) throw new Error('the disk is full');
      return Action.done();
    });
    const controller = Controller.for(f.factory, widgets).build(r.reconcile, { name: 'widgets', clock: f.clock, logger: log.logger });
    f.factory.start(f.ac.signal);
    const running = controller.run(f.ac.signal);
    await f.factory.waitForCacheSync(f.ac.signal);
    await flushPromises(6);
    const warn = log.lines.filter((l) => l.level === 'warn' && l.message.includes('failed (attempt 1)'));
    expect(warn).toHaveLength(1);
    expect(warn[0]!.message).not.toContain('\n');
    const stack = log.lines.filter((l) => l.level === 'debug' && l.message.includes('the disk is full') && l.message.includes('structured-logs.test.ts'));
    expect(stack).toHaveLength(1);
    expect(stack[0]!.message).toMatch(/^controller widgets: reconcile of ns\/a failed \(attempt 1\): Error: the disk is full\n\s+at /);
    expect(stack[0]!.fields).toMatchObject({ controller: 'widgets', key: 'ns/a', attempt: 1, error: 'the disk is full' });
    f.ac.abort();
    await running;
  });
});

