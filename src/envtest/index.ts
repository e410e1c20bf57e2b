// The entry point `kube-informer/envtest`: a real etcd + kube-apiserver for tests, in one call.

/**
 * `kube-informer/envtest`: starts a real etcd and kube-apiserver for a test, installs CRDs and waits
 * until they are `Established`, like controller-runtime's envtest. The binaries come from
 * `KUBEBUILDER_ASSETS` (setup-envtest's layout), the `binaryAssetsDir` option, or a cache filled by
 * `npx kube-informer envtest use 1.37.2`. Nothing in the package root imports this entry point, so
 * it costs an application nothing. See docs/testing.md.
 *
 * @packageDocumentation
 */
export { startTestEnvironment, type TestEnvironment } from './environment.js';
export type { TestEnvironmentOptions } from './options.js';
export type { TestEnvironmentCrd } from './crds.js';
export { TestEnvironmentError, type TestEnvironmentErrorCode } from './errors.js';
export {
  resolveBinaryAssets,
  PINNED_KUBERNETES_VERSION,
  type BinaryAssets,
  type BinaryAssetsSource,
  type ResolveAssetsInput,
} from './assets.js';
