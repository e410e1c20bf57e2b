// A seeded pseudo-random generator, so randomized tests, workloads and fault schedules replay exactly.

/**
 * Returns a generator of floats in [0, 1) (mulberry32): the same seed gives the same sequence, so a
 * randomized test can print its seed on failure and be replayed from it.
 *
 * Warning: not for anything security-related; it is a fast, small, predictable generator.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
