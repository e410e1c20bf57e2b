// Command-line flags of bench/run.ts, with the defaults of a full run and of --quick.

import type { ContenderId } from './protocol.js';

/** The parsed flags. */
export interface BenchArgs {
  /** Initial-sync sizes; the first one also hosts the watch-throughput burst. */
  pods: number[];
  /** MODIFIED events in the burst. */
  events: number;
  reps: number;
  /** Pods of the "syncs without error" check (0 = skip). */
  big: number;
  steadyMinutes: number;
  /** MODIFIED events per second during the steady watch. */
  steadyRate: number;
  steadyPods: number;
  contenders: ContenderId[];
  /** Contenders to run under `node --cpu-prof` (profiles go to bench/results/profiles/). */
  profile: ContenderId[];
  /** Re-render docs from this results file and exit. */
  renderOnly?: string;
  /** The phases to run. Default: all. */
  phases: Phase[];
  /** Start from this results file: the phases run replace their sections, the rest is kept. */
  merge?: string;
  /** The controller phase's keys, repetitions, steady write rate and seconds. */
  controller: { keys: number; reps: number; rate: number; seconds: number };
  /** Don't write docs/, only bench/results/. */
  noDocs: boolean;
  quick: boolean;
}

/** The phases of a run, in order. */
export type Phase = 'sync' | 'big' | 'steady' | 'controller';
const ALL_PHASES: Phase[] = ['sync', 'big', 'steady', 'controller'];

/** Every contender, in the order tables list them. */
export const ALL_CONTENDERS: ContenderId[] = ['raw', 'raw-meta', 'client-node', 'ki-1', 'ki-3', 'ki-strip', 'ki-meta', 'ki-watchlist', 'client-go', 'client-go-meta'];

const USAGE = `Usage: npm run bench -- [flags]
  --pods 10000,50000,100000   initial-sync sizes (the first also hosts the watch burst)
  --events 200000             MODIFIED events in the watch-throughput burst
  --reps 5                    repetitions (contenders interleaved, order rotated each rep)
  --big 200000                pods for the "syncs without error" check (0 = skip)
  --steady-minutes 10         length of the steady watch (0 = skip)
  --steady-rate 50            MODIFIED events/s during the steady watch
  --steady-pods 10000         pods during the steady watch
  --only raw,ki-1,...         run only these contenders (default: all)
  --profile ki-1              run these contenders with node --cpu-prof (bench/results/profiles/)
  --phases sync,big,steady,controller   run only these phases (default: all)
  --merge FILE                start from this results file: the phases run replace their sections
  --controller-keys 50000     controller phase: keys in the keys/s burst
  --controller-reps 5         controller phase: repetitions (the two sides alternate)
  --controller-rate 500       controller phase: writes/s of the latency measurement
  --controller-seconds 10     controller phase: how long the writes go on, per side and repetition
  --quick                     small sizes, one rep, for development (a few minutes)
  --render-only FILE          re-render docs/benchmarks.md and the SVGs from a results file
  --no-docs                   write bench/results/ only`;

/** Parses `argv` (without node and script). Throws with the usage text on a bad flag. */
export function parseArgs(argv: string[]): BenchArgs {
  const quick = argv.includes('--quick');
  const a: BenchArgs = quick
    ? { pods: [2000, 5000], events: 10000, reps: 1, big: 0, steadyMinutes: 0.25, steadyRate: 50, steadyPods: 2000, contenders: [...ALL_CONTENDERS], profile: [], noDocs: false, quick, phases: [...ALL_PHASES], controller: { keys: 10000, reps: 1, rate: 200, seconds: 2 } }
    : { pods: [10000, 50000, 100000], events: 200000, reps: 5, big: 200000, steadyMinutes: 10, steadyRate: 50, steadyPods: 10000, contenders: [...ALL_CONTENDERS], profile: [], noDocs: false, quick, phases: [...ALL_PHASES], controller: { keys: 50000, reps: 5, rate: 500, seconds: 10 } };
  const num = (v: string | undefined, flag: string): number => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${flag} needs a number\n${USAGE}`);
    return n;
  };
  const ids = (v: string | undefined, flag: string): ContenderId[] => {
    const list = (v ?? '').split(',').filter(Boolean) as ContenderId[];
    for (const id of list) if (!ALL_CONTENDERS.includes(id)) throw new Error(`${flag}: unknown contender ${id}\n${USAGE}`);
    return list;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const v = argv[i + 1];
    switch (flag) {
      case '--quick': continue;
      case '--no-docs': a.noDocs = true; continue;
      case '--pods': a.pods = (v ?? '').split(',').map((x) => num(x, flag)); break;
      case '--events': a.events = num(v, flag); break;
      case '--reps': a.reps = Math.max(1, num(v, flag)); break;
      case '--big': a.big = num(v, flag); break;
      case '--steady-minutes': a.steadyMinutes = num(v, flag); break;
      case '--steady-rate': a.steadyRate = num(v, flag); break;
      case '--steady-pods': a.steadyPods = num(v, flag); break;
      case '--only': a.contenders = ids(v, flag); break;
      case '--profile': a.profile = ids(v, flag); break;
      case '--render-only': a.renderOnly = v; break;
      case '--merge': a.merge = v; break;
      case '--phases': {
        const list = (v ?? '').split(',').filter(Boolean) as Phase[];
        for (const p of list) if (!ALL_PHASES.includes(p)) throw new Error(`${flag}: unknown phase ${p}\n${USAGE}`);
        a.phases = list;
        break;
      }
      case '--controller-keys': a.controller.keys = Math.max(1, num(v, flag)); break;
      case '--controller-reps': a.controller.reps = Math.max(1, num(v, flag)); break;
      case '--controller-rate': a.controller.rate = Math.max(1, num(v, flag)); break;
      case '--controller-seconds': a.controller.seconds = num(v, flag); break;
      case '--help': case '-h': throw new Error(USAGE);
      default: throw new Error(`unknown flag ${flag}\n${USAGE}`);
    }
    i++;
  }
  return a;
}
