// The webhook server: HTTPS only, webhooks by path, a deadline per review, metrics, graceful stop; a runnable (`run(signal)`) whose parts run as one RunGroup.

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ABORTED, AlreadyStartedError, ErrorCodes, InvalidOptionError, KubeInformerError, raceAbort, realClock, resolveLogger, validateOptions, type Clock, type ClockTimer, type HasPermissions, type Logger, type LoggerOption, type Permission } from '../core/index.js';
import { RunGroup } from '../runtime/index.js';
import { handedTracerProvider, type CounterMetric, type GaugeMetric, type HistogramMetric, type TracerProviderLike } from '../observability/index.js';
import { WebhookTracing } from './tracing.js';
import type { WebhookMetricsProvider } from './metrics.js';
import { applyConfigurations, checkConfigurations, configurationPermissions, settleConfigurationsOnStop, type AppliedConfiguration, type WebhookConfigurationsOptions } from './apply.js';
import { BadReviewError, type Webhook } from './review.js';
import { TlsSource, type WebhookTlsOptions } from './tls.js';

/** Options of {@link WebhookServer}. */
export interface WebhookServerOptions {
  /** Where the certificate comes from: files re-read when they change, or a generated self-signed CA. Required. */
  tls: WebhookTlsOptions;
  /** The port. Default: 9443 (controller-runtime's); 0 picks a free one (read {@link WebhookServer.port}). */
  port?: number;
  /** The address to bind. Default: `'0.0.0.0'`. */
  host?: string;
  /** The largest request body accepted; a larger one is answered 413. Default: 7 MiB (controller-runtime's). */
  maxBodyBytes?: number;
  /**
   * The review deadline when the API server's request carries no `timeout` query parameter. Default:
   * 10 000 (the API server's default `timeoutSeconds`).
   */
  defaultTimeoutMs?: number;
  /**
   * How long before the API server's deadline the server answers without the handler (per the
   * webhook's `onTimeout`), so the answer arrives before the API server gives up; never more than half
   * the deadline. Default: 1 000.
   */
  timeoutMarginMs?: number;
  /** After `run`'s signal aborts: how long in-flight reviews may take before their signals abort and connections close. Default: 30 000. */
  stopGraceMs?: number;
  /** Metrics (see {@link prometheusWebhookMetricsProvider}). Default: none. */
  metricsProvider?: WebhookMetricsProvider;
  /** Timers (certificate polling, deadlines, grace). Default: the real clock. */
  clock?: Clock;
  /** Where failures are reported (handlers that throw, certificates that do not load). Default: `console`. */
  logger?: LoggerOption;
  /**
   * Webhook configurations to apply (server-side apply) once the server listens and before it reports
   * ready, with its `caBundle` filled in where a webhook has none; `run` rejects with `WEBHOOK_CONFIG`
   * when the API server refuses one. Default: none (apply them yourself: `kube-informer webhook manifests`).
   */
  configurations?: WebhookConfigurationsOptions;
  /**
   * Trace each review with OpenTelemetry (docs/tracing.md): a server span per review — the webhook, the
   * operation, the kind, `allowed`, the patch's size — active while the handler runs, so its own spans
   * nest. `@opentelemetry/api` (an optional peer dependency) is loaded only when this is given. A
   * provider whose `getTracer` throws is refused at construction (`INVALID_OPTION`). Default: none, or
   * the Manager's `tracerProvider` when a Manager runs the server.
   */
  tracerProvider?: TracerProviderLike;
}

const optionSchema = {
  tls: 'object',
  port: 'count',
  host: 'string',
  maxBodyBytes: 'positiveCount',
  defaultTimeoutMs: 'positiveDuration',
  timeoutMarginMs: 'duration',
  stopGraceMs: 'duration',
  metricsProvider: 'object',
  clock: 'clock',
  logger: 'logger',
  configurations: 'any', // checked by checkConfigurations
  tracerProvider: 'object',
} as const;

interface Route {
  path: string;
  webhook: Webhook;
  inFlight?: GaugeMetric;
  latency?: HistogramMetric;
  totals: Map<number, CounterMetric>;
}

interface InFlight {
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Serves admission and conversion webhooks over HTTPS. Register webhooks by path, then `run(signal)`:
 * it resolves after a graceful stop (in-flight reviews finish, up to `stopGraceMs`) and rejects
 * (code `WEBHOOK_SERVE`) when it cannot serve (port taken, certificate unreadable).
 *
 * ```ts
 * const server = new WebhookServer({ tls: { certFile: '/tls/tls.crt', keyFile: '/tls/tls.key' } });
 * server.register('/validate-configmapsets', validatingWebhook({ name: 'vcms.example.com' }, validate));
 * await server.run(signal);
 * ```
 *
 * Recovery: a certificate that fails to reload is logged and the previous one kept.
 * Warning: {@link WebhookServer.ready} is false until the server listens and after stop begins; wire it to the readiness probe.
 */
export class WebhookServer implements HasPermissions {
  #options: WebhookServerOptions;
  #clock: Clock;
  #logger: Logger;
  #tls: TlsSource;
  #routes = new Map<string, Route>();
  #inFlight = new Set<InFlight>();
  #server: Server | undefined;
  #started = false;
  #finished = false;
  #ready = false;
  #applied: AppliedConfiguration[] = [];
  #port: number | undefined;
  #readyWaiters = new Set<(ready: boolean) => void>();
  /** Its review spans (option `tracerProvider`, or the Manager's): undefined when it does not trace. */
  #tracing: WebhookTracing | undefined;

  constructor(options: WebhookServerOptions) {
    validateOptions('WebhookServer', options, optionSchema);
    if (options?.tls === undefined) throw new InvalidOptionError('WebhookServer: option tls is required (certFile and keyFile, or selfSigned)');
    if (options.configurations !== undefined) checkConfigurations(options.configurations);
    this.#options = options;
    this.#clock = options.clock ?? realClock;
    this.#logger = resolveLogger(options.logger);
    this.#tls = new TlsSource(options.tls, this.#clock, this.#logger);
    this.#tracing = this.#tracingOf(options.tracerProvider);
  }

  #tracingOf(provider: TracerProviderLike | undefined): WebhookTracing | undefined {
    return provider === undefined ? undefined : new WebhookTracing('WebhookServer', provider, this.#logger);
  }

  /** Serves `webhook` at `path` (e.g. `'/validate-configmapsets'`). Register before `run`. */
  register(path: string, webhook: Webhook): this {
    if (!path.startsWith('/')) throw new InvalidOptionError(`WebhookServer.register: path must start with '/', got '${path}'`);
    if (this.#routes.has(path)) throw new InvalidOptionError(`WebhookServer.register: a webhook is already registered at '${path}'`);
    const m = this.#options.metricsProvider;
    this.#routes.set(path, { path, webhook, inFlight: m?.newInFlightMetric(path), latency: m?.newLatencyMetric(path), totals: new Map() });
    return this;
  }

  /** True while the server listens with a certificate loaded and is not stopping: its readiness. */
  ready(): boolean {
    return this.#ready;
  }

  /**
   * Resolves true once the server listens (at once if it does), false when `run` ended before it did
   * (it failed to start or was stopped) or `signal` aborted: what the Manager waits for before it starts
   * the informers, so a conversion webhook serves before a cache lists its resource.
   */
  whenReady(signal: AbortSignal): Promise<boolean> {
    if (this.#ready) return Promise.resolve(true);
    if (signal.aborted || this.#finished) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (ready: boolean): void => {
        this.#readyWaiters.delete(done);
        signal.removeEventListener('abort', onAbort);
        resolve(ready);
      };
      const onAbort = (): void => done(false);
      this.#readyWaiters.add(done);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  #settleWaiters(ready: boolean): void {
    for (const done of [...this.#readyWaiters]) done(ready);
  }

  /** The port it listens on, once listening. */
  port(): number | undefined {
    return this.#port;
  }

  /**
   * The CA bundle (base64 PEM) webhook configurations put in `clientConfig.caBundle`: the generated CA
   * with `selfSigned`, else the contents of `caFile` (undefined when not given).
   */
  caBundle(): string | undefined {
    return this.#tls.caBundle();
  }

  /** Re-reads the certificate files now (also done every `pollIntervalMs`). Resolves true when a new certificate is served. */
  reloadCertificate(): Promise<boolean> {
    return this.#server ? this.#tls.reload(this.#server) : Promise.resolve(false);
  }

  /**
   * Serves until `signal` aborts, then stops gracefully: stops accepting, lets in-flight reviews finish
   * (their signals abort after `stopGraceMs`), closes connections, and resolves. Rejects with
   * `WEBHOOK_SERVE` when it cannot start (port in use, certificate unreadable) or the server fails.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new AlreadyStartedError('WebhookServer.run() was already called');
    this.#started = true;
    this.#tracing ??= this.#tracingOf(handedTracerProvider(this));
    try {
      await this.#serve(signal);
    } finally {
      this.#finished = true;
      this.#settleWaiters(false);
    }
  }

  async #serve(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const context = await this.#tls.load();
    const server = createServer({ ...context }, (req, res) => void this.#handle(req, res));
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => reject(new KubeInformerError(ErrorCodes.WEBHOOK_SERVE, `WebhookServer: cannot listen on ${this.#options.host ?? '0.0.0.0'}:${this.#options.port ?? 9443}: ${err.message}`, { cause: err }));
      server.once('error', onError);
      server.listen(this.#options.port ?? 9443, this.#options.host ?? '0.0.0.0', () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    // The parts of a listening server share one lifetime (the runnable group): the first to fail stops
    // the others, and run rejects with it once the listener has closed. Then, stopped, the
    // configurations it applied are dealt with as `onStop` says (out of a cluster).
    const configurations = this.#options.configurations;
    if (configurations !== undefined) {
      try {
        await this.#runGroup(server, signal);
      } finally {
        await settleConfigurationsOnStop(configurations, this.#applied, this.#logger, this.#clock);
      }
      return;
    }
    await this.#runGroup(server, signal);
  }

  #runGroup(server: Server, signal: AbortSignal): Promise<void> {
    return RunGroup.run(
      [
        { name: 'listener', run: (s) => this.#listen(server, s) },
        { name: 'certificate', run: (s) => this.#watchCertificate(server, s) },
        { name: 'readiness', run: (s) => this.#becomeReady(s) },
      ],
      signal,
      { name: 'WebhookServer', clock: this.#clock, logger: this.#logger },
    ).then(() => undefined);
  }

  /** Serves until `signal` aborts or the server fails; then stops gracefully, and rejects with the failure (`WEBHOOK_SERVE`). */
  async #listen(server: Server, signal: AbortSignal): Promise<void> {
    let onError!: (err: Error) => void;
    const failed = new Promise<KubeInformerError>((resolve) => {
      onError = (err) => resolve(new KubeInformerError(ErrorCodes.WEBHOOK_SERVE, `WebhookServer: the server failed: ${err.message}`, { cause: err }));
    });
    server.once('error', onError);
    const outcome = await raceAbort(failed, signal);
    server.off('error', onError);
    this.#ready = false;
    await this.#stop(server);
    if (outcome !== ABORTED) throw outcome;
  }

  /** Polls the certificate files (files only) until `signal` aborts. */
  async #watchCertificate(server: Server, signal: AbortSignal): Promise<void> {
    const stopPolling = this.#tls.watch(server);
    await raceAbort(new Promise<never>(() => undefined), signal);
    stopPolling();
  }

  /**
   * What the server needs from the API server (see `HasPermissions`): with `configurations`, `patch`
   * and `create` of each configuration by name (server-side apply); nothing otherwise (serving reviews
   * needs no permission).
   */
  permissions(): Permission[] {
    return this.#options.configurations === undefined ? [] : configurationPermissions(this.#options.configurations);
  }

  /** Applies the configurations (when given), then reports ready; rejects with `WEBHOOK_CONFIG` when the API server refuses one. */
  async #becomeReady(signal: AbortSignal): Promise<void> {
    if (this.#options.configurations !== undefined) await applyConfigurations(this.#options.configurations, this.caBundle(), signal, this.#applied);
    if (signal.aborted) return;
    this.#ready = true;
    this.#settleWaiters(true);
  }

  async #stop(server: Server): Promise<void> {
    // No review is accepted from here on: close() stops the listener and ends idle connections, and
    // Node closes a busy kept-alive connection once its response is sent (tested: on-stop.test.ts).
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    const drained = Promise.all([...this.#inFlight].map((f) => f.done));
    let timer: ClockTimer | undefined;
    const grace = new Promise<void>((resolve) => (timer = this.#clock.setTimeout(resolve, this.#options.stopGraceMs ?? 30_000)));
    await Promise.race([drained, grace]);
    if (timer) this.#clock.clearTimeout(timer);
    for (const f of this.#inFlight) f.abort.abort(new Error('WebhookServer stopped'));
    server.closeAllConnections();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://webhook');
    const route = this.#routes.get(url.pathname);
    if (route === undefined) return this.#fail(res, undefined, 404, `no webhook is registered at ${url.pathname}`);
    if (req.method !== 'POST') return this.#fail(res, route, 405, `${req.method ?? ''} is not allowed; POST a review`);
    const abort = new AbortController();
    let finish!: () => void;
    const flight: InFlight = { abort, done: new Promise<void>((r) => (finish = r)) };
    this.#inFlight.add(flight);
    route.inFlight?.inc();
    const started = this.#clock.now();
    try {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim();
      if (type !== 'application/json') return this.#fail(res, route, 400, `content type ${type || '(none)'} is not application/json`);
      const body = await this.#readBody(req, res, route);
      if (body === undefined) return;
      let review: unknown;
      try {
        review = JSON.parse(body);
      } catch (err) {
        return this.#fail(res, route, 400, `the body is not JSON: ${(err as Error).message}`);
      }
      const timeoutMs = this.#deadline(url.searchParams.get('timeout'));
      const tracing = this.#tracing;
      const span = tracing?.start(route.webhook.name, review);
      const answer = await (span === undefined ? this.#review(route.webhook, review, timeoutMs, abort) : tracing!.run(span, () => this.#review(route.webhook, review, timeoutMs, abort)));
      if (span !== undefined) tracing!.end(span, answer);
      if (answer instanceof BadReviewError) return this.#fail(res, route, 400, answer.message);
      this.#send(res, route, 200, answer);
    } catch (err) {
      this.#logger.error(`webhook ${route.webhook.name}: cannot answer: ${(err as Error).message}`);
      if (!res.headersSent) this.#fail(res, route, 500, 'internal error');
    } finally {
      route.latency?.observe((this.#clock.now() - started) / 1000);
      route.inFlight?.dec();
      this.#inFlight.delete(flight);
      finish();
    }
  }

  /** Runs the webhook against the deadline; a thrown handler becomes the webhook's `failed` answer (logged). */
  async #review(webhook: Webhook, review: unknown, timeoutMs: number, abort: AbortController): Promise<unknown> {
    let timer: ClockTimer | undefined;
    const expired = Symbol('expired');
    const deadline = new Promise<typeof expired>((resolve) => (timer = this.#clock.setTimeout(() => resolve(expired), timeoutMs)));
    const work = webhook.review(review, { signal: abort.signal, logger: this.#logger });
    try {
      const result = await Promise.race([work, deadline]);
      if (result !== expired) return result;
      abort.abort(new Error(`the review passed its deadline of ${timeoutMs} ms`));
      work.catch((err: unknown) => this.#logger.warn(`webhook ${webhook.name}: a handler failed after its deadline: ${(err as Error)?.message ?? String(err)}`));
      this.#logger.warn(`webhook ${webhook.name}: the handler did not answer within ${timeoutMs} ms; answered per onTimeout`);
      return webhook.timedOut(review, timeoutMs);
    } catch (err) {
      if (err instanceof BadReviewError) return err;
      const uid = (review as { request?: { uid?: unknown } })?.request?.uid;
      this.#logger.error(`webhook ${webhook.name}: the handler threw (review ${String(uid)}; denied): ${(err as Error)?.stack ?? String(err)}`);
      return webhook.failed(review);
    } finally {
      if (timer) this.#clock.clearTimeout(timer);
    }
  }

  /** The answer deadline: the API server's `timeout` (Go duration) minus the margin, never under half of it. */
  #deadline(timeout: string | null): number {
    const total = (timeout === null ? undefined : parseGoDuration(timeout)) ?? this.#options.defaultTimeoutMs ?? 10_000;
    return Math.max(total / 2, total - (this.#options.timeoutMarginMs ?? 1_000));
  }

  #readBody(req: IncomingMessage, res: ServerResponse, route: Route): Promise<string | undefined> {
    const max = this.#options.maxBodyBytes ?? 7 * 1024 * 1024;
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > max) {
      this.#fail(res, route, 413, `the body of ${declared} bytes is larger than ${max} bytes`, true);
      return Promise.resolve(undefined);
    }
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > max) {
          req.removeAllListeners('data');
          this.#fail(res, route, 413, `the body is larger than ${max} bytes`, true);
          resolve(undefined);
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      req.on('error', reject);
    });
  }

  #fail(res: ServerResponse, route: Route | undefined, code: number, message: string, close = false): void {
    if (close) res.setHeader('connection', 'close');
    this.#send(res, route, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });
  }

  #send(res: ServerResponse, route: Route | undefined, code: number, body: unknown): void {
    if (route && this.#options.metricsProvider) {
      let counter = route.totals.get(code);
      if (!counter) route.totals.set(code, (counter = this.#options.metricsProvider.newRequestsTotalMetric(route.path, code)));
      counter.inc();
    }
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

const UNITS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/** Parses a Go duration (`10s`, `1m30s`, `500ms`) to milliseconds; undefined when it does not parse. */
export function parseGoDuration(text: string): number | undefined {
  const re = /(\d+(?:\.\d+)?)(h|ms|us|µs|ns|m|s)/gy;
  let total = 0;
  let end = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    total += Number(m[1]) * UNITS[m[2]];
    end = re.lastIndex;
  }
  return end === text.length && end > 0 ? total : undefined;
}
