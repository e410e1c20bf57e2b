// HTTP(S) requests to the KubeConfig's current cluster: credentials, a keep-alive agent, abort handling.

import http from 'node:http';
import https from 'node:https';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { AbortedError, ApiStatusError, deepEqual, KubeInformerError } from '../core/index.js';
import { channels, publish } from '../observability/channels.js';
import { KubeConfigError, statusErrorFromResponse, toNetworkError } from './errors.js';

/**
 * The part of a client-node `KubeConfig` the adapter uses: present, with the same meaning, in
 * `@kubernetes/client-node` 1.4 and 2.x. Any object with these three methods works (handy in tests).
 */
export type KubeConfigLike = Pick<KubeConfig, 'getCurrentCluster' | 'getCurrentUser' | 'applyToHTTPSOptions'>;

/**
 * A KubeConfig whose credentials can be read again from where they come from (the in-cluster one: its
 * token file). After a 401 the transport calls `reloadCredentials()` once and, when the credentials it
 * then applies differ from those the request carried, sends the request once more.
 */
export interface ReloadableCredentials {
  /**
   * Reads the credentials again; resolves with where they come from, for the error of a second 401
   * (`the service-account token file /var/run/…/token`). A rejection fails the request with it.
   */
  reloadCredentials(): Promise<string>;
}

function reloadable(kc: KubeConfigLike): kc is KubeConfigLike & ReloadableCredentials {
  return typeof (kc as Partial<ReloadableCredentials>).reloadCredentials === 'function';
}

const MAX_401_BODY_BYTES = 64 * 1024;

/** The TLS settings a KubeConfig produces; an agent is reused while they stay the same. */
const TLS_FIELDS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;
type TlsSettings = Pick<https.AgentOptions, (typeof TLS_FIELDS)[number]>;

/** Same settings: strings and flags by value, Buffers byte by byte, lists and `{ pem, passphrase }` objects deeply, a `KeyObject` by identity. */
function sameTls(a: TlsSettings, b: TlsSettings): boolean {
  return TLS_FIELDS.every((f) => deepEqual(a[f], b[f]));
}

/** Everything needed to send one request, resolved from the KubeConfig just before sending. */
interface Target {
  module: typeof http | typeof https;
  hostname: string;
  port: string;
  basePath: string;
  headers: Record<string, string>;
  auth: string | undefined;
  agent: http.Agent;
}

/** A request whose response headers arrived. Call `release` once done with `res` (idempotent). */
export interface OpenResponse {
  req: http.ClientRequest;
  res: http.IncomingMessage;
  release: () => void;
}

function noop(): void {}

/** What {@link Transport.send} sends besides the method and path. */
export interface SendRequest {
  /** The `Accept` header. */
  accept: string;
  /** The body, as text. Default: none. */
  body?: string;
  /** The body's `Content-Type`. Default `application/json` (when there is a body). */
  contentType?: string;
}

/** Options of a {@link Transport}. */
export interface TransportOptions {
  /** Reuse connections between requests. Default `true`. Ignored when `agent` is given. */
  keepAlive?: boolean;
  /** Use this agent instead of one built from the KubeConfig's TLS settings. Default: none. */
  agent?: http.Agent;
  /** The `User-Agent` header. Default `'kube-informer'`. */
  userAgent?: string;
}

/**
 * Sends requests (lists and watches, and the writes of `ResourceClient`) to the current cluster of a KubeConfig. Credentials are applied per request
 * through `applyToHTTPSOptions` (so exec plugins can refresh tokens); the connection pool is our own
 * keep-alive agent, rebuilt only when the TLS settings change (a proxied cluster uses client-node's
 * proxy agent instead).
 */
export class Transport {
  #kubeConfig: KubeConfigLike;
  #keepAlive: boolean;
  #givenAgent: http.Agent | undefined;
  #userAgent: string;
  #agent: http.Agent | undefined;
  #agentTls: TlsSettings | undefined;
  #agentModule: typeof http | typeof https | undefined;

  constructor(kubeConfig: KubeConfigLike, options: TransportOptions = {}) {
    this.#kubeConfig = kubeConfig;
    this.#keepAlive = options.keepAlive ?? true;
    this.#givenAgent = options.agent;
    this.#userAgent = options.userAgent ?? 'kube-informer';
  }

  /** Closes every pooled connection of the agent this transport built (a given agent is left alone). */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
    this.#agentTls = undefined;
  }

  /**
   * Sends `GET basePath + pathAndQuery` and resolves once the response headers arrived, whatever the
   * status. Rejects with `AbortedError` when `signal` aborts first (the socket is destroyed),
   * `NetworkError` when the request fails below HTTP, `KubeConfigError` when the KubeConfig cannot
   * produce a target. After resolving, an abort destroys the request and so ends the response body.
   */
  get(pathAndQuery: string, accept: string, signal: AbortSignal): Promise<OpenResponse> {
    return this.send('GET', pathAndQuery, { accept }, signal);
  }

  /**
   * Sends `method basePath + pathAndQuery` with an optional body, as {@link Transport.get} does (same
   * credentials, pool, abort handling and errors); resolves once the response headers arrived.
   */
  async send(method: string, pathAndQuery: string, request: SendRequest, signal: AbortSignal): Promise<OpenResponse> {
    if (signal.aborted) throw new AbortedError(`${method} ${pathAndQuery} was aborted before it was sent`);
    const target = await this.#target();
    if (signal.aborted) throw new AbortedError(`${method} ${pathAndQuery} was aborted before it was sent`);
    const path = target.basePath + pathAndQuery;
    const headers: Record<string, string> = { ...target.headers, Accept: request.accept, 'User-Agent': this.#userAgent };
    if (request.body !== undefined) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(request.body));
    }
    const open = await this.#attempt(target, method, path, headers, request.body, signal, true);
    if (open.res.statusCode !== 401 || !reloadable(this.#kubeConfig)) return open;
    return this.#afterUnauthorized(this.#kubeConfig, open, target, method, pathAndQuery, request, signal);
  }

  /**
   * A 401 means the server did not run the request: its credentials were refused (a rotated token
   * whose old binding was deleted, or an expired one the file no longer holds). The credentials are
   * read again once; when they changed the request is sent once more, and its answer returned
   * whatever it is, except a second 401. A 401 with credentials that did not change, or a second 401,
   * rejects with an `ApiStatusError` (401) naming where the credentials come from: never a loop.
   */
  async #afterUnauthorized(kc: KubeConfigLike & ReloadableCredentials, first: OpenResponse, target: Target, method: string, pathAndQuery: string, request: SendRequest, signal: AbortSignal): Promise<OpenResponse> {
    const what = `${method} ${target.basePath + pathAndQuery}`;
    const refused = await this.#statusError(first, what, signal);
    const source = await kc.reloadCredentials();
    const again = await this.#target();
    if (again.headers.Authorization === target.headers.Authorization && again.auth === target.auth) {
      throw unauthorized(refused, `${source} still holds the credentials that were refused`);
    }
    if (signal.aborted) throw new AbortedError(`${what} was aborted before it was sent again`);
    publish(channels.transportRetry, { method, path: again.basePath + pathAndQuery, error: refused });
    const headers: Record<string, string> = { ...again.headers, Accept: request.accept, 'User-Agent': this.#userAgent };
    if (request.body !== undefined) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(request.body));
    }
    const second = await this.#attempt(again, method, again.basePath + pathAndQuery, headers, request.body, signal, true);
    if (second.res.statusCode !== 401) return second;
    throw unauthorized(await this.#statusError(second, what, signal), `the credentials read again from ${source} were refused too`);
  }

  async #statusError(open: OpenResponse, what: string, signal: AbortSignal): Promise<ApiStatusError> {
    try {
      const body = await readBody(open.res, signal, what, MAX_401_BODY_BYTES);
      return statusErrorFromResponse(open.res, body, what);
    } finally {
      open.release();
    }
  }

  /**
   * One try of {@link Transport.send}. A request that failed on a reused keep-alive socket before any
   * response arrived — the server had closed that idle connection, and the client learnt it only by
   * writing to it ("socket hang up", ECONNRESET, EPIPE) — is sent once more on a fresh connection when
   * it is a GET or HEAD (`retry`), as undici does: the server never saw it, so this costs a connection,
   * not a relist. The retry is published on the `transportRetry` channel.
   */
  #attempt(target: Target, method: string, path: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal, retry: boolean): Promise<OpenResponse> {
    const what = `${method} ${path}`;
    return new Promise<OpenResponse>((resolve, reject) => {
      let settled = false;
      let released = false;
      let response: http.IncomingMessage | undefined;
      let req: http.ClientRequest;
      try {
        req = target.module.request({
          method,
          hostname: target.hostname,
          port: target.port,
          path,
          agent: target.agent,
          auth: target.auth,
          headers,
        });
      } catch (err) {
        // Node refuses the request outright: a header value with invalid characters, most likely.
        const text = err instanceof Error ? err.message : String(err);
        reject(new KubeConfigError(`${what}: the request could not be built from the KubeConfig: ${text}`, { cause: err }));
        return;
      }
      const onAbort = (): void => {
        req.destroy();
        if (!settled) {
          settled = true;
          reject(new AbortedError(`${what} was aborted while connecting`));
        }
      };
      const release = (): void => {
        if (released) return;
        released = true;
        signal.removeEventListener('abort', onAbort);
        if (response === undefined || !response.complete) req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: Error) => {
        if (settled) return;
        settled = true;
        release();
        if (retry && !signal.aborted && req.reusedSocket && SAFE_METHODS.has(method) && isStaleConnection(err)) {
          publish(channels.transportRetry, { method, path, error: err });
          // The other idle sockets to this server were left as long: drop them, so the retry connects afresh.
          if (target.agent === this.#agent) destroyIdleSockets(target.agent);
          resolve(this.#attempt(target, method, path, headers, body, signal, false));
          return;
        }
        reject(signal.aborted ? new AbortedError(`${what} was aborted`, { cause: err }) : toNetworkError(err, what));
      });
      req.on('response', (res: http.IncomingMessage) => {
        // Errors of the body surface through whoever reads it; this keeps one from being "unhandled".
        res.on('error', noop);
        if (settled) {
          res.destroy();
          return;
        }
        settled = true;
        response = res;
        resolve({ req, res, release });
      });
      req.end(body);
    });
  }

  async #target(): Promise<Target> {
    const kc = this.#kubeConfig;
    let cluster: Cluster | null;
    try {
      cluster = kc.getCurrentCluster();
    } catch (err) {
      throw new KubeConfigError(`the KubeConfig has no usable current cluster: ${String(err)}`, { cause: err });
    }
    if (cluster === null || typeof cluster.server !== 'string' || cluster.server === '') {
      throw new KubeConfigError('the KubeConfig has no current cluster with a server URL');
    }
    let url: URL;
    try {
      url = new URL(cluster.server);
    } catch (err) {
      throw new KubeConfigError(`the cluster server URL does not parse: ${cluster.server}`, { cause: err });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new KubeConfigError(`the cluster server URL must be http: or https:, got ${cluster.server}`);
    }
    const opts: https.RequestOptions = {};
    try {
      await kc.applyToHTTPSOptions(opts);
    } catch (err) {
      if (err instanceof KubeInformerError) throw err;
      const text = err instanceof Error ? err.message : String(err);
      throw new KubeConfigError(`the KubeConfig could not supply credentials: ${text}`, { cause: err });
    }
    // client-node skips all TLS settings when the context has no user; apply the cluster's own then.
    if (kc.getCurrentUser() === null) {
      if (cluster.skipTLSVerify) opts.rejectUnauthorized = false;
      if (cluster.tlsServerName !== undefined) opts.servername = cluster.tlsServerName;
      if (cluster.caData !== undefined) opts.ca = Buffer.from(cluster.caData, 'base64');
    }
    const module = url.protocol === 'https:' ? https : http;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(opts.headers ?? {})) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    let agent: http.Agent;
    if (this.#givenAgent !== undefined) agent = this.#givenAgent;
    else if (cluster.proxyUrl !== undefined && cluster.proxyUrl !== '' && opts.agent instanceof http.Agent) {
      agent = opts.agent;
    } else agent = this.#pooledAgent(module, opts);
    return {
      module,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: url.port !== '' ? url.port : url.protocol === 'https:' ? '443' : '80',
      basePath: url.pathname.replace(/\/+$/, ''),
      headers,
      auth: typeof opts.auth === 'string' ? opts.auth : undefined,
      agent,
    };
  }

  #pooledAgent(module: typeof http | typeof https, opts: https.RequestOptions): http.Agent {
    const tls: TlsSettings = {};
    for (const field of TLS_FIELDS) {
      if (opts[field] !== undefined) (tls as Record<string, unknown>)[field] = opts[field];
    }
    if (this.#agent !== undefined && this.#agentModule === module && sameTls(this.#agentTls ?? {}, tls)) {
      return this.#agent;
    }
    const previous = this.#agent;
    if (previous !== undefined) {
      // Requests in flight on the old agent finish; its sockets are not kept once they are free.
      previous.keepSocketAlive = () => false;
      for (const sockets of Object.values(previous.freeSockets)) for (const s of sockets ?? []) s.destroy();
    }
    const agentOptions = { keepAlive: this.#keepAlive, scheduling: 'lifo' as const };
    this.#agent = module === https ? new https.Agent({ ...agentOptions, ...tls }) : new http.Agent(agentOptions);
    this.#agentTls = tls;
    this.#agentModule = module;
    return this.#agent;
  }
}

/**
 * Methods retried after a stale keep-alive connection: reads, which the server cannot have applied
 * (undici's default idempotent set). PUT and DELETE are left out: had the server applied the first
 * one, the retry would answer 409 or 404 for a write that happened.
 */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** The errors of a write to a connection the server had already closed. */
function isStaleConnection(err: Error): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** Closes every idle pooled socket of `agent` (those in use finish their request). */
function destroyIdleSockets(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}

/** The error of a 401 that reading the credentials again did not cure. */
function unauthorized(refused: ApiStatusError, why: string): ApiStatusError {
  return new ApiStatusError(401, `${refused.message} (${why})`, { reason: refused.reason, status: refused.status, cause: refused });
}

/**
 * Reads a whole body into one Buffer (never one string: a list may exceed V8's string limit), up to
 * `limit` bytes when given; an abort rejects with `AbortedError`, a broken connection with `NetworkError`.
 */
export async function readBodyBytes(res: http.IncomingMessage, signal: AbortSignal, what: string, limit?: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      length += chunk.length;
      if (limit !== undefined && length >= limit) break;
    }
  } catch (err) {
    if (signal.aborted) throw new AbortedError(`${what} was aborted while reading the response`, { cause: err });
    throw toNetworkError(err, `${what}: reading the response failed`);
  }
  if (signal.aborted) throw new AbortedError(`${what} was aborted while reading the response`);
  if (chunks.length === 1) return chunks[0];
  const whole = Buffer.concat(chunks, length);
  chunks.length = 0;
  return whole;
}

/** Reads a whole (error) body as text; see {@link readBodyBytes}. */
export async function readBody(res: http.IncomingMessage, signal: AbortSignal, what: string, limit?: number): Promise<string> {
  return (await readBodyBytes(res, signal, what, limit)).toString('utf8');
}
