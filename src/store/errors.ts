// The errors the store and its indices throw, each with a stable code and the original in `cause`.

import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { preview } from '../core/preview.js';

function describe(value: unknown): string {
  if (value instanceof Error) return value.message;
  return preview(value, 120);
}

/**
 * An index function threw (or returned something that is not an array of strings) while the store
 * was writing the object with key `key`. The write did not happen: the store and every index are
 * exactly as they were before the call. `cause` is what the index function threw.
 */
export class IndexFuncError extends KubeInformerError {
  /** The index whose function failed. */
  readonly indexName: string;
  /** The key of the object being indexed. */
  readonly key: string;

  /**
   * @param indexName - the index whose function failed
   * @param key - the key of the object being indexed
   * @param cause - what the function threw, or a description of its bad return value
   */
  constructor(indexName: string, key: string, cause: unknown) {
    super(
      ErrorCodes.INDEX_FUNC_FAILED,
      `index function "${indexName}" failed for key "${key}"; the store was not changed: ${describe(cause)}`,
      { cause },
    );
    this.indexName = indexName;
    this.key = key;
  }
}

/** A query named an index that does not exist. The message lists the indices that do. */
export class UnknownIndexError extends KubeInformerError {
  /** The name that was asked for. */
  readonly indexName: string;

  /**
   * @param indexName - the name that was asked for
   * @param known - the names that exist
   */
  constructor(indexName: string, known: readonly string[]) {
    const list = known.length === 0 ? 'there are no indices' : `known indices: ${known.map((n) => `"${n}"`).join(', ')}`;
    super(ErrorCodes.UNKNOWN_INDEX, `index with name "${indexName}" does not exist (${list})`);
    this.indexName = indexName;
  }
}

/** `addIndexers` was given an index name that already exists; nothing was added. */
export class IndexerConflictError extends KubeInformerError {
  /** The name that already exists. */
  readonly indexName: string;

  /** @param indexName - the name that already exists */
  constructor(indexName: string) {
    super(ErrorCodes.INDEXER_CONFLICT, `indexer conflict: an index named "${indexName}" already exists; no index was added`);
    this.indexName = indexName;
  }
}
