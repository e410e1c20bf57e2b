// Whether an API server serves streaming lists (WatchList, KEP-3157): learnt once per server and
// remembered for the whole process, so informers starting together pay at most one refused attempt.

/**
 * What is known of one server's streaming lists: `unknown` until a streaming list was answered,
 * `supported` once one opened, `unsupported` once the server refused the request as invalid (the
 * `WatchList` feature gate off, or a server that predates it).
 */
export type WatchListVerdict = 'unknown' | 'supported' | 'unsupported';

/**
 * One server's entry (see {@link watchListSupportOf}). While the verdict is unknown, the first caller
 * of {@link WatchListSupport.claim} tries a streaming list; the others wait for what it learns
 * ({@link WatchListSupport.settled}) rather than each sending a request the server may refuse.
 */
export class WatchListSupport {
  /** The identity the entry is kept under (the server URL, user and API group version). */
  readonly identity: string;
  #verdict: WatchListVerdict = 'unknown';
  #reason: string | undefined;
  /** Resolved when the attempt in flight is settled; undefined while no attempt is in flight. */
  #attempt: { readonly done: Promise<void>; readonly resolve: () => void } | undefined;

  /** `identity` names the server (see {@link WatchListSupport.identity}). */
  constructor(identity: string) {
    this.identity = identity;
  }

  /** What is known. */
  get verdict(): WatchListVerdict {
    return this.#verdict;
  }

  /** Why the server was found not to support streaming lists (its answer), once it was. */
  get reason(): string | undefined {
    return this.#reason;
  }

  /** True while one caller's attempt is deciding the verdict. */
  get attempting(): boolean {
    return this.#attempt !== undefined;
  }

  /**
   * True when the caller should try a streaming list and then {@link WatchListSupport.settle} the
   * verdict: the verdict is unknown and nobody else is trying. False when it is known, or another
   * caller is trying (wait for it with {@link WatchListSupport.settled}).
   */
  claim(): boolean {
    if (this.#verdict !== 'unknown' || this.#attempt !== undefined) return false;
    let resolve!: () => void;
    const done = new Promise<void>((r) => { resolve = r; });
    this.#attempt = { done, resolve };
    return true;
  }

  /**
   * Ends the attempt of the caller that claimed it: `supported` or `unsupported` (with the server's
   * answer) is kept for the life of the process; `unknown` (the attempt failed for another reason, or
   * was abandoned) lets the next caller try. A known verdict is never changed.
   */
  settle(verdict: WatchListVerdict, reason?: string): void {
    if (this.#verdict === 'unknown' && verdict !== 'unknown') {
      this.#verdict = verdict;
      if (verdict === 'unsupported') this.#reason = reason;
    }
    const attempt = this.#attempt;
    this.#attempt = undefined;
    attempt?.resolve();
  }

  /** Resolves when no attempt is in flight (at once when none is), or when `signal` aborts. */
  settled(signal: AbortSignal): Promise<void> {
    const attempt = this.#attempt;
    if (attempt === undefined || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const onAbort = (): void => resolve();
      signal.addEventListener('abort', onAbort, { once: true });
      void attempt.done.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }
}

/** The process-wide entries, by identity. */
const entries = new Map<string, WatchListSupport>();

/** The entry of the server named by `identity` (a `ListerWatcher`'s `serverIdentity`), made on first use. */
export function watchListSupportOf(identity: string): WatchListSupport {
  let entry = entries.get(identity);
  if (entry === undefined) {
    entry = new WatchListSupport(identity);
    entries.set(identity, entry);
  }
  return entry;
}

/**
 * Forgets every verdict (a server upgraded in place, or a test that reuses an address). Attempts in
 * flight are settled as `unknown` first, so nobody waits on a forgotten entry.
 */
export function forgetWatchListSupport(): void {
  for (const entry of entries.values()) if (entry.attempting) entry.settle('unknown');
  entries.clear();
}
