// A service-account token read from a file the kubelet rewrites: re-read when the file changed, before the token's expiry, and on demand after a 401.

import { readFileSync, statSync, type Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { wallTime, type Clock } from '../core/clock.js';
import { errorFields, formatWallTime, RateLimitedLog, type Logger } from '../core/log.js';
import { InClusterConfigError } from './errors.js';

/**
 * The share of a token's life after which it is re-read, whether or not the file changed: 0.8, the
 * point at which the kubelet itself rotates a projected token (so the new one is usually there).
 */
export const TOKEN_REFRESH_FRACTION = 0.8;

/** What {@link TokenFile} needs. */
export interface TokenFileOptions {
  /** The token file. */
  path: string;
  /** Times the checks and reads the token's `exp` against its wall clock. */
  clock: Clock;
  /** Where re-reads and failures to re-read are reported. */
  logger: Logger;
  /** The file is looked at (one `stat`) at most this often, before a request. */
  checkIntervalMs: number;
}

/** The claims of a JWT that say when it was issued and when it expires (seconds since the epoch). */
interface Lifetime {
  iat?: number;
  exp?: number;
}

/**
 * Reads the `iat` and `exp` claims of a JWT without verifying it (the API server does that): the token
 * is the client's own, and all it needs to know is when to fetch the next one. `undefined` for a
 * token that is not a JWT (a legacy Secret-based token has no `exp` either way).
 */
export function tokenLifetime(token: string): Lifetime | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (claims === null || typeof claims !== 'object') return undefined;
    const { iat, exp } = claims as Record<string, unknown>;
    return {
      iat: typeof iat === 'number' && Number.isFinite(iat) ? iat : undefined,
      exp: typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined,
    };
  } catch {
    return undefined;
  }
}

/** Same file content as far as `stat` can tell: a kubelet rewrite swaps a symlink, so the inode changes; a plain rewrite changes the times. */
function identity(st: Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

function text(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * A bearer token kept in a file that is rewritten while the process runs (a projected
 * service-account token: the kubelet writes a new one at 80 % of its life, by swapping the `..data`
 * symlink of the volume). The file is read once at construction, synchronously (a missing, unreadable
 * or empty file throws `InClusterConfigError`); afterwards {@link TokenFile.token} looks at the file
 * with one asynchronous `stat` at most every `checkIntervalMs` and reads it again when it changed, and
 * always re-reads it once {@link TOKEN_REFRESH_FRACTION} of the current token's life (its JWT `iat` to
 * `exp`, read without verifying) has passed. No timer: the clock is read when a request asks for the
 * token. {@link TokenFile.reload} re-reads it at once (after a 401).
 */
export class TokenFile {
  /** The file's path. */
  readonly path: string;
  #clock: Clock;
  #log: RateLimitedLog;
  #intervalMs: number;
  #token: string;
  #identity: string;
  #refreshAt = Infinity;
  #expiresAt: number | undefined;
  #nextCheckAt = 0;
  #pending: Promise<string> | undefined;

  constructor(options: TokenFileOptions) {
    this.path = options.path;
    this.#clock = options.clock;
    this.#log = new RateLimitedLog(options.logger, options.clock);
    this.#intervalMs = options.checkIntervalMs;
    let st: Stats;
    let content: string;
    try {
      st = statSync(this.path);
      content = readFileSync(this.path, 'utf8');
    } catch (err) {
      throw this.#unreadable(err);
    }
    this.#token = this.#accept(content);
    this.#identity = identity(st);
    this.#schedule();
  }

  /** The token as last read. */
  get current(): string {
    return this.#token;
  }

  /** When the current token expires (ms since the epoch, from its `exp`), or `undefined` when it does not say. */
  get expiresAt(): number | undefined {
    return this.#expiresAt;
  }

  /**
   * The token to send now: the one last read, after looking at the file when `checkIntervalMs` has
   * passed since the last look (re-read when it changed) or the current token is past
   * {@link TOKEN_REFRESH_FRACTION} of its life (re-read). A file that cannot be looked at or re-read
   * keeps the current token with a warning while that token has not expired, and rejects with
   * `InClusterConfigError` once it has. Concurrent callers share one look.
   */
  token(): Promise<string> {
    if (this.#pending !== undefined) return this.#pending;
    const now = this.#clock.now();
    if (now < this.#nextCheckAt) return Promise.resolve(this.#token);
    const pending = this.#check(now >= this.#refreshAt).finally(() => {
      if (this.#pending === pending) this.#pending = undefined;
    });
    this.#pending = pending;
    return pending;
  }

  /**
   * Reads the file again now (what a 401 calls for) and resolves with the token it holds, changed or
   * not. Rejects with `InClusterConfigError` naming the file when it is missing, unreadable or empty.
   */
  async reload(): Promise<string> {
    let st: Stats;
    let content: string;
    try {
      st = await stat(this.path);
      content = await readFile(this.path, 'utf8');
    } catch (err) {
      throw this.#unreadable(err);
    }
    this.#take(this.#accept(content), identity(st));
    return this.#token;
  }

  async #check(due: boolean): Promise<string> {
    try {
      const st = await stat(this.path);
      const id = identity(st);
      if (due || id !== this.#identity) this.#take(this.#accept(await readFile(this.path, 'utf8')), id);
      this.#log.reset('token-check');
    } catch (err) {
      const expired = this.#expiresAt !== undefined && wallTime(this.#clock) >= this.#expiresAt;
      const failure = err instanceof InClusterConfigError ? err : this.#unreadable(err);
      if (expired) throw new InClusterConfigError(`${failure.message}; the token read before expired at ${formatWallTime(this.#expiresAt!)}`, { cause: err });
      const until = this.#expiresAt === undefined ? '' : ` (valid until ${formatWallTime(this.#expiresAt)})`;
      this.#log.log('warn', 'token-check', `${failure.message}: sending the token read before${until}`, { component: 'in-cluster', file: this.path, ...errorFields(err) });
    }
    this.#schedule();
    return this.#token;
  }

  #take(token: string, id: string): void {
    const changed = token !== this.#token;
    this.#token = token;
    this.#identity = id;
    this.#schedule();
    if (changed) {
      const until = this.#expiresAt === undefined ? {} : { expires: formatWallTime(this.#expiresAt) };
      this.#log.logger.info(`read a new service-account token from ${this.path}`, { component: 'in-cluster', file: this.path, ...until });
    } else if (this.#expiresAt !== undefined && wallTime(this.#clock) >= this.#expiresAt) {
      this.#log.log('warn', 'token-expired', `the token in ${this.path} expired at ${formatWallTime(this.#expiresAt)} and the file was not rewritten`, { component: 'in-cluster', file: this.path });
    }
  }

  /** Checks the content of the file and computes when it is due again; returns the token. */
  #accept(content: string): string {
    const token = content.trim();
    if (token === '') throw new InClusterConfigError(`the service-account token file ${this.path} is empty`);
    const life = tokenLifetime(token);
    const now = this.#clock.now();
    const wallNow = wallTime(this.#clock, now);
    if (life?.exp === undefined) {
      this.#refreshAt = Infinity;
      this.#expiresAt = undefined;
    } else {
      const exp = life.exp * 1000;
      const issued = life.iat !== undefined && life.iat * 1000 < exp ? life.iat * 1000 : Math.min(wallNow, exp);
      this.#refreshAt = now + (issued + TOKEN_REFRESH_FRACTION * (exp - issued) - wallNow);
      this.#expiresAt = exp;
    }
    return token;
  }

  #schedule(): void {
    const now = this.#clock.now();
    this.#nextCheckAt = this.#refreshAt > now ? Math.min(now + this.#intervalMs, this.#refreshAt) : now + this.#intervalMs;
  }

  #unreadable(err: unknown): InClusterConfigError {
    if (err instanceof InClusterConfigError) return err;
    const code = (err as { code?: unknown } | null)?.code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read: ${text(err)}`;
    return new InClusterConfigError(`the service-account token file ${this.path} ${why}`, { cause: err });
  }
}
