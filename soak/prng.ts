// A small seeded PRNG (mulberry32) so a soak's operations and faults are reproducible from its seed.

/**
 * A deterministic pseudo-random generator: the same seed always yields the same sequence. Not for
 * cryptography; quality is plenty for choosing workload operations and fault times.
 */
export class Prng {
  #state: number;

  /** `seed` is any integer; it is reduced to 32 bits. */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A uniform float in `[0, 1)`. */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
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
