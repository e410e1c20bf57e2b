// Error classes of the informer room: handler failures, stopped informers, lifecycle misuse.

import { ErrorCodes, KubeInformerError, toError, type KubeInformerErrorOptions } from '../core/errors.js';
import { preview } from '../core/preview.js';

/**
 * The handler callback that failed: `add`, `update`, `delete` for handlers (and `informer.on`'s
 * object events); `error`, `connect`, `synced` for `informer.on` listeners of those events.
 */
export type HandlerEventKind = 'add' | 'update' | 'delete' | 'error' | 'connect' | 'synced';

/**
 * An event handler threw or rejected (code `HANDLER_FAILED`). `cause` is exactly what the handler
 * threw (wrapped by `toError` only when it was not an `Error`, the original then being its `cause`).
 *
 * Under the default error policy (`'stop'`) this stops the informer and `run()` rejects with it; under
 * `'report'` it is passed to the `onError` hook and delivery continues.
 */
export class HandlerError extends KubeInformerError {
  /** The name of the handler registration that failed (see `AddEventHandlerOptions.name`). */
  readonly handlerName: string;
  /** Which callback failed. */
  readonly event: HandlerEventKind;
  /** The key of the object being delivered, when it has one. */
  readonly key: string | undefined;

  /** `cause` is what the handler threw or rejected with. */
  constructor(handlerName: string, event: HandlerEventKind, key: string | undefined, cause: unknown) {
    const err = toError(cause);
    const where = key === undefined ? '' : ` for ${preview(key, 120)}`;
    super(ErrorCodes.HANDLER_FAILED, `event handler ${handlerName} failed in on${capital(event)}${where}: ${err.message}`, {
      cause: err,
    });
    this.handlerName = handlerName;
    this.event = event;
    this.key = key;
  }
}

/**
 * The informer has stopped (code `INFORMER_STOPPED`): it accepts no new handlers or indexers, or it
 * stopped before its cache synced. When it stopped because of a failure, `cause` is that failure.
 */
export class InformerStoppedError extends KubeInformerError {
  /** `options.cause` is the failure that stopped the informer, if any. */
  constructor(message: string, options?: KubeInformerErrorOptions) {
    super(ErrorCodes.INFORMER_STOPPED, message, options);
  }
}


function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
