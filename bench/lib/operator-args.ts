// The operator phase's flags and sides: what bench/lib/args.ts parses and bench/lib/operator-phase.ts runs, in a file of their own so neither imports the other.

/** The sides, in table order. */
export type OperatorSideId = 'controller-runtime' | 'kube-informer' | 'client-node';
/** Every side. */
export const OPERATOR_SIDES: OperatorSideId[] = ['controller-runtime', 'kube-informer', 'client-node'];

/**
 * The kube-informer side's node flags by default: a young generation of 1 MiB semi-spaces instead of
 * Node 20's up to 16 (docs/operations.md "Memory": what it saves and costs).
 */
export const KI_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/**
 * The options of the kube-informer side's ConfigMap cache, `owns(resources.configmaps, …)` and the
 * `forResource` its reconcile reads (bench/operator/kube-informer.ts passes these; the page prints them).
 * Not `metadataOnly`: the reconcile compares each child's `data` with the set's.
 */
export const KI_OWNS_OPTIONS = { stripManagedFields: true } as const;

/** The operator phase's flags. */
export interface OperatorArgs {
  /** Primaries (BenchSets) per size. */
  primaries: number[];
  /** ConfigMaps per BenchSet. */
  children: number;
  /** Reconciles at once, every side. */
  concurrency: number;
  /** Spec writes per second, and for how long, after converge. */
  rate: number;
  seconds: number;
  /** Repetitions at the sizes up to 1 000 and above. */
  reps: number;
  repsLarge: number;
  sides: OperatorSideId[];
  /** Node flags of the kube-informer side (besides `--max-old-space-size=8192`), e.g. `--max-semi-space-size=1`. */
  kiNodeFlags?: string[];
  /** Node sides whose saturation restart runs under `node --cpu-prof` (bench/results/profiles/). */
  profile: OperatorSideId[];
}
