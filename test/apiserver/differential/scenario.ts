// The shape of a differential scenario: written once, run against each server with its own Wire.

import type { Wire } from './wire.js';

/** One scenario: a name and requests sent through `w` in the namespace `ns` (created before it runs). */
export interface Scenario {
  /** Unique; the prefix of every key its requests are compared under. */
  name: string;
  /** Sends the scenario's requests; must not branch on which server it talks to. */
  run(w: Wire, ns: string): Promise<void>;
}
