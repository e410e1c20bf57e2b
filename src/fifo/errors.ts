// The errors the DeltaFIFO raises: a pop on a closed, drained queue, and a transformer that threw.

import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { preview } from '../core/preview.js';

/**
 * `pop` on a DeltaFIFO that is closed and has nothing left to hand out (code `FIFO_CLOSED`). A consumer
 * loop treats it as "stop": it is the normal end of the queue, not a failure.
 */
export class FifoClosedError extends KubeInformerError {
  constructor(message = 'DeltaFIFO: manipulating with closed queue') {
    super(ErrorCodes.FIFO_CLOSED, message);
  }
}

/** True when `err` is the "queue closed and drained" signal of a DeltaFIFO. */
export function isFifoClosedError(err: unknown): boolean {
  return (
    err !== null && typeof err === 'object' && (err as { code?: unknown }).code === ErrorCodes.FIFO_CLOSED
  );
}

/**
 * A transformer threw while an object entered the queue (code `TRANSFORM_FAILED`). The queue was left
 * unchanged by the failing call; `cause` is what the transformer threw and `key` the object's key.
 */
export class TransformFailedError extends KubeInformerError {
  /** The key of the object the transformer failed on. */
  readonly key: string;

  constructor(key: string, obj: unknown, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : preview(cause, 120);
    super(ErrorCodes.TRANSFORM_FAILED, `transform failed for ${JSON.stringify(key)}: ${reason}; object: ${preview(obj)}`, {
      cause,
    });
    this.key = key;
  }
}
