// Kubernetes failure `Status` bodies, shaped like kube-apiserver's, for both fakes.

/** The `reason` kube-apiserver puts on a Status for each HTTP code it commonly answers. */
export const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A failure `Status` object, shaped like kube-apiserver's. */
export function statusBody(
  code: number,
  message: string,
  reason: string = REASONS[code] ?? 'Unknown',
  details?: Record<string, unknown>,
): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(details !== undefined ? { details } : {}),
    code,
  };
}
