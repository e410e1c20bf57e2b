// The soak CLI: `npm run soak -- --seed N --events M --faults all [--contender both] [--markdown]`.

import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { clientNodeContender } from './contenders/client-node.js';
import { kubeInformerContender } from './contenders/kube-informer.js';
import type { ContenderFactory } from './contenders/types.js';
import { FAULT_KINDS, parseFaultKinds } from './faults.js';
import { parseSeeds } from './prng.js';
import { comparisonTable, describeRun, perFaultTable } from './report.js';
import { runSoak, type SoakResult } from './soak.js';

const CONTENDERS: Record<string, ContenderFactory> = {
  'kube-informer': kubeInformerContender,
  'client-node': clientNodeContender,
};

const USAGE = `usage: npm run soak -- [options]        (npm run soak -- --real --help: against a real kube-apiserver)
  --seed N          seeds to run: 7, 1,2,3 or 1-4 (default 1)
  --events M        workload writes per seed (default 10000)
  --faults LIST     all, none, or a comma list of: ${FAULT_KINDS.join(', ')} (default all)
  --contender NAME  kube-informer, client-node or both (default kube-informer)
  --rate R          writes per second (default 1000)
  --fault-every W   one fault per W writes on average (default 500)
  --settle-ms MS    how long to wait for quiescence after the last write (default 20000)
  --json FILE       write every result as JSON
  --markdown        print the comparison table of docs/reliability.md
  --by-fault        run each fault kind of --faults on its own (and print a per-fault table)
  --quiet           no progress lines
Exit status 1 when a kube-informer run fails a check (client-node runs are reported, never fatal).
Run with \`node --expose-gc\` (the npm script does) for the heap check.`;

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${value}"`);
  return n;
}

async function main(): Promise<number> {
  if (process.argv.includes('--real')) {
    // Against a real kube-apiserver (soak/real/): loaded only then, so the fake-server soak needs no Go.
    const { runRealSoak } = await import('./real/cli.js');
    return runRealSoak(process.argv.slice(2).filter((a) => a !== '--real'));
  }
  const { values } = parseArgs({
    options: {
      seed: { type: 'string', default: '1' },
      events: { type: 'string' },
      faults: { type: 'string', default: 'all' },
      contender: { type: 'string', default: 'kube-informer' },
      rate: { type: 'string' },
      'fault-every': { type: 'string' },
      'settle-ms': { type: 'string' },
      json: { type: 'string' },
      markdown: { type: 'boolean', default: false },
      'by-fault': { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const seeds = parseSeeds(values.seed);
  const events = positive('events', values.events, 10_000);
  const faults = parseFaultKinds(values.faults);
  const names = values.contender === 'both' ? Object.keys(CONTENDERS) : [values.contender];
  for (const n of names) if (CONTENDERS[n] === undefined) throw new Error(`unknown --contender "${n}"`);
  if (typeof (globalThis as { gc?: unknown }).gc !== 'function') {
    console.warn('note: started without --expose-gc: the heap check is skipped');
  }

  const results: SoakResult[] = [];
  const byFault: Array<{ kind: string; result: SoakResult }> = [];
  const faultSets = values['by-fault'] ? faults.map((k) => [k]) : [faults];
  const started = performance.now();
  for (const set of faultSets) for (const seed of seeds) {
    for (const name of names) {
      const label = values['by-fault'] ? set.join(',') : values.faults;
      if (!values.quiet) console.log(`== ${name} seed=${seed} events=${events} faults=${label}`);
      const result = await runSoak({
        seed,
        events,
        contender: CONTENDERS[name],
        faults: set,
        rate: positive('rate', values.rate, 1000),
        faultEveryWrites: positive('fault-every', values['fault-every'], 500),
        settleTimeoutMs: positive('settle-ms', values['settle-ms'], 20_000),
        log: values.quiet ? undefined : (line) => console.log(line),
      });
      results.push(result);
      if (values['by-fault']) byFault.push({ kind: set.join(','), result });
      console.log(`${values['by-fault'] ? `[${set.join(',')}] ` : ''}${describeRun(result)}`);
    }
  }
  const wall = (performance.now() - started) / 1000;
  if (values.json !== undefined) {
    writeFileSync(values.json, JSON.stringify(results, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2));
  }
  if (values.markdown) console.log(`\n${comparisonTable(results)}\n`);
  if (values.markdown && values['by-fault']) console.log(`${perFaultTable(byFault)}\n`);
  const failed = results.filter((r) => r.contender === 'kube-informer' && r.failures.length > 0);
  console.log(`soak: ${results.length} run(s) in ${wall.toFixed(1)} s; kube-informer ${failed.length === 0 ? 'passed every check' : `FAILED ${failed.length} run(s): seeds ${failed.map((r) => r.seed).join(', ')}`}`);
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    console.error(USAGE);
    process.exitCode = 2;
  },
);
