// HTTP(S) requests to the KubeConfig's current cluster: credentials, a keep-alive agent, abort handling.

import http from 'node:http';
import https from 'node:https';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import { AbortedError, deepEqual, KubeInformerError } from '../core/index.js';
import { channels, publish } from '../observability/channels.js';
import { KubeConfigError, toNetworkError } from './errors.js';

/**
 * The part of a client-node `KubeConfig` the adapter uses: present, with the same meaning, in
 * `@kubernetes/client-node` 1.4 and 2.x. Any object with these three methods works (handy in tests).
 */
export type KubeConfigLike = Pick<KubeConfig, 'getCurrentCluster' | 'getCurrentUser' | 'applyToHTTPSOptions'>;

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
    return this.#attempt(target, method, path, headers, request.body, signal, true);
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
