// Helpers over the test kit's seeded generator, so a soak's operations and faults replay from its seed.

import { seededRandom } from '../src/testing/index.js';

/**
 * A deterministic pseudo-random generator (the test kit's `seededRandom`) with the choices the soak
 * needs: the same seed always yields the same sequence. Not for cryptography.
 */
export class Prng {
  readonly #next: () => number;

  /** `seed` is any integer; it is reduced to 32 bits. */
  constructor(seed: number) {
    this.#next = seededRandom(seed);
  }

  /** A uniform float in `[0, 1)`. */
  next(): number {
    return this.#next();
  }

  /** A uniform integer in `[min, max]` (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Prng.pick on an empty array');
    return items[Math.floor(this.next() * items.length)];
  }

  /** A lowercase alphanumeric string of `length` characters. */
  string(length: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let s = '';
    for (let i = 0; i < length; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }

  /** A new generator seeded from this one: lets two streams (workload, faults) stay independent. */
  fork(): Prng {
    return new Prng(Math.floor(this.next() * 4294967296));
  }
}

/** Parses a `--seed` value: `7`, `1,2,3` or `1-4`. */
export function parseSeeds(value: string): number[] {
  const seeds: number[] = [];
  for (const part of value.split(',')) {
    const m = /^(\d+)-(\d+)$/.exec(part.trim());
    if (m !== null) for (let s = Number(m[1]); s <= Number(m[2]); s++) seeds.push(s);
    else if (/^\d+$/.test(part.trim())) seeds.push(Number(part.trim()));
    else throw new Error(`bad --seed "${value}"`);
  }
  return seeds;
}
