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

interface FinalizerMeta {
  metadata?: { name?: string; namespace?: string; finalizers?: readonly string[]; deletionTimestamp?: string };
}

const QUALIFIED = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/**
 * Runs the finalizer protocol for `obj` (kube-rs's `finalizer`), for a reconcile to return:
 *
 * - not found (`undefined`): `done` — nothing to do;
 * - live without `name` in its finalizers: adds it with a JSON Patch guarded by a `test` of the list
 *   it read, and returns `await` (the change comes back as an event and reconciles again);
 * - live with it: `handlers.apply(obj, signal)`;
 * - being deleted (`deletionTimestamp`) with it: `handlers.cleanup(obj, signal)`, then removes it with
 *   a JSON Patch guarded by a `test` of its position, and returns the cleanup's action;
 * - being deleted without it: `done` — someone else's finalizers hold it.
 *
 * A cleanup that throws propagates, and the finalizer stays: the object cannot disappear before its
 * external resources did; the error policy retries with backoff. A patch that loses a race rejects
 * with a `FinalizerError` (code `FINALIZER_PATCH_FAILED`). Throws `INVALID_OPTION` for a name that is not a qualified name
 * (`example.com/cleanup`).
 *
 * @example
 * ```ts
 * .build((key, ctx) => finalizer(client, 'example.com/cleanup', ctx.object, { apply, cleanup }, ctx.signal))
 * ```
 */
export async function finalizer<T>(
  client: Pick<ResourceClient<T>, 'patch'>,
  name: string,
  obj: DeepReadonly<T> | undefined,
  handlers: FinalizerHandlers<T>,
  signal: AbortSignal,
): Promise<Action> {
  if (typeof name !== 'string' || name.length > 316 || !QUALIFIED.test(name)) {
    throw new InvalidOptionError(`finalizer: the name must be a qualified name such as 'example.com/cleanup', got ${JSON.stringify(name)}`);
  }
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
    await patch(client, meta, ops, `adding finalizer ${name}`, signal);
    return Action.awaitChange();
  }
  if (!deleting) return handlers.apply(obj, signal);
  if (at === -1) return Action.done();
  const action = await handlers.cleanup(obj, signal);
  await patch(client, meta, [{ op: 'test', path: `/metadata/finalizers/${at}`, value: name }, { op: 'remove', path: `/metadata/finalizers/${at}` }], `removing finalizer ${name}`, signal);
  return action;
}

async function patch<T>(client: Pick<ResourceClient<T>, 'patch'>, meta: NonNullable<FinalizerMeta['metadata']>, ops: JsonPatchOperation[], what: string, signal: AbortSignal): Promise<void> {
  const ref = `${meta.namespace ? `${meta.namespace}/` : ''}${meta.name}`;
  try {
    await client.patch(meta.name ?? '', meta.namespace, ops, 'json', signal);
  } catch (err) {
    if (signal.aborted) throw err;
    throw new FinalizerError(`${what} on ${ref} failed (the finalizer list changed since it was read, or the write was refused): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}
