// Command-line flags of bench/run.ts, with the defaults of a full run and of --quick.

import { KI_NODE_FLAGS, OPERATOR_SIDES, type OperatorArgs, type OperatorSideId } from './operator-args.js';
import { STORM_SIDES, type StormArgs, type StormSideId } from './storm-args.js';
import { DEFAULT_SHAPE, type ContenderId, type IndepShape } from './protocol.js';

/** The stream phase's flags (bench/lib/stream-phase.ts). */
export interface StreamArgs {
  /** Pods written into the namespace. */
  pods: number;
  /** Informers started at once in the sync runs. */
  informers: number;
  reps: number;
  /** The writer's requests in flight. */
  writers: number;
  /** kube-apiserver's process id; default: found by the kubeconfig's port. */
  apiServerPid?: number;
  /** Use this namespace's pods as they are (written by an earlier run with `keep`): no writes, no cleanup. */
  namespace?: string;
  /** Leave the namespace and its pods in place at the end. */
  keep?: boolean;
  /** Which parts run. Default both. */
  parts?: Array<'sync' | 'relist'>;
  /** The side that goes first in the first repetition (the order alternates after it). Default `paged`. */
  first?: 'streaming' | 'paged';
  /** Names this run's code in the tables (`before`, `after`); runs of a `--merge`d section on the same namespace are kept beside them. */
  label?: string;
}

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
  /** The real kube-apiserver phase: a kubeconfig of the server (its current context). */
  kubeconfig?: string;
  /** The independent phase (issue 29's outside harness, bench/lib/indep-phase.ts): sizes, burst, repetitions, contenders. */
  indep: { pods: number[]; events: number; reps: number; contenders: ContenderId[]; shape: IndepShape };
  /** The real phase's writer: requests in flight. */
  writers: number;
  /** The real phase's writer: patches per second during the watch (0 = as fast as the server accepts them). */
  realRate: number;
  /** The operator phase (with --kubeconfig): controller-runtime vs kube-informer vs client-node (bench/lib/operator-phase.ts). */
  operator: OperatorArgs;
  /** The stream phase (with --kubeconfig): streaming against paged lists, and the relist (bench/lib/stream-phase.ts). */
  stream: StreamArgs;
  /** The storm phase (with --kubeconfig): issue 50's restart storm (bench/lib/storm-phase.ts). */
  storm: StormArgs;
  /** Don't write docs/, only bench/results/. */
  noDocs: boolean;
  /** Reuse `.cache/bench-build` and `dist/` as they are (development: a run after an unchanged build). */
  noBuild: boolean;
  quick: boolean;
}

/** The phases of a run, in order; `real` and `operator` need `--kubeconfig`. */
export type Phase = 'sync' | 'big' | 'steady' | 'indep' | 'real' | 'operator' | 'stream' | 'storm' | 'controller';
/** The phases a run without `--phases` runs (with `--kubeconfig`: only `real`). */
const DEFAULT_PHASES: Phase[] = ['sync', 'big', 'steady', 'indep', 'controller'];
const ALL_PHASES: Phase[] = ['sync', 'big', 'steady', 'indep', 'real', 'operator', 'stream', 'storm', 'controller'];

/** Every contender, in the order tables list them. */
export const ALL_CONTENDERS: ContenderId[] = ['raw', 'raw-meta', 'client-node', 'ki-reflector', 'ki-controller', 'ki-1', 'ki-noshare', 'ki-coalesce', 'ki-3', 'ki-strip', 'ki-meta', 'ki-watchlist', 'ki-dist', 'client-go', 'client-go-meta'];
/**
 * Run only when `--only` names them: the library's lower floors alone (bench/contenders/kube-informer-stages.ts),
 * `ki-coalesce` (newListWatch's `watchCoalesceMs: 20`, a trade of latency for CPU measured on the real server), and
 * `ki-noshare` (the informer's `shareUnchanged: false`, to measure what sharing an update's unchanged parts saves).
 */
const OPT_IN_CONTENDERS: ContenderId[] = ['ki-reflector', 'ki-controller', 'ki-coalesce', 'ki-noshare'];
/** The fake-server phases' contenders without `--only` (`ki-dist`, the `dist/` build, is the independent phase's). */
const FAKE_CONTENDERS: ContenderId[] = ALL_CONTENDERS.filter((id) => id !== 'ki-dist' && !OPT_IN_CONTENDERS.includes(id));
/** The independent phase's contenders without `--indep-only`. */
const INDEP_CONTENDERS: ContenderId[] = ['raw', 'client-node', 'ki-dist'];
/** The contenders of a `--kubeconfig` run without `--only`. */
const REAL_CONTENDERS: ContenderId[] = ['raw', 'client-node', 'ki-1', 'client-go'];

const USAGE = `Usage: npm run bench -- [flags]
  --pods 10000,50000,100000   initial-sync sizes (the first also hosts the watch burst)
  --events 200000             MODIFIED events in the watch-throughput burst
  --reps 5                    repetitions (contenders interleaved, order rotated each rep)
  --big 200000                pods for the "syncs without error" check (0 = skip)
  --steady-minutes 10         length of the steady watch (0 = skip)
  --steady-rate 50            MODIFIED events/s during the steady watch
  --steady-pods 10000         pods during the steady watch
  --only raw,ki-1,...         run only these contenders (default: all but ki-dist and the floors
                              ki-reflector and ki-controller: kube-informer's Reflector alone, and its
                              newController, to place the informer's per-event cost between its floors)
  --profile ki-1              run these contenders with node --cpu-prof (bench/results/profiles/)
  --phases sync,big,steady,indep,controller   run only these phases (default: all but real)
  --indep-pods 10000,50000    independent phase (issue 29's outside harness): sizes
  --indep-events 200000       independent phase: MODIFIED events generated live per contender and size
  --indep-reps 5              independent phase: repetitions (5: whether V8's first major GC falls inside a
                              10 000-pod sync moves that sync's CPU by 50-150 ms; a median of 3 turns on it)
  --indep-only raw,client-node,ki-dist   independent phase: contenders (add ki-1: the same from src/)
  --indep-shape list=whole,events=replay,chunk=event,pod=bench   independent phase: change the served shape one
                              variable at a time towards the fake server's (default: list=paged,events=live,
                              chunk=64k,pod=indep — the outside harness's)
  --kubeconfig FILE           the real phase, against the kube-apiserver of FILE's current context: pods
                              written into a fresh namespace, initial sync at each --pods size, watch
                              throughput under a writer (--events patches) on the first size, then the
                              pods deleted. Alone it means --phases real --pods 10000,50000 --events 20000
                              --reps 3 --only raw,client-node,ki-1,client-go (each can be overridden)
  --writers 32                real phase: the writer's requests in flight
  --real-rate 0               real phase: patches/s during the watch, the same for every contender (0 = as
                              fast as the server accepts them, which varies from one contender's run to the next)
  --phases operator           with --kubeconfig: the same operator (a BenchSet CRD owning ConfigMaps) as
                              controller-runtime, kube-informer's Controller and a hand-written client-node
                              loop — converge time, reconciles/s, write→reconcile latency, CPU, peak RSS
  --phases stream             with --kubeconfig: streaming lists against paged lists — --stream-informers
                              informers started at once over --stream-pods pods (client and API server
                              peak RSS), and one informer's relist after a 410 (peak heap ÷ steady heap)
  --stream-pods 50000         stream phase: pods written once (--quick: 2000)
  --stream-informers 8        stream phase: informers started at once
  --stream-reps 2             stream phase: repetitions of each side (--quick: 1)
  --apiserver-pid PID         stream phase: kube-apiserver's process (default: found by the kubeconfig's port)
  --stream-keep               stream phase: leave the namespace and its pods (for a later --stream-namespace)
  --stream-namespace NS       stream phase: use NS's pods as they are (no writes, no cleanup)
  --stream-parts sync,relist  stream phase: which parts run (default both)
  --stream-first paged        stream phase: the side that goes first (then they alternate); the API server's
                              RSS after a side carries over to the next
  --stream-label TEXT         stream phase: names this run's code in the tables; with --merge of a run on the
                              same --stream-namespace, that run's rows are kept beside this one's
  --operator-primaries 1000,10000   operator phase: BenchSets per size
  --operator-children 2       operator phase: ConfigMaps per BenchSet
  --operator-concurrency 4    operator phase: reconciles at once, every side
  --operator-rate 50          operator phase: spec writes/s after converge (latency)
  --operator-seconds 20       operator phase: how long those writes go on
  --operator-reps 3           operator phase: repetitions at up to 1000 BenchSets
  --operator-reps-large 1     operator phase: repetitions above 1000 BenchSets
  --operator-only controller-runtime,kube-informer,client-node   operator phase: sides
  --operator-ki-flags --max-semi-space-size=1   operator phase: node flags of the kube-informer side
                              (comma-separated; '' for none)
  --operator-profile kube-informer   operator phase: run these Node sides' saturation restarts with node
                              --cpu-prof (bench/results/profiles/operator-*; npx tsx bench/profile-summary.ts DIR)
  --phases storm              with --kubeconfig: the restart storm — --storm-primaries BenchSets converged,
                              then each side restarted --storm-creations times, a new BenchSet created
                              --storm-delay-ms into each storm; its create → first reconcile (bench/lib/storm-phase.ts)
  --storm-primaries 10000     storm phase: BenchSets in place (--quick: 1000)
  --storm-creations 20        storm phase: restarts per side, one new BenchSet each (--quick: 3)
  --storm-delay-ms 1000       storm phase: from the side's first reconcile to the create
  --storm-work-ms 1           storm phase: ms each reconcile waits first (an outside call), every side
  --storm-concurrency 4       storm phase: reconciles at once, every side
  --storm-only kube-informer,kube-informer-fifo,controller-runtime   storm phase: sides (with --merge of a
                              storm run of the same shape, the other sides' runs are kept)
  --merge FILE                start from this results file: the phases run replace their sections
  --controller-keys 50000     controller phase: keys in the keys/s burst
  --controller-reps 5         controller phase: repetitions (the two sides alternate)
  --controller-rate 500       controller phase: writes/s of the latency measurement
  --controller-seconds 10     controller phase: how long the writes go on, per side and repetition
  --quick                     small sizes, one rep, for development (a few minutes)
  --render-only FILE          re-render docs/benchmarks.md and the SVGs from a results file
  --no-docs                   write bench/results/ only
  --no-build                  reuse .cache/bench-build and dist/ as the last run left them (development)`;

/** Parses `argv` (without node and script). Throws with the usage text on a bad flag. */
export function parseArgs(argv: string[]): BenchArgs {
  const quick = argv.includes('--quick');
  const a: BenchArgs = quick
    ? { pods: [2000, 5000], events: 10000, reps: 1, big: 0, steadyMinutes: 0.25, steadyRate: 50, steadyPods: 2000, contenders: [...FAKE_CONTENDERS], profile: [], noDocs: false, noBuild: false, quick, phases: [...DEFAULT_PHASES], writers: 32, realRate: 0, operator: { primaries: [200], children: 2, concurrency: 4, rate: 50, seconds: 5, reps: 1, repsLarge: 1, sides: [...OPERATOR_SIDES], kiNodeFlags: [...KI_NODE_FLAGS], profile: [] }, stream: { pods: 2000, informers: 8, reps: 1, writers: 32 }, storm: { primaries: 1000, children: 2, concurrency: 4, creations: 3, delayMs: 1000, workMs: 1, sides: [...STORM_SIDES], kiNodeFlags: [...KI_NODE_FLAGS] }, controller: { keys: 10000, reps: 1, rate: 200, seconds: 2 }, indep: { pods: [2000], events: 20000, reps: 1, contenders: [...INDEP_CONTENDERS], shape: { ...DEFAULT_SHAPE } } }
    : { pods: [10000, 50000, 100000], events: 200000, reps: 5, big: 200000, steadyMinutes: 10, steadyRate: 50, steadyPods: 10000, contenders: [...FAKE_CONTENDERS], profile: [], noDocs: false, noBuild: false, quick, phases: [...DEFAULT_PHASES], writers: 32, realRate: 0, operator: { primaries: [1000, 10000], children: 2, concurrency: 4, rate: 50, seconds: 20, reps: 3, repsLarge: 1, sides: [...OPERATOR_SIDES], kiNodeFlags: [...KI_NODE_FLAGS], profile: [] }, stream: { pods: 50000, informers: 8, reps: 2, writers: 32 }, storm: { primaries: 10000, children: 2, concurrency: 4, creations: 20, delayMs: 1000, workMs: 1, sides: [...STORM_SIDES], kiNodeFlags: [...KI_NODE_FLAGS] }, controller: { keys: 50000, reps: 5, rate: 500, seconds: 10 }, indep: { pods: [10000, 50000], events: 200000, reps: 5, contenders: [...INDEP_CONTENDERS], shape: { ...DEFAULT_SHAPE } } };
  const given = new Set<string>();
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
  const sides = (v: string | undefined, flag: string, allowed: readonly OperatorSideId[]): OperatorSideId[] => {
    const list = (v ?? '').split(',').filter(Boolean) as OperatorSideId[];
    for (const id of list) if (!allowed.includes(id)) throw new Error(`${flag}: not one of ${allowed.join(', ')}: ${id}\n${USAGE}`);
    return list;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const v = argv[i + 1];
    given.add(flag);
    switch (flag) {
      case '--quick': continue;
      case '--no-docs': a.noDocs = true; continue;
      case '--no-build': a.noBuild = true; continue;
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
      case '--kubeconfig': if (!v) throw new Error(`${flag} needs a file\n${USAGE}`); a.kubeconfig = v; break;
      case '--writers': a.writers = Math.max(1, num(v, flag)); break;
      case '--real-rate': a.realRate = Math.max(0, num(v, flag)); break;
      case '--phases': {
        const list = (v ?? '').split(',').filter(Boolean) as Phase[];
        for (const p of list) if (!ALL_PHASES.includes(p)) throw new Error(`${flag}: unknown phase ${p}\n${USAGE}`);
        a.phases = list;
        break;
      }
      case '--indep-pods': a.indep.pods = (v ?? '').split(',').map((x) => num(x, flag)); break;
      case '--indep-events': a.indep.events = Math.max(1, num(v, flag)); break;
      case '--indep-reps': a.indep.reps = Math.max(1, num(v, flag)); break;
      case '--indep-only': a.indep.contenders = ids(v, flag); break;
      case '--indep-shape':
        for (const kv of (v ?? '').split(',').filter(Boolean)) {
          const [k, val] = kv.split('=') as [keyof IndepShape, string];
          const allowed: Record<keyof IndepShape, string[]> = { list: ['paged', 'whole'], events: ['live', 'replay'], chunk: ['64k', 'event'], pod: ['indep', 'bench'] };
          if (!(k in allowed) || !allowed[k].includes(val)) throw new Error(`${flag}: ${kv}?\n${USAGE}`);
          (a.indep.shape as unknown as Record<string, string>)[k] = val;
        }
        break;
      case '--operator-primaries': a.operator.primaries = (v ?? '').split(',').map((x) => num(x, flag)).filter((x) => x > 0); break;
      case '--operator-children': a.operator.children = Math.max(1, num(v, flag)); break;
      case '--operator-concurrency': a.operator.concurrency = Math.max(1, num(v, flag)); break;
      case '--operator-rate': a.operator.rate = Math.max(1, num(v, flag)); break;
      case '--operator-seconds': a.operator.seconds = num(v, flag); break;
      case '--operator-reps': a.operator.reps = Math.max(1, num(v, flag)); break;
      case '--operator-reps-large': a.operator.repsLarge = Math.max(1, num(v, flag)); break;
      case '--operator-ki-flags': a.operator.kiNodeFlags = (v ?? '').split(',').filter((f) => f !== ''); break;
      case '--operator-only': a.operator.sides = sides(v, flag, OPERATOR_SIDES); break;
      case '--operator-profile': a.operator.profile = sides(v, flag, OPERATOR_SIDES.filter((id) => id !== 'controller-runtime')); break;
      case '--stream-pods': a.stream.pods = Math.max(1, num(v, flag)); break;
      case '--stream-informers': a.stream.informers = Math.max(1, num(v, flag)); break;
      case '--stream-reps': a.stream.reps = Math.max(1, num(v, flag)); break;
      case '--apiserver-pid': a.stream.apiServerPid = num(v, flag); break;
      case '--stream-namespace': if (!v) throw new Error(`${flag} needs a namespace\n${USAGE}`); a.stream.namespace = v; break;
      case '--stream-keep': a.stream.keep = true; continue;
      case '--stream-label': a.stream.label = v; break;
      case '--stream-first': if (v !== 'streaming' && v !== 'paged') throw new Error(`${flag}: streaming or paged\n${USAGE}`); a.stream.first = v; break;
      case '--stream-parts': a.stream.parts = (v ?? '').split(',').filter((p): p is 'sync' | 'relist' => p === 'sync' || p === 'relist'); break;
      case '--storm-primaries': a.storm.primaries = Math.max(1, num(v, flag)); break;
      case '--storm-creations': a.storm.creations = Math.max(1, num(v, flag)); break;
      case '--storm-delay-ms': a.storm.delayMs = num(v, flag); break;
      case '--storm-work-ms': a.storm.workMs = num(v, flag); break;
      case '--storm-concurrency': a.storm.concurrency = Math.max(1, num(v, flag)); break;
      case '--storm-only': {
        const list = (v ?? '').split(',').filter(Boolean) as StormSideId[];
        for (const id of list) if (!STORM_SIDES.includes(id)) throw new Error(`${flag}: not one of ${STORM_SIDES.join(', ')}: ${id}\n${USAGE}`);
        a.storm.sides = list;
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
  if (a.kubeconfig !== undefined) {
    if (!given.has('--phases')) a.phases = ['real'];
    if (!given.has('--pods')) a.pods = quick ? [2000, 5000] : [10000, 50000];
    if (!given.has('--events')) a.events = quick ? 5000 : 20000;
    if (!given.has('--reps')) a.reps = quick ? 1 : 3;
    if (!given.has('--only')) a.contenders = [...REAL_CONTENDERS];
  } else if (a.phases.includes('real') || a.phases.includes('operator') || a.phases.includes('stream') || a.phases.includes('storm')) {
    throw new Error(`--phases real, operator, stream and storm need --kubeconfig FILE\n${USAGE}`);
  }
  return a;
}
