// The operator phase's flags and sides: what bench/lib/args.ts parses and bench/lib/operator-phase.ts runs, in a file of their own so neither imports the other.

/** The sides, in table order. */
export type OperatorSideId = 'controller-runtime' | 'kube-informer' | 'client-node';
/** Every side. */
export const OPERATOR_SIDES: OperatorSideId[] = ['controller-runtime', 'kube-informer', 'client-node'];

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
  /** Node sides whose saturation restart runs under `node --cpu-prof` (bench/results/profiles/). */
  profile: OperatorSideId[];
}
