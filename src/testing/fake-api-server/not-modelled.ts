// What the fake API server does not model, refused loudly: 501 NotImplemented naming the operation, never a silent success.

import type { ApiStatusError } from '../../core/errors.js';
import { statusError } from '../resource-state.js';
import { parseJsonBody } from './http-util.js';

/** The 501 NotImplemented Status for an operation kube-apiserver serves and the fake does not model. */
export function notModelled(operation: string): ApiStatusError {
  return statusError(501, 'NotImplemented', `the fake API server does not model ${operation}; kube-apiserver serves it (see "What the fake does not model" in docs/testing.md)`);
}

/**
 * Refuses an `Accept` the fake cannot honour: a Table (`as=Table`, what kubectl asks for) as the first
 * choice, or protobuf with no JSON choice. JSON, `*` wildcards and PartialObjectMetadata are served.
 */
export function checkAccept(accept: string | undefined): void {
  if (accept === undefined || accept.trim() === '') return;
  const choices = accept.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '');
  if (choices.length === 0) return;
  if (/;\s*as=table\b/.test(choices[0])) throw notModelled(`Table answers (Accept: ${accept})`);
  const json = choices.some((c) => /^(application\/json|application\/\*|\*\/\*)(;|$)/.test(c));
  if (!json && choices.some((c) => c.startsWith('application/vnd.kubernetes.protobuf'))) throw notModelled(`protobuf answers (Accept: ${accept})`);
}

/** Refuses a POST or PUT body kube-apiserver would decode and the fake cannot: YAML or protobuf (JSON is served). */
export function checkBodyType(method: string, contentType: string | undefined): void {
  if (method !== 'POST' && method !== 'PUT') return;
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (type === 'application/yaml' || type === 'application/vnd.kubernetes.protobuf') throw notModelled(`request bodies in ${type} (send JSON)`);
}

/**
 * Refuses DeleteOptions whose meaning needs the garbage collector the fake does not run:
 * `propagationPolicy` Foreground or Orphan (query or body) and `orphanDependents: true`.
 */
export function checkDeleteOptions(query: URLSearchParams, body: string): void {
  const opts = body.trim() === '' ? {} : ((parseJsonBody(body) ?? {}) as { propagationPolicy?: unknown; orphanDependents?: unknown });
  const policy = query.get('propagationPolicy') ?? opts.propagationPolicy;
  if (policy === 'Foreground' || policy === 'Orphan') throw notModelled(`DELETE with propagationPolicy ${policy} (the fake runs no garbage collector)`);
  if (query.get('orphanDependents') === 'true' || opts.orphanDependents === true) throw notModelled('DELETE with orphanDependents (the fake runs no garbage collector)');
}

/** The first list or `$` directive in a strategic merge patch, as a field path; undefined when it has none. */
function strategicPart(value: unknown, path: string): string | undefined {
  if (Array.isArray(value)) return `the list ${path}`;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) return `the directive ${k} at ${path === '' ? '.' : path}`;
    const found = strategicPart(v, `${path}.${k}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A strategic merge patch the fake can apply as a merge patch (RFC 7386): one without lists (merged
 * per element by their patch merge key on kube-apiserver) and without `$` directives; else 501.
 */
export function checkStrategicPatch(patch: unknown): void {
  const part = strategicPart(patch, '');
  if (part !== undefined) throw notModelled(`a strategic merge patch with ${part} (the fake applies strategic merge patches as merge patches; send a JSON patch or a merge patch)`);
}
