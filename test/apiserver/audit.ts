// The real kube-apiserver's audit log as the oracle of what a ServiceAccount did: its requests by verb, resource and answer, and the 401s of tokens it no longer accepts.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The audit policy: every request of a service account (the operator under test) and every request
 * that failed authentication (no user: a refused token) at `Metadata` level; nothing of the admin
 * (the test itself) or of the apiserver's own loopback client.
 */
const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  userGroups: ["system:serviceaccounts"]
- level: None
  userGroups: ["system:masters", "system:authenticated"]
- level: Metadata
`;

/** One audited request, as the apiserver logged it (the fields the proofs read). */
export interface AuditEvent {
  /** `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, … */
  verb: string;
  /** Who: empty when authentication failed. */
  user: string;
  /** The resource, `configmapsets/status` for a subresource; empty for a non-resource URL. */
  resource: string;
  /** The namespace, when namespaced. */
  namespace: string;
  /** The HTTP status answered. */
  code: number;
  /** The request URI. */
  uri: string;
  /** When the answer started (or completed), in ms since the epoch. */
  at: number;
  /** The credential's id: `JTI=<jti>` of a service-account token (which token was used); empty otherwise. */
  credential: string;
}

/** The audit log of one private test server: the flags that turn it on, and its reader. */
export class AuditLog {
  /** The log file. */
  readonly path: string;
  /** The kube-apiserver flags: give them to `startRealApiServer({ apiServerArgs })`. */
  readonly apiServerArgs: string[];

  /** Writes the policy into `dir`; the log goes there too. */
  constructor(dir: string) {
    const policy = join(dir, 'audit-policy.yaml');
    writeFileSync(policy, POLICY);
    this.path = join(dir, 'audit.log');
    this.apiServerArgs = [`--audit-policy-file=${policy}`, `--audit-log-path=${this.path}`, '--audit-log-format=json', '--audit-log-mode=blocking', '--audit-log-maxsize=0'];
  }

  /**
   * Every request logged so far, once each: a watch when it started streaming (`ResponseStarted`) or
   * when it was refused, a failed authentication when refused (`ResponseStarted`, no user); anything
   * else when it completed (`ResponseComplete`, or `Panic`).
   */
  events(): AuditEvent[] {
    let text = '';
    try {
      text = readFileSync(this.path, 'utf8');
    } catch {
      return [];
    }
    const out: AuditEvent[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const e = JSON.parse(line) as {
        stage: string;
        verb: string;
        user?: { username?: string; extra?: Record<string, string[]> };
        objectRef?: { resource?: string; subresource?: string; namespace?: string };
        responseStatus?: { code?: number };
        requestURI: string;
        stageTimestamp: string;
      };
      // A failed authentication is logged once, at ResponseStarted, with no user.
      const watchStart = e.stage === 'ResponseStarted' && (e.verb === 'watch' || e.user?.username === undefined);
      const completed = (e.stage === 'ResponseComplete' && (e.verb !== 'watch' || e.responseStatus?.code !== 200)) || e.stage === 'Panic';
      if (!watchStart && !completed) continue;
      const ref = e.objectRef;
      out.push({
        verb: e.verb,
        user: e.user?.username ?? '',
        resource: ref?.resource === undefined ? '' : ref.subresource ? `${ref.resource}/${ref.subresource}` : ref.resource,
        namespace: ref?.namespace ?? '',
        code: e.responseStatus?.code ?? 0,
        uri: e.requestURI,
        at: Date.parse(e.stageTimestamp),
        credential: e.user?.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '',
      });
    }
    return out;
  }

  /** The events of `user` (all of them, or from `since` ms on). */
  of(user: string, since = 0): AuditEvent[] {
    return this.events().filter((e) => e.user === user && e.at >= since);
  }

  /** Requests refused for a token the server did not accept (401), from `since` on. */
  unauthorized(since = 0): AuditEvent[] {
    return this.events().filter((e) => e.code === 401 && e.at >= since);
  }
}

/** `verb resource` counts of some events, e.g. `{ 'list configmaps': 2 }`, sorted by key. */
export function countByVerb(events: readonly AuditEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const e of events) {
    const key = `${e.verb} ${e.resource || e.uri}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
}

/** The `credential` an audit event shows for a service-account token: `JTI=<its jti claim>`. */
export function credentialOf(token: string): string {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { jti?: string };
  return `JTI=${payload.jti ?? ''}`;
}
