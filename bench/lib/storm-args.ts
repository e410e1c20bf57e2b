// The storm phase's flags and sides: what bench/lib/args.ts parses and bench/lib/storm-phase.ts runs, in a file of their own so neither imports the other.

/** The storm phase's sides, in table order. */
export type StormSideId = 'kube-informer' | 'kube-informer-fifo' | 'controller-runtime';
/** Every side of the storm phase. */
export const STORM_SIDES: StormSideId[] = ['kube-informer', 'kube-informer-fifo', 'controller-runtime'];

/** The storm phase's flags (`--storm-*`). */
export interface StormArgs {
  /** Primaries (BenchSets) in place, converged, before the restarts. Default 10 000. */
  primaries: number;
  /** ConfigMaps per BenchSet. Default 2 (the operator phase's). */
  children: number;
  /** Reconciles at once, every side. Default 4 (the operator phase's). */
  concurrency: number;
  /** Restarts per side, one new primary created in each. Default 20. */
  creations: number;
  /** Milliseconds from the restarted side's first reconcile to the new primary's create. Default 1 000. */
  delayMs: number;
  /** Milliseconds each reconcile waits first, standing for an outside call, every side. Default 1. */
  workMs: number;
  sides: StormSideId[];
  /** Node flags of the kube-informer sides (besides `--max-old-space-size=8192`); default the operator phase's. */
  kiNodeFlags: string[];
}
