// kube-informer: client-go's informer machinery (tools/cache, util/workqueue) for Node controllers.
// The front door names the user-facing API one by one; building blocks live behind subpaths:
// `kube-informer/cache` (store, fifo, reflector, mutation detector), `kube-informer/workqueue`,
// `kube-informer/leaderelection`, the controller runtime `kube-informer/controller`, and the test kit
// `kube-informer/testing`. Every change of what is
// exported here shows in the API report (etc/kube-informer.api.md).

/**
 * kube-informer: client-go's informer machinery for Node controllers. Start with
 * {@link SharedInformerFactory} and the {@link resources} descriptors; see the guides for the data flow.
 *
 * @packageDocumentation
 * @module kube-informer
 */

// Informers: the factory, the shared informer, handlers, sync waits, transforms, health.
export {
  SharedInformerFactory,
  gvrKey,
  SharedIndexInformer,
  NamespaceSetInformer,
  newInformer,
  newIndexerInformer,
  filteringResourceEventHandler,
  waitForCacheSync,
  stripManagedFields,
  stripAnnotations,
  stripBulkyMetadata,
  composeTransforms,
  LAST_APPLIED_CONFIGURATION_ANNOTATION,
  HandlerError,
  InformerStoppedError,
} from './informer/index.js';
export type {
  SharedInformerFactoryOptions,
  ResourceCacheOptions,
  MetadataOnlyCacheOptions,
  NamespaceSetCacheOptions,
  SharedIndexInformerOptions,
  NamespaceSetInformerOptions,
  PartitionedIndexer,
  AddEventHandlerOptions,
  InformerOptions,
  InformerResult,
  IndexerInformerOptions,
  IndexerInformerResult,
  InformerController,
  ResourceEventHandler,
  ResourceEventHandlerRegistration,
  SharedInformerRegistration,
  InformerEventListeners,
  InformerEventName,
  InformerEvent,
  InformerEventStream,
  InformerEventStreamOptions,
  Observed,
  HandlerEventKind,
  ErrorPolicy,
  InformerSynced,
  SyncSource,
  TransformFunc,
  HealthThresholds,
  InformerHealth,
  InformerState,
  InformerCounters,
  HandlerHealth,
  WatchHealth,
  StaleCache,
  AbsentResource,
} from './informer/index.js';

// Objects, keys, resource versions, resources, errors, the clock, logging, selectors.
export {
  resources,
  deepCopy,
  metaNamespaceKeyFunc,
  deletionHandlingMetaNamespaceKeyFunc,
  splitMetaNamespaceKey,
  DeletedFinalStateUnknown,
  compareResourceVersion,
  isComparableResourceVersion,
  ErrorCodes,
  KubeInformerError,
  ApiStatusError,
  InvalidOptionError,
  InvalidObjectError,
  InvalidResourceVersionError,
  AlreadyStartedError,
  AbortedError,
  realClock,
  sleep,
  parseLabelSelector,
  parseFieldSelector,
  labelSelectorFromObject,
  SelectorParseError,
} from './core/index.js';
export type {
  KubeObject,
  ObjectMeta,
  PartialObjectMetadata,
  GroupVersionResource,
  DeepReadonly,
  DeepMutable,
  MaybePromise,
  ResourceDescriptor,
  ObjectOf,
  GroupVersionResourceFor,
  BuiltInResource,
  BuiltInResources,
  BuiltInResourcesByKind,
  NotAWireType,
  KeyFunc,
  ErrorCode,
  KubeInformerErrorOptions,
  Clock,
  ClockTimer,
  Logger,
  LoggerOption,
  LogFields,
  LabelSelector,
  LabelSelectorObject,
  LabelSelectorRequirementObject,
  LabelSelectorInput,
  LabelRequirement,
  SelectorOperator,
  Labels,
  FieldRequirement,
} from './core/index.js';

// Talking to the API server: the ListerWatcher contract and newListWatch over client-node.
export { newListWatch, newResourceClient, NetworkError, KubeConfigError, WatchDecodeError, InClusterConfigError, loadInClusterConfig, loadKubeConfig } from './listwatch/index.js';
export type {
  ListerWatcher,
  ListOptions,
  ObjectList,
  WatchEvent,
  WatchEventType,
  KubeListWatch,
  NewListWatchOptions,
  KubeConfigLike,
  ReloadableCredentials,
  InClusterKubeConfig,
  LeanKubeConfig,
  InClusterConfigOptions,
  LoadKubeConfigOptions,
  ResourceClient,
  ResourceClientOptions,
  JsonPatchOperation,
  DeleteOptions,
  DeleteResult,
  Status,
  StatusDetails,
  WriteOptions,
  ReadOptions,
  ClientListOptions,
  PatchType,
  ApplyOptions,
  Scale,
  CreateOrUpdateOptions,
  CreateOrUpdateResult,
} from './listwatch/index.js';

// Reading the cache: listers and the namespace index.
export { newLister, NamespaceIndex, metaNamespaceIndexFunc, IndexFuncError, UnknownIndexError, IndexerConflictError } from './store/index.js';
export type { Lister, NamespaceLister, Indexer, Indexers, IndexFunc, Store, ReadonlyIndexer, ReadonlyStore } from './store/index.js';

// Errors a controller may want to match on.
export { CacheMutationError } from './mutation/index.js';
export { ResourceVersionRegressionError } from './reflector/index.js';
export type { RegressionInfo, ReflectorErrorContext, ReflectorPhase, ReflectorAction, ReflectorOptions } from './reflector/index.js';

// diagnostics_channel names.
export { channels, channelNames } from './observability/index.js';
export type { TracerProviderLike, TraceTracer, TraceSpan, TraceSpanOptions, TraceSpanContext, TraceLink, TraceAttributeValue } from './observability/index.js';
