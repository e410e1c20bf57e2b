// Liveness, readiness and metrics endpoints: a handler to mount in your own node:http server, or a small server of its own.

import { resolveLogger, withFields, type LoggerOption } from '../core/log.js';
import type { ShardRingHealth } from '../sharding/ring-options.js';
import type { HasShardRingHealth } from './informer-metrics.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateOptions, type OptionSchemaFor } from '../core/options.js';
import { healthOf, type InformerHealthSource } from './informer-metrics.js';

/** A prom-client registry as the `/metrics` endpoint uses it (`promClient.register`, or a `new Registry()`). */
export interface MetricsRegistryLike {
  /** The exposition text. */
  metrics(): Promise<string>;
  /** Its content type. */
  readonly contentType: string;
}

/** What the probes look at. */
export interface ProbeOptions {
  /** The informers whose health decides liveness and readiness: a factory (all of its informers) or a list. Required. */
  informers: InformerHealthSource;
  /** Reported in `/readyz`'s body as `leader` (it does not gate readiness: a standby with synced caches is ready). Default: not reported. */
  isLeader?: () => boolean;
  /** Served at `/metrics` when given. Default: `/metrics` answers 404. */
  metrics?: MetricsRegistryLike;
  /** Answers as not ready while it returns true (the manager sets it while stopping). Default: never. */
  stopping?: () => boolean;
  /**
   * Shard rings reported in `/readyz`'s body (owned slots, pending handovers, members, failed reads); a
   * ring that failed to read its Leases 3 times in a row makes `/readyz` not ready (its slots are being
   * fenced). Default: none.
   */
  rings?: readonly HasShardRingHealth[];
  /** A webhook server (`WebhookServer` of kube-informer/webhook): `/readyz` is not ready until it serves. Default: none. */
  webhookServer?: HasReadiness;
}

/** Something that says whether it serves: a `WebhookServer` of kube-informer/webhook. */
export interface HasReadiness {
  /** True while it serves. */
  ready(): boolean;
}

const PROBE_OPTION_SCHEMA = {
  informers: 'object',
  isLeader: 'function',
  metrics: 'object',
  stopping: 'function',
  rings: 'any',
  webhookServer: 'object',
} as const satisfies OptionSchemaFor<ProbeOptions>;

/** What `/livez` and `/readyz` answer (as JSON). */
export interface ProbeReport {
  /** Live (`/livez`) or ready (`/readyz`). */
  ok: boolean;
  /** Whether this process holds the lease, when `isLeader` is given. */
  leader?: boolean;
  /** Every informer's verdict and problems. */
  informers: InformerVerdict[];
  /** Each shard ring's state, when `rings` is given. */
  rings?: Array<Pick<ShardRingHealth, 'name' | 'identity' | 'owned' | 'pendingHandovers' | 'members' | 'failuresInARow'> & Partial<Pick<ShardRingHealth, 'slots' | 'tooFewSlots'>>>;
  /** Whether the webhook server serves, when `webhookServer` is given (it gates readiness). */
  webhookServer?: {
    /** `ready()` of the webhook server. */
    ready: boolean;
  };
}

/** One informer in a {@link ProbeReport}. */
export interface InformerVerdict {
  /** The informer's name (`v1/pods`). */
  name: string;
  /** `health().live`. */
  live: boolean;
  /** `health().ready`. */
  ready: boolean;
  /** `health().problems`: one sentence each. */
  problems: string[];
  /** `health().detail`, when set: what does not make it unready but a person should know (an `absent` resource). */
  detail?: string;
}

/**
 * The probe report now: `/livez` is ok when every informer is `live` (nothing failed, stopped or
 * wedged: a restart would help otherwise); `/readyz` when every informer is `ready` (synced, its cache
 * not known stale, its watch neither stalled nor disconnected too long, no slow handler; an `absent`
 * informer — its resource not served, under `onResourceMissing: 'absent'` — is ready, and its verdict
 * carries a `detail` line naming the resource), the webhook
 * server (if any) serves and the process is not stopping. With no informer at all, not ready.
 */
export function probeReport(kind: 'livez' | 'readyz', options: ProbeOptions): ProbeReport {
  const all = healthOf(options.informers);
  const informers = all.map(({ name, live, ready, problems, detail }): InformerVerdict => (detail === undefined ? { name, live, ready, problems } : { name, live, ready, problems, detail }));
  const rings = options.rings?.map((r) => {
    const { name, identity, owned, pendingHandovers, members, failuresInARow, slots, tooFewSlots } = r.health();
    const ring = { name, identity, owned: [...owned], pendingHandovers: [...pendingHandovers], members: [...members], failuresInARow, slots };
    return tooFewSlots === undefined ? ring : { ...ring, tooFewSlots };
  });
  const ringsOk = rings === undefined || rings.every((r) => r.failuresInARow < 3);
  const webhookReady = options.webhookServer?.ready();
  const ok = kind === 'livez' ? all.every((h) => h.live) : all.length > 0 && all.every((h) => h.ready) && ringsOk && webhookReady !== false && options.stopping?.() !== true;
  const report: ProbeReport = options.isLeader === undefined ? { ok, informers } : { ok, leader: options.isLeader(), informers };
  if (rings !== undefined) report.rings = rings;
  if (webhookReady !== undefined) report.webhookServer = { ready: webhookReady };
  return report;
}

/**
 * A request handler for `GET /livez` (and `/healthz`, its alias: kubebuilder's manifests probe
 * `/healthz` and `/readyz`), `GET /readyz` (200 or 503, a JSON {@link ProbeReport}) and `GET /metrics`
 * (the registry's exposition text). Returns `false` for any other path, so it mounts in a server that
 * serves more:
 *
 * ```ts
 * const probes = probeHandler({ informers: factory, metrics: promClient.register });
 * http.createServer((req, res) => probes(req, res) || serveTheRest(req, res)).listen(8081);
 * ```
 */
export function probeHandler(options: ProbeOptions): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  validateOptions('probeHandler', options, PROBE_OPTION_SCHEMA);
  return handlerOf(options);
}

function handlerOf(options: ProbeOptions): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/livez' && path !== '/healthz' && path !== '/readyz' && path !== '/metrics') return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return true;
    }
    if (path === '/metrics') {
      const registry = options.metrics;
      if (registry === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('no metrics registry was given to the probes\n');
        return true;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`collecting metrics failed: ${err instanceof Error ? err.message : String(err)}\n`),
      );
      return true;
    }
    const report = probeReport(path === '/readyz' ? 'readyz' : 'livez', options);
    res.writeHead(report.ok ? 200 : 503, { 'content-type': 'application/json' }).end(`${JSON.stringify(report)}\n`);
    return true;
  };
}

/** Options of {@link startProbeServer}. */
export interface ProbeServerOptions extends ProbeOptions {
  /** The TCP port; `0` picks a free one. Default `8081` (kubebuilder's health-probe port). */
  port?: number;
  /**
   * The address to listen on. Default `'127.0.0.1'`: loopback only, so the reports (informer names,
   * errors, leader, ring members) and `/metrics` are not served to the network by accident. In a pod
   * the kubelet probes the pod IP, so set `'0.0.0.0'` (every interface) or the pod IP (the downward
   * API's `status.podIP`); started on loopback inside a pod (`KUBERNETES_SERVICE_HOST` set), it warns.
   */
  host?: string;
  /** Where the address it serves at is logged once it listens; `false` prints nothing. Default `console`. */
  logger?: LoggerOption;
}

/** The probe server's default address: loopback (see `ProbeServerOptions.host`). */
const DEFAULT_PROBE_HOST = '127.0.0.1';

/** A running probe server. */
export interface ProbeServer {
  /** `http://host:port` as it listens. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stops listening and closes every connection; resolves once done. */
  close(): Promise<void>;
}

/**
 * Serves {@link probeHandler} on its own `node:http` server (404 for other paths) — for a controller
 * that has no HTTP server of its own — and logs the address it serves at. Rejects when it cannot
 * listen (the port is taken: `EADDRINUSE`), and with `INVALID_OPTION` for a bad `port` or `host`.
 *
 * Warning: the default `host` is loopback (`127.0.0.1`), which the kubelet cannot reach: in a pod, set
 * `host: '0.0.0.0'` or the pod IP (docs/operations.md#probes has a manifest).
 */
export async function startProbeServer(options: ProbeServerOptions): Promise<ProbeServer> {
  validateOptions('startProbeServer', options, { ...PROBE_OPTION_SCHEMA, port: 'count', host: 'string', logger: 'logger' });
  const log = withFields(resolveLogger(options.logger), { component: 'probe-server' });
  const handle = handlerOf(options);
  const server = http.createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the probe server serves /livez, /healthz, /readyz and /metrics\n');
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8081, options.host ?? DEFAULT_PROBE_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port, address } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  const url = `http://${host}:${port}`;
  const paths = `/livez, /healthz, /readyz${options.metrics === undefined ? '' : ', /metrics'}`;
  const loopback = address === '::1' || address.startsWith('127.');
  if (loopback && (process.env.KUBERNETES_SERVICE_HOST ?? '') !== '') {
    log.warn(`probe server: serving ${paths} at ${url} — loopback only, inside a Kubernetes pod: the kubelet probes the pod IP and will fail; set host to '0.0.0.0' or the pod IP (status.podIP)`);
  } else {
    const reach = loopback ? "loopback only: set host to '0.0.0.0' or the pod IP for the kubelet to reach it" : address === '0.0.0.0' || address === '::' ? 'every interface' : 'this address only';
    log.info(`probe server: serving ${paths} at ${url} (${reach})`);
  }
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
