// The finalizer protocol: add it while live, clean up once deleting, remove it only after cleanup succeeded.

import { ErrorCodes, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';
import { InvalidOptionError } from '../core/options.js';
import type { DeepReadonly } from '../core/types.js';
import type { JsonPatchOperation, ResourceClient } from '../listwatch/resource-client.js';
import { Action } from './scheduler.js';

/** What {@link finalizer} runs. */
export interface FinalizerHandlers<T> {
  /** The object is live and carries the finalizer: reconcile it. */
  apply(obj: DeepReadonly<T>, signal: AbortSignal): Promise<Action>;
  /** The object is being deleted and still carries the finalizer: clean up. The finalizer is removed only after this resolved. */
  cleanup(obj: DeepReadonly<T>, signal: AbortSignal): Promise<Action>;
}

/**
 * Adding or removing the finalizer failed (code `FINALIZER_PATCH_FAILED`), most often because another
 * writer changed the finalizer list since the cache was read (the JSON Patch's `test` failed: 422, or
 * 409). Nothing of the other writer's was lost.
 *
 * Recovery: none needed — thrown from a reconcile, the error policy retries on a fresher cache.
 */
export class FinalizerError extends KubeInformerError {
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.FINALIZER_PATCH_FAILED, message, options);
    this.name = 'FinalizerError';
  }
}

/**
 * What {@link finalizer} reads from the reconcile: a `ReconcileContext` is one. Outside a controller,
 * pass `{ object, signal }`.
 */
export interface FinalizerContext<T> {
  /** The object as the cache holds it, `undefined` when it is gone. */
  readonly object: DeepReadonly<T> | undefined;
  /** Aborts the patches and is passed to the handlers. */
  readonly signal: AbortSignal;
  /**
   * Told about each patch's answer (a `ReconcileContext`'s `wrote`: the key's next reconcile waits
   * until the cache saw the finalizer added — or, once the last finalizer is removed, the object gone).
   * Default: nothing.
   */
  wrote?(result: unknown): void;
}

interface FinalizerMeta {
  metadata?: { name?: string; namespace?: string; finalizers?: readonly string[]; deletionTimestamp?: string };
}

const QUALIFIED = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Runs the finalizer protocol for `ctx.object` (kube-rs's `finalizer`), for a reconcile to return:
 *
 * - not found (`undefined`): `done` — nothing to do;
 * - live without `name` in its finalizers: adds it with a JSON Patch guarded by a `test` of the list
 *   it read, and returns `await` (the change comes back as an event and reconciles again: a
 *   controller passes an update of its primary's finalizers whatever its predicates);
 * - live with it: `handlers.apply(obj, ctx.signal)`;
 * - being deleted (`deletionTimestamp`) with it: `handlers.cleanup(obj, ctx.signal)`, then removes it
 *   with a JSON Patch guarded by a `test` of its position, and returns the cleanup's action;
 * - being deleted without it: `done` — someone else's finalizers hold it.
 *
 * A cleanup that throws propagates, and the finalizer stays: the object cannot disappear before its
 * external resources did; the error policy retries with backoff. A patch that loses a race rejects
 * with a `FinalizerError` (code `FINALIZER_PATCH_FAILED`). Throws `INVALID_OPTION` for a name that is not a qualified name
 * (`example.com/cleanup`). Both patches' answers go to `ctx.wrote`: with a `ReconcileContext`, no
 * reconcile of the key runs on a cache older than them (after the last finalizer's removal, not
 * before the cache saw the object go — a cleanup never runs twice for want of it).
 *
 * @example
 * ```ts
 * .build((key, ctx) => finalizer(ctx.client(widgets), 'example.com/cleanup', ctx, { apply, cleanup }))
 * ```
 */
export async function finalizer<T>(client: Pick<ResourceClient<T>, 'patch'>, name: string, ctx: FinalizerContext<NoInfer<T>>, handlers: FinalizerHandlers<T>): Promise<Action> {
  if (typeof name !== 'string' || name.length > 316 || !QUALIFIED.test(name)) {
    throw new InvalidOptionError(`finalizer: the name must be a qualified name such as 'example.com/cleanup', got ${JSON.stringify(name)}`);
  }
  const { object: obj, signal } = ctx;
  if (obj === undefined) return Action.done();
  const meta = (obj as FinalizerMeta).metadata ?? {};
  const finalizers = meta.finalizers ?? [];
  const at = finalizers.indexOf(name);
  const deleting = meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null;
  if (!deleting && at === -1) {
    const ops: JsonPatchOperation[] =
      finalizers.length === 0 && meta.finalizers === undefined
        ? [{ op: 'test', path: '/metadata/finalizers', value: null }, { op: 'add', path: '/metadata/finalizers', value: [name] }]
        : [{ op: 'test', path: '/metadata/finalizers', value: finalizers }, { op: 'add', path: '/metadata/finalizers/-', value: name }];
    await patch(client, ctx, meta, ops, `adding finalizer ${name}`);
    return Action.awaitChange();
  }
  if (!deleting) return handlers.apply(obj, signal);
  if (at === -1) return Action.done();
  const action = await handlers.cleanup(obj, signal);
  await patch(client, ctx, meta, [{ op: 'test', path: `/metadata/finalizers/${at}`, value: name }, { op: 'remove', path: `/metadata/finalizers/${at}` }], `removing finalizer ${name}`);
  return action;
}

async function patch<T>(client: Pick<ResourceClient<T>, 'patch'>, ctx: FinalizerContext<T>, meta: NonNullable<FinalizerMeta['metadata']>, ops: JsonPatchOperation[], what: string): Promise<void> {
  const ref = `${meta.namespace ? `${meta.namespace}/` : ''}${meta.name}`;
  const { signal } = ctx;
  let answer: T;
  try {
    answer = await client.patch(meta.name ?? '', meta.namespace, ops, 'json', signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new FinalizerError(`${what} on ${ref} failed (the finalizer list changed since it was read, or the write was refused): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  ctx.wrote?.(answer);
}
