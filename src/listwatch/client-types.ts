// The request and answer types of ResourceClient: options of each verb, Status, the delete result, Scale, apply configurations.

export type { ApplyConfiguration } from '../core/managed-fields.js';
export type { JsonPatchOperation } from '../core/json-patch.js';

/** The details of a `Status`: what it is about. On a DELETE's success, `kind` is the plural resource name. */
export interface StatusDetails {
  /** The object's name. */
  name?: string;
  /** The API group (absent for the core group). */
  group?: string;
  /** The kind — for a DELETE's success, the plural resource (`configmaps`), as kube-apiserver writes it. */
  kind?: string;
  /** The object's uid. */
  uid?: string;
  /** Why a request was refused, one entry per field (`Invalid`, apply conflicts …). */
  causes?: Array<{
    /** A machine-readable reason (`FieldValueInvalid`, `FieldManagerConflict` …). */
    reason?: string;
    /** What was wrong, for people. */
    message?: string;
    /** The field path (`.spec.replicas`, `data.k`). */
    field?: string;
  }>;
  /** Seconds to wait before retrying, when the server says so. */
  retryAfterSeconds?: number;
}

/** A Kubernetes `Status` object (meta/v1): the answer that is not an object. */
export interface Status {
  /** Always `Status`. */
  kind: 'Status';
  /** `v1`. */
  apiVersion?: string;
  /** `Success` or `Failure`. */
  status?: 'Success' | 'Failure';
  /** For people. */
  message?: string;
  /** `NotFound`, `Conflict` … (failures). */
  reason?: string;
  /** What the status is about. */
  details?: StatusDetails;
  /** The HTTP code (failures). */
  code?: number;
}

/**
 * What {@link ResourceClient.delete} resolves with — never a `Status` typed as the object:
 * - `{ gone: false, object }`: the object still exists, marked for deletion (`deletionTimestamp` set)
 *   and held by finalizers (or a grace period); it disappears when they are done.
 * - `{ gone: true, status }`: the server deleted it and answered a `Status` (kube-apiserver does so
 *   for most resources: `status: 'Success'`, `details` {name, group, kind, uid}).
 * - `{ gone: true, object }`: the server deleted it and answered the final state (pods).
 */
export type DeleteResult<T> =
  | {
      /** The object still exists, marked for deletion. */
      readonly gone: false;
      /** The object as the server now holds it, `deletionTimestamp` set. */
      readonly object: T;
    }
  | {
      /** The object was deleted. */
      readonly gone: true;
      /** The server's `Status` answer, when it sent one. */
      readonly status?: Status;
      /** The final state, when the server answered with the object instead of a `Status`. */
      readonly object?: T;
    };

/** Options every write takes. */
export interface WriteOptions {
  /**
   * `true` sends `dryRun=All`: the server validates, admits and answers as for a real write, but
   * stores nothing. Default false.
   */
  dryRun?: boolean;
  /** The field manager of this write. Default the client's `fieldManager` option. */
  fieldManager?: string;
  /** Cancels the request. Default none. */
  signal?: AbortSignal;
}

/** What {@link ResourceClient.delete} accepts besides the name. */
export interface DeleteOptions {
  /** Delete only if the object still has this resource version / uid (409 Conflict otherwise). Default none. */
  preconditions?: {
    /** The resource version the object must still have. */
    resourceVersion?: string;
    /** The uid the object must still have (not a newer object of the same name). */
    uid?: string;
  };
  /** How dependents are deleted: `Foreground`, `Background` or `Orphan`. Default the server's (`Background`). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Seconds before the object is deleted (`0` = at once). Default the resource's own. */
  gracePeriodSeconds?: number;
  /** `true` sends `dryRun=All` (nothing is deleted). Default false. */
  dryRun?: boolean;
  /** Cancels the request. Default none. */
  signal?: AbortSignal;
}

/** Options of {@link ResourceClient.list}; names and meanings are the Kubernetes API's. */
export interface ClientListOptions {
  /** The namespace to list in (namespaced resources). Default all namespaces. */
  namespace?: string;
  /** Only objects whose labels match (`app=web,tier!=db`). Default all. */
  labelSelector?: string;
  /** Only objects whose fields match (`metadata.name=x`). Default all. */
  fieldSelector?: string;
  /** Page size. Default unpaginated. */
  limit?: number;
  /** The `metadata.continue` token of the previous page. Default the first page. */
  continue?: string;
  /**
   * `""` (default) = the most recent state (a quorum read); `"0"` = any state (the watch cache);
   * otherwise a version, matched as `resourceVersionMatch` says.
   */
  resourceVersion?: string;
  /** How `resourceVersion` is matched: `NotOlderThan` or `Exact`. Default the server's (`NotOlderThan`). */
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
  /** Cancels the request. Default none. */
  signal?: AbortSignal;
}

/** Options of a read ({@link ResourceClient.get}). */
export interface ReadOptions {
  /** Cancels the request. Default none. */
  signal?: AbortSignal;
}

/**
 * A patch's media type: `json` (RFC 6902 JSON Patch), `merge` (RFC 7386 JSON merge patch) or
 * `strategic` (strategic merge patch: built-in types only — a custom resource is refused before
 * sending, as the server would refuse it).
 */
export type PatchType = 'json' | 'merge' | 'strategic';

/** Options of {@link ResourceClient.apply} and {@link ResourceClient.applyStatus}. */
export interface ApplyOptions {
  /**
   * The field manager that owns what this configuration sets (at most 128 characters). Required:
   * server-side apply tracks ownership per manager, so it must be the same on every apply of a
   * controller. Default the client's `fieldManager` option.
   */
  fieldManager?: string;
  /** Take fields owned by other managers instead of failing with a conflict. Default false. */
  force?: boolean;
  /** `true` sends `dryRun=All`. Default false. */
  dryRun?: boolean;
  /** Cancels the request. Default none. */
  signal?: AbortSignal;
}

/** The scale subresource (`autoscaling/v1` `Scale`) of a workload. */
export interface Scale {
  /** `autoscaling/v1`. */
  apiVersion?: string;
  /** `Scale`. */
  kind?: string;
  /** The workload's name, namespace and resource version. */
  metadata?: {
    /** The workload's name. */
    name?: string;
    /** The workload's namespace. */
    namespace?: string;
    /** The workload's resource version (makes `updateScale` a compare-and-swap). */
    resourceVersion?: string;
    /** The workload's uid. */
    uid?: string;
  };
  /** The wanted replicas. */
  spec?: {
    /** The wanted number of replicas. */
    replicas?: number;
  };
  /** The observed replicas. */
  status?: {
    /** The observed number of replicas. */
    replicas?: number;
    /** The label selector of the pods, in its string form. */
    selector?: string;
  };
}
