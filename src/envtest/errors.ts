// The one error class of kube-informer/envtest: every failure to start, run or stop a test environment.

import { type ErrorCode, KubeInformerError, type KubeInformerErrorOptions } from '../core/errors.js';

/** The codes a {@link TestEnvironmentError} carries. */
export type TestEnvironmentErrorCode =
  | 'ENVTEST_NO_BINARIES'
  | 'ENVTEST_WRONG_VERSION'
  | 'ENVTEST_PORT_IN_USE'
  | 'ENVTEST_PROCESS_FAILED'
  | 'ENVTEST_CRD_REJECTED';

/**
 * A test environment could not start, failed while running, or could not stop. The message names the
 * cause and the fix; `code` is one of:
 *
 * - `ENVTEST_NO_BINARIES`: no etcd / kube-apiserver where envtest looked (the message lists the places
 *   and the command that gets them);
 * - `ENVTEST_WRONG_VERSION`: the kube-apiserver found is not the `kubernetesVersion` asked for;
 * - `ENVTEST_PORT_IN_USE`: a port given in the options is taken;
 * - `ENVTEST_PROCESS_FAILED`: etcd or kube-apiserver exited or did not become ready in time (the
 *   message ends with the last lines of its log);
 * - `ENVTEST_CRD_REJECTED`: the server refused a CRD (the message quotes the server's reason) or it
 *   did not become `Established`.
 *
 * Bad options throw `InvalidOptionError` (`INVALID_OPTION`); an aborted start rejects with code `ABORTED`.
 */
export class TestEnvironmentError extends KubeInformerError {
  /** `message` names the cause and the fix; `options.cause` keeps the underlying error. */
  constructor(code: TestEnvironmentErrorCode, message: string, options?: KubeInformerErrorOptions) {
    super(code satisfies ErrorCode, message, options);
  }
}
