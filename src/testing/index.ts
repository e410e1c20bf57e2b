// The test kit `kube-informer/testing`: FakeControllerSource, startFakeApiServer, and the fake clock.

/**
 * The kube-informer test kit, imported as `kube-informer/testing`.
 *
 * - {@link FakeControllerSource}: an in-memory `ListerWatcher` (client-go's fixture): add/modify/delete,
 *   missed events (`...DropWatch`), replay from a resourceVersion, 410 after `compact`/`resetWatch`,
 *   injected list/watch errors, `openWatches()` for leak checks.
 * - {@link startFakeApiServer}: a loopback HTTP server speaking the Kubernetes API for the built-in
 *   kinds, declared resources and CRDs (anything else is 404, like kube-apiserver, unless
 *   `inferUnknownResources`): LIST (paging, resourceVersion semantics, selectors), WATCH (replay, 410, bookmarks,
 *   timeouts, initial events), GET/POST/PUT/PATCH/DELETE with real Status bodies, metadata-only
 *   answers, scripted faults (`injectFault`, `assertNoPendingFaults`), `restart()`, `close()`.
 * - {@link FakeClock} and {@link flushPromises}, re-exported from the core room.
 *
 * Both fakes keep their objects in a {@link ResourceState}. See docs/testing.md for examples.
 *
 * @packageDocumentation
 */
export { FakeClock, flushPromises } from '../core/clock.js';
export { seededRandom } from './random.js';
export {
  FakeControllerSource,
  type FakeControllerSourceOptions,
  type FakeSourceCall,
} from './fake-controller-source.js';
export {
  ResourceState,
  statusError,
  expiredError,
  tooLargeError,
  type ChangeType,
  type StateChange,
  type ResourceStateOptions,
  type StateWriteOptions,
} from './resource-state.js';
export type { PageOptions, PageResult, StoredEntry } from './state-paging.js';
export { labelSelectorPredicate, fieldSelectorPredicate, type ObjectPredicate } from './selectors.js';
export {
  FakeApiServer,
  startFakeApiServer,
  type FakeApiServerOptions,
  type ServerWriteOptions,
} from './fake-api-server/server.js';
export type { ResourceDefinition, ResourceInfo, ResourceRef } from './fake-api-server/paths.js';
export type {
  FakeApiVerb,
  FaultAction,
  FaultMatch,
  FaultSpec,
  StreamFault,
  StreamFaultBase,
  EndWatchFault,
  MalformedLineFault,
  DuplicateEventFault,
  RegressedEventFault,
  NotAnEventFault,
  UnknownEventTypeFault,
  StatusFault,
  StallFault,
  SequenceFault,
} from './fake-api-server/faults.js';
export type { RequestRecord } from './fake-api-server/routes.js';
export { uncoveredUses } from '../core/permissions.js';
