// Structured logs of an informer: a failed list's line carries component, name, phase, action and code as fields.

import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { LogFields, Logger } from '../../src/core/log.js';
import { SharedIndexInformer } from '../../src/informer/index.js';
import { NetworkError } from '../../src/listwatch/errors.js';
import { FakeControllerSource } from '../../src/testing/fake-controller-source.js';
import { failOnUnhandledRejections, until, type Pod } from './helpers.js';

failOnUnhandledRejections();

describe('informer logs', () => {
  it("a failed list's warning names the informer, the phase, the action and the error's code as fields", async () => {
    const lines: Array<{ level: string; message: string; fields?: LogFields }> = [];
    const at = (level: string) => (message: string, fields?: LogFields) => void lines.push({ level, message, fields });
    const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
    const clock = new FakeClock();
    const source = new FakeControllerSource<Pod>();
    source.listError = new NetworkError('GET /api/v1/pods: connect ECONNREFUSED 127.0.0.1:1', { syscallCode: 'ECONNREFUSED' });
    const informer = new SharedIndexInformer<Pod>(source, { clock, name: 'v1/pods', logger });
    const ac = new AbortController();
    const done = informer.run(ac.signal);
    await until(() => lines.some((l) => l.level === 'warn'));
    const warning = lines.find((l) => l.level === 'warn');
    expect(warning?.message).toMatch(/^informer v1\/pods: list failed/);
    expect(warning?.fields).toEqual({
      component: 'informer',
      name: 'v1/pods',
      phase: 'list',
      action: 'relist',
      code: 'NETWORK',
      error: 'GET /api/v1/pods: connect ECONNREFUSED 127.0.0.1:1',
    });
    ac.abort();
    await done;
  });
});
