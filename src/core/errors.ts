// Error classes with stable string codes: every failure the library reports is one of these.

/**
 * The stable codes carried by every error the library throws or reports. Match on `code`, never on the
 * message: messages are for people and may be reworded.
 */
export const ErrorCodes = {
  /** An object has no usable `metadata.name` (or no metadata at all), so it has no key. */
  INVALID_OBJECT: 'INVALID_OBJECT',
  /** A key that is not `name` or `namespace/name`. */
  INVALID_KEY: 'INVALID_KEY',
  /** A resource version that is not an unbounded decimal integer. */
  INVALID_RESOURCE_VERSION: 'INVALID_RESOURCE_VERSION',
  /** An index function threw; the store was left exactly as it was. */
  INDEX_FUNC_FAILED: 'INDEX_FUNC_FAILED',
  /** A query named an index that does not exist. */
  UNKNOWN_INDEX: 'UNKNOWN_INDEX',
  /** `addIndexers` was given a name that already exists. */
  INDEXER_CONFLICT: 'INDEXER_CONFLICT',
  /** `pop` on a closed, empty DeltaFIFO. */
  FIFO_CLOSED: 'FIFO_CLOSED',
  /** A transform function threw. */
  TRANSFORM_FAILED: 'TRANSFORM_FAILED',
  /** Somebody changed an object the cache handed out. */
  CACHE_MUTATED: 'CACHE_MUTATED',
  /** The server answered with a non-success Status (HTTP error or watch ERROR event). */
  API_STATUS: 'API_STATUS',
  /** 410 Gone: the requested resource version was compacted away; a relist is needed. */
  EXPIRED: 'EXPIRED',
  /** A watch event older than what the reflector already holds was rejected. */
  RESOURCE_VERSION_REGRESSION: 'RESOURCE_VERSION_REGRESSION',
  /** A watch stream carried something that is not a well-formed watch event. */
  WATCH_DECODE: 'WATCH_DECODE',
  /** No bytes arrived on a watch for longer than its idle limit: a stalled or half-open connection. */
  WATCH_STALLED: 'WATCH_STALLED',
  /** A watch closed in under a second having delivered no event; the reflector backs off and relists. */
  WATCH_TOO_SHORT: 'WATCH_TOO_SHORT',
  /**
   * A watch opened at `""` or `"0"` ended before the reflector could adopt a resource version from it, so
   * no watch can resume where it stopped; the reflector relists.
   */
  WATCH_UNRESUMABLE: 'WATCH_UNRESUMABLE',
  /** A streaming list (`sendInitialEvents`) ended before its initial-events-end bookmark; a list follows. */
  WATCH_LIST_INCOMPLETE: 'WATCH_LIST_INCOMPLETE',
  /** A list request got no complete answer within `listTimeoutMs`: it was abandoned and is retried. */
  LIST_TIMEOUT: 'LIST_TIMEOUT',
  /** A network-level failure (connection refused, reset, TLS). */
  NETWORK: 'NETWORK',
  /** The KubeConfig gave no usable server or credentials (no current cluster, exec plugin failed, ...). */
  KUBECONFIG: 'KUBECONFIG',
  /**
   * The in-cluster configuration cannot be loaded: `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT`
   * unset, or the service-account token (or `ca.crt`) missing, unreadable or empty; the message names the
   * file or variable.
   */
  IN_CLUSTER_CONFIG: 'IN_CLUSTER_CONFIG',
  /** An event handler threw or rejected. */
  HANDLER_FAILED: 'HANDLER_FAILED',
  /** An informer has stopped (or stopped before its cache synced): it accepts no new handlers or indexers. */
  INFORMER_STOPPED: 'INFORMER_STOPPED',
  /** `run()` was called on something that is already running or has run. */
  ALREADY_STARTED: 'ALREADY_STARTED',
  /** The operation was cancelled by its AbortSignal. */
  ABORTED: 'ABORTED',
  /** A label or field selector that does not parse. */
  INVALID_SELECTOR: 'INVALID_SELECTOR',
  /** An option value out of its documented range. */
  INVALID_OPTION: 'INVALID_OPTION',
  /** A work queue was used after shutdown in a way that cannot succeed. */
  QUEUE_SHUT_DOWN: 'QUEUE_SHUT_DOWN',
  /** A leader-election lock operation failed or lost a race. */
  LEADER_ELECTION: 'LEADER_ELECTION',
  /** A scripted fault of the test kit was never consumed. */
  PENDING_FAULTS: 'PENDING_FAULTS',
  /** A reconcile ran past the controller's `reconcileTimeoutMs`: its signal was aborted and it counts as failed. */
  RECONCILE_TIMEOUT: 'RECONCILE_TIMEOUT',
  /**
   * A reconcile failed for good (a `TerminalError`): counted and logged, not retried until the key is
   * requested again.
   */
  RECONCILE_TERMINAL: 'RECONCILE_TERMINAL',
  /** Adding or removing a finalizer failed: another writer changed the list, or the write was refused. */
  FINALIZER_PATCH_FAILED: 'FINALIZER_PATCH_FAILED',
  /** `setControllerReference` found another controller already owning the object (controller-runtime's AlreadyOwnedError). */
  ALREADY_OWNED: 'ALREADY_OWNED',
  /** Something was run before what it depends on was started (a controller before its informer factory). */
  NOT_STARTED: 'NOT_STARTED',
  /**
   * A CustomResourceDefinition was refused by the API server, or did not become `Established` in time
   * (`ensureCustomResourceDefinitions`, `kube-informer/crd`).
   */
  CRD_NOT_ESTABLISHED: 'CRD_NOT_ESTABLISHED',
  /** A file or directory of CustomResourceDefinitions cannot be read: missing, invalid YAML, or a document that is not a CRD (`kube-informer/crd`). */
  CRD_FILE_INVALID: 'CRD_FILE_INVALID',
  /** A broken internal invariant: a bug in kube-informer, or one of its internal APIs called out of order. */
  INTERNAL: 'INTERNAL',
  /** A Manager gave up waiting for its caches: one or more informers cannot sync (each named, with its reason). */
  CACHE_SYNC_FAILED: 'CACHE_SYNC_FAILED',
  /** The webhook server could not serve: its port is taken, or its certificate or key cannot be loaded. */
  WEBHOOK_SERVE: 'WEBHOOK_SERVE',
  /** A webhook is configured wrongly: e.g. a served version no converter reaches from the hub. */
  WEBHOOK_CONFIG: 'WEBHOOK_CONFIG',
  /** A string that is not a JSON Pointer (RFC 6901): neither empty nor starting with `/`, or a bad `~` escape. */
  INVALID_JSON_POINTER: 'INVALID_JSON_POINTER',
  /**
   * A JSON Patch (RFC 6902) that is not one: not an array of operations, an operation that is not an
   * object, an unknown `op`, or a `path`, `from` or `value` missing where the operation needs it.
   */
  INVALID_JSON_PATCH: 'INVALID_JSON_PATCH',
  /**
   * A JSON Patch operation that does not apply to the document: its path (or `from`) does not exist, an
   * array index is out of range, a `test` found another value, or a `move` into its own child.
   */
  JSON_PATCH_FAILED: 'JSON_PATCH_FAILED',
  /** envtest found no etcd and kube-apiserver binaries (or a directory it was pointed at lacks one). */
  ENVTEST_NO_BINARIES: 'ENVTEST_NO_BINARIES',
  /** envtest's kube-apiserver is not the `kubernetesVersion` that was asked for. */
  ENVTEST_WRONG_VERSION: 'ENVTEST_WRONG_VERSION',
  /** A port envtest was told to use is taken by another process. */
  ENVTEST_PORT_IN_USE: 'ENVTEST_PORT_IN_USE',
  /** etcd or kube-apiserver exited, or did not become ready in time, while envtest started or ran it. */
  ENVTEST_PROCESS_FAILED: 'ENVTEST_PROCESS_FAILED',
  /** The API server refused a CustomResourceDefinition, or it never became `Established`. */
  ENVTEST_CRD_REJECTED: 'ENVTEST_CRD_REJECTED',
  /**
   * A controller's reconcile asked `ctx.client` for a request its controller did not declare
   * (`ControllerBuilder.uses`): refused before anything was sent, the missing rule named.
   */
  PERMISSION_NOT_DECLARED: 'PERMISSION_NOT_DECLARED',
  /**
   * A cluster provider could not turn an input into a cluster (a kubeconfig Secret without its key,
   * a kubeconfig that does not parse, credentials the server refuses, a cluster named twice): the
   * cluster was not engaged (`ClusterRefusedError.reason` says which).
   */
  CLUSTER_REFUSED: 'CLUSTER_REFUSED',
} as const;

/** One of the {@link ErrorCodes} values: the `code` of every library error. */
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** Options every library error accepts. */
export interface KubeInformerErrorOptions {
  /** The underlying error, kept as `cause`. */
  cause?: unknown;
}

/** The base class of every error the library throws. `code` is stable; `cause` keeps the original. */
export class KubeInformerError extends Error {
  /** The stable code to match on (one of {@link ErrorCodes}). */
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: KubeInformerErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
  }
}

/** An object that has no key: no metadata, or no `metadata.name`. */
export class InvalidObjectError extends KubeInformerError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.INVALID_OBJECT, message, options);
  }
}

/** A malformed resource version (see {@link compareResourceVersion}). */
export class InvalidResourceVersionError extends KubeInformerError {
  /** The resource version that failed to parse. */
  readonly resourceVersion: string;
  constructor(resourceVersion: string, message: string) {
    super(ErrorCodes.INVALID_RESOURCE_VERSION, message);
    this.resourceVersion = resourceVersion;
  }
}

/**
 * A Kubernetes `Status` failure: an HTTP error answer, or a watch `ERROR` event. `statusCode` is the
 * HTTP code (or the Status `code`); `reason` is the Status reason (`Expired`, `Forbidden`, ...).
 */
export class ApiStatusError extends KubeInformerError {
  /** The HTTP status code, or the Status `code` of a watch `ERROR` event. */
  readonly statusCode: number;
  /** The Status `reason` (`Expired`, `Forbidden`, `NotFound`, ...), when the server sent one. */
  readonly reason: string | undefined;
  /** The decoded Status body as the server sent it, when there was one. */
  readonly status: unknown;
  /** Seconds from a `Retry-After` header or Status `details.retryAfterSeconds`, when present. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    statusCode: number,
    message: string,
    options?: KubeInformerErrorOptions & { reason?: string; status?: unknown; retryAfterSeconds?: number },
  ) {
    super(statusCode === 410 ? ErrorCodes.EXPIRED : ErrorCodes.API_STATUS, message, options);
    this.statusCode = statusCode;
    this.reason = options?.reason;
    this.status = options?.status;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/** True when `err` means "the resource version you asked for is gone: relist" (HTTP or Status 410). */
export function isExpiredError(err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false;
  const e = err as { code?: unknown; statusCode?: unknown; status?: unknown };
  if (e.code === ErrorCodes.EXPIRED || e.code === 410 || e.statusCode === 410) return true;
  return false;
}

/** Turns anything thrown into an Error, keeping non-Error values readable (`throw "boom"`). */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  let text: string;
  try {
    text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return new Error(`non-Error value thrown: ${text}`, { cause: value });
}

/** `run()` was called a second time (code `ALREADY_STARTED`); anything with a `run()` runs once. */
export class AlreadyStartedError extends KubeInformerError {
  /** `what` names the thing started twice. */
  constructor(what: string) {
    super(ErrorCodes.ALREADY_STARTED, `${what} has already been started; run() may be called only once`);
  }
}

/** The error an aborted operation rejects with, when it rejects at all. */
export class AbortedError extends KubeInformerError {
  constructor(message = 'the operation was aborted', options?: KubeInformerErrorOptions) {
    super(ErrorCodes.ABORTED, message, options);
  }
}

/** Why a cluster provider refused an input (see {@link ClusterRefusedError}). */
export type ClusterRefusal = 'missing-key' | 'unparsable' | 'no-name' | 'unauthorized' | 'duplicate' | 'conflict';

/**
 * A cluster provider refused an input (code `CLUSTER_REFUSED`): nothing was engaged from it, and a
 * cluster engaged before from the same input stays as it was. `reason` is the kind, for counting;
 * the message names the input (`secret ns/name`), the field or rule; `cause` keeps the original error.
 */
export class ClusterRefusedError extends KubeInformerError {
  /** Which rule the input broke. */
  readonly reason: ClusterRefusal;
  /** `reason` is the rule broken; `message` names the input and the field. */
  constructor(reason: ClusterRefusal, message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.CLUSTER_REFUSED, message, options);
    this.reason = reason;
  }
}
