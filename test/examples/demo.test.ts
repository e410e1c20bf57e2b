// `npm run demo` end to end, as a real process: a short run on the embedded fake must pass its consistency check.

import { describe, expect, it } from 'vitest';
import { runExample } from './helpers.js';

describe('the demo', () => {
  it('runs a bounded workload on the embedded fake, prints progress and a summary, passes its check and exits 0', async () => {
    const result = await runExample('examples/demo.ts', ['--fake', '--seconds', '2', '--seed', '11']);
    expect(result.exitedInTime).toBe(true);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out).toContain('kube-informer demo on embedded fake API server');
    expect(out).toMatch(/workload: run [0-9a-f]{6}, seed 11, 2 s/);
    expect(out).toMatch(/\] ops +\d+ \| events +\d+ \| queue +\d+ \(max +\d+\) \| reconciles +\d+ \| cache: \d+ ns, \d+ pods, \d+ policies/);
    expect(out).toMatch(/workload +\d+ operations: \d+ creates, \d+ relabels, \d+ deletes, 0 refused/);
    expect(out).toMatch(/controller +\d+ reconciles, 0 failures/);
    expect(out).toMatch(/consistency check: PASSED/);
    expect(result.code).toBe(0);
  });

});
