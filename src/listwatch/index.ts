// The listwatch room's barrel: the ListerWatcher contract, newListWatch over @kubernetes/client-node, the watch decoder.
export * from './types.js';
export { NetworkError, KubeConfigError, InClusterConfigError, ResponseDecodeError, WatchDecodeError } from './errors.js';
export type { DecodeFailure } from './errors.js';
export * from './paths.js';
export { decodeWatchStream } from './decoder.js';
export type { DecodeWatchStreamOptions } from './decoder.js';
// Internal (the package's entry points do not name them): the informer's waits, told to its watches.
export { Hurry, hurriedBy } from './hurry.js';
// Internal: what each server is known to support of streaming lists (the reflector's 'auto').
export { WatchListSupport, watchListSupportOf, forgetWatchListSupport } from './watch-list-support.js';
export type { WatchListVerdict } from './watch-list-support.js';
export { newListWatch, METADATA_LIST_ACCEPT, METADATA_WATCH_ACCEPT } from './list-watch.js';
export type { NewListWatchOptions, KubeListWatch } from './list-watch.js';
export type { KubeConfigLike, ReloadableCredentials } from './transport.js';
export { loadInClusterConfig, loadKubeConfig, SERVICE_ACCOUNT_DIR } from './in-cluster.js';
export type { InClusterKubeConfig, InClusterConfigOptions, LoadKubeConfigOptions } from './in-cluster.js';
export type { LeanKubeConfig } from './lean-kubeconfig.js';
// Internal: a kubeconfig held in memory (a Secret's), read by the one lean reader (operations' kubeconfigSecrets).
export { leanKubeConfigFromText } from './lean-kubeconfig.js';
export { ResourceClient, newResourceClient } from './resource-client.js';
export type { ResourceClientOptions, CreateOrUpdateOptions, CreateOrUpdateResult } from './resource-client.js';
export type {
  ApplyConfiguration,
  ApplyOptions,
  ClientListOptions,
  DeleteOptions,
  DeleteResult,
  JsonPatchOperation,
  PatchType,
  ReadOptions,
  Scale,
  Status,
  StatusDetails,
  WriteOptions,
} from './client-types.js';
export { ApplyConflictError, MAX_FIELD_MANAGER_LENGTH, checkFieldManager } from './apply.js';
export type { ApplyConflict } from './apply.js';
// For the factory's options and the fake API server; not in an entry point.
export { validateCoalesceMs } from './decoder.js';
export { isBuiltInGroup } from './apply.js';
