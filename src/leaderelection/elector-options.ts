// The rules of the LeaderElector's options, for the one option validator (internal: not in the barrel).

import type { OptionSchemaFor } from '../core/options.js';
import type { LeaderElectorOptions } from './elector.js';

/** The rules of {@link LeaderElectorOptions} (`runWhileLeading` and the Manager check theirs with it). */
export const LEADER_ELECTOR_OPTION_SCHEMA = {
  lock: 'any', // required; checked by the constructor
  leaseDurationMs: 'positiveDuration',
  renewDeadlineMs: 'positiveDuration',
  retryPeriodMs: 'positiveDuration',
  releaseOnCancel: 'boolean',
  name: 'string',
  clock: 'clock',
  random: 'function',
  onStartedLeading: 'function',
  onStoppedLeading: 'function',
  onNewLeader: 'function',
} as const satisfies OptionSchemaFor<LeaderElectorOptions>;
