// What a test left open: the process's active handles (sockets, servers, timers) beyond a baseline
// taken before, for tests that must prove a stop released everything while other things stay open
// (a server the test still uses). Incident 4: stopping releases everything, and tests prove it.

/** The active handles now, sorted (the terminal's and the worker's pipes left out). */
export const openHandles = (): string[] => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap').sort();

/**
 * What is open now beyond `before` (a multiset difference), once closing handles had time to go:
 * up to `tries` waits of a loop turn (`delayMs` 0) or of `delayMs` real milliseconds (a socket to a real
 * server takes a few). Defaults: 50 tries, a loop turn each.
 */
export async function leftoverHandles(before: readonly string[], { tries = 50, delayMs = 0 }: { tries?: number; delayMs?: number } = {}): Promise<string[]> {
  const diff = (): string[] => {
    const budget = new Map<string, number>();
    for (const r of before) budget.set(r, (budget.get(r) ?? 0) + 1);
    return openHandles().filter((r) => {
      const n = budget.get(r) ?? 0;
      budget.set(r, n - 1);
      return n <= 0;
    });
  };
  const wait = (): Promise<void> => new Promise((resolve) => (delayMs === 0 ? setImmediate(resolve) : setTimeout(resolve, delayMs)));
  for (let i = 0; i < tries && diff().length > 0; i++) await wait();
  return diff();
}
