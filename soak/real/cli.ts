// `npm run soak -- --real`: seeded schedules of real faults against a real kube-apiserver (with Toxiproxy in front), each run checked exactly.

import { parseArgs } from 'node:util';
import { proxyApiServer } from '../../test/apiserver/toxiproxy.js';
import { buildRealApiServer, startRealApiServer } from '../../test/apiserver/harness.js';
import { parseSeeds, Prng } from '../prng.js';
import { runFaults, type Fault, type RealFaultResult } from './faults.js';
import { describeRealRun, recoveryTable } from './report.js';

/** Every fault kind of a real run. */
const REAL_FAULTS: readonly Fault[] = ['kube-apiserver', 'etcd', 'compaction', 'storm', 'reset', 'latency', 'bandwidth', 'stall'];

const REAL_USAGE = `usage: npm run soak -- --real [options]
  --seed N          seeds: 7, 1,2,3 or 1-4 (default 1); each picks its own schedule of faults
  --count K         faults per seed (default 8)
  --faults LIST     all, or a comma list of: ${REAL_FAULTS.join(', ')} (default all)
  --watch-cache on|off   the apiserver's watch cache (default on)
  --markdown        print the recovery table of docs/reliability.md
Starts etcd, kube-apiserver and Toxiproxy (built from the Go module proxy on first use) for each seed; a
writer changes ConfigMaps throughout; after each fault a write made after it must reach the informer's
cache; at the end the cache must equal a list at its own resource version, with every handler's history.
Exit status 1 when a run fails a check.`;

/** Runs the real soak with `argv` (without `--real`); resolves with the exit status. */
export async function runRealSoak(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      seed: { type: 'string', default: '1' },
      count: { type: 'string', default: '8' },
      faults: { type: 'string', default: 'all' },
      'watch-cache': { type: 'string', default: 'on' },
      markdown: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(REAL_USAGE);
    return 0;
  }
  const kinds = values.faults === 'all' ? REAL_FAULTS : (values.faults.split(',').map((k) => k.trim()) as Fault[]);
  for (const k of kinds) if (!REAL_FAULTS.includes(k)) throw new Error(`unknown fault "${k}" (known: ${REAL_FAULTS.join(', ')})`);
  const count = Number(values.count);
  if (!Number.isInteger(count) || count <= 0) throw new Error(`--count must be a positive integer, got "${values.count}"`);
  if (values['watch-cache'] !== 'on' && values['watch-cache'] !== 'off') throw new Error('--watch-cache must be on or off');
  await buildRealApiServer();
  const results: RealFaultResult[] = [];
  const started = performance.now();
  for (const seed of parseSeeds(values.seed)) {
    const rng = new Prng(seed);
    const schedule = Array.from({ length: count }, () => rng.pick(kinds));
    if (!values.quiet) console.log(`== real seed=${seed} watch cache ${values['watch-cache']}: ${schedule.join(', ')}`);
    const server = await startRealApiServer({ apiServerArgs: values['watch-cache'] === 'off' ? ['--watch-cache=false'] : [] });
    const proxy = await proxyApiServer(server);
    try {
      const result = await runFaults(server, schedule, `seed=${seed}`, proxy, seed);
      results.push(result);
      console.log(describeRealRun(result));
    } finally {
      await proxy.stop();
      await server.stop();
    }
  }
  const failed = results.filter((r) => r.cacheDiff.length + r.handlerDiff.length > 0 || r.counters.regressions > 0);
  if (values.markdown) console.log(`\n${recoveryTable(results)}\n`);
  console.log(`soak --real: ${results.length} run(s) in ${((performance.now() - started) / 1000).toFixed(1)} s; ${failed.length === 0 ? 'every cache exact' : `FAILED seeds ${failed.map((r) => r.label).join(', ')}`}`);
  return failed.length === 0 ? 0 : 1;
}
