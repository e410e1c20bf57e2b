// Where a shard ring keeps its Leases: one per member (its heartbeat) and one per slot (its holder).
// Kubernetes Leases for real rings; an in-memory store with the same compare-and-swap for tests.

import { validateOptions } from '../core/options.js';
import type { HasPermissions, Permission } from '../core/permissions.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import { KubeInformerError, ErrorCodes } from '../core/errors.js';
import { resources } from '../core/resources.js';
import { ApiStatusError } from '../core/errors.js';
import { newListWatch } from '../listwatch/list-watch.js';
import { newResourceClient } from '../listwatch/resource-client.js';
import type { KubeConfigLike } from '../listwatch/transport.js';

/** One Lease of a ring as read: its name, its holder and a version that changes on every write. */
export interface RingLease {
  /** The Lease's name (`<ring>-member-<identity>` or `<ring>-slot-<i>`). */
  readonly name: string;
  /** `''` when free. */
  readonly holder: string;
  /** Changes on every write (a Lease's resourceVersion): what "renewed" is observed by. */
  readonly version: string;
}

/** Another writer changed the Lease first (HTTP 409, or the in-memory version moved). Code `LEADER_ELECTION`. */
export class RingConflictError extends KubeInformerError {
  constructor(message: string) {
    super(ErrorCodes.LEADER_ELECTION, message);
  }
}

/**
 * The Leases of one ring. `write` is a compare-and-swap: it creates the Lease when `version` is
 * undefined and replaces it only if it still has `version`; otherwise it rejects with
 * {@link RingConflictError}. Any other rejection is a failure the ring retries next period.
 */
export interface RingStore {
  /** Every Lease of the ring. */
  list(signal?: AbortSignal): Promise<RingLease[]>;
  /** Writes `holder` (with a fresh renew time) to the Lease `name`. */
  write(name: string, holder: string, version: string | undefined, signal?: AbortSignal): Promise<void>;
}

/** A {@link RingStore} in memory, shared by every replica of a test: one version counter per Lease. */
export class InMemoryRingStore implements RingStore {
  readonly #leases = new Map<string, { holder: string; version: number }>();
  #writes = 0;

  /** Writes accepted so far. */
  get writes(): number {
    return this.#writes;
  }

  list(): Promise<RingLease[]> {
    return Promise.resolve([...this.#leases].map(([name, l]) => ({ name, holder: l.holder, version: String(l.version) })));
  }

  write(name: string, holder: string, version: string | undefined): Promise<void> {
    const current = this.#leases.get(name);
    if (version === undefined ? current !== undefined : current === undefined || String(current.version) !== version) {
      return Promise.reject(new RingConflictError(`lease ${name} changed (have ${current?.version ?? 'none'}, expected ${version ?? 'none'})`));
    }
    this.#leases.set(name, { holder, version: (current?.version ?? 0) + 1 });
    this.#writes++;
    return Promise.resolve();
  }

  /** The holder written in Lease `name` (`undefined` when it does not exist). */
  holder(name: string): string | undefined {
    return this.#leases.get(name)?.holder;
  }
}

/** The label that marks a Lease as one of ring `name`'s. */
export const RING_LABEL = 'sharding.kube-informer.io/ring';

/** Options of {@link LeaseRingStore}. */
export interface LeaseRingStoreOptions {
  /** Where the Leases live. */
  readonly namespace: string;
  /** The ring's name: the value of {@link RING_LABEL} on its Leases. */
  readonly ring: string;
  /** Written into each Lease's `spec.leaseDurationSeconds` (informational: replicas judge expiry by observation). */
  readonly leaseDurationSeconds: number;
}

/**
 * A {@link RingStore} on `coordination.k8s.io/v1` Leases labelled {@link RING_LABEL}=`ring`: one list
 * per period, and a replace with `metadata.resourceVersion` (409 on a conflict) per write. Needs RBAC to
 * list, create and update Leases in the namespace.
 */
export class LeaseRingStore implements RingStore, HasPermissions {
  readonly #options: LeaseRingStoreOptions;
  readonly #leases;
  readonly #client;

  /** Throws `INVALID_OPTION` for an option of the wrong type or an unknown one. */
  constructor(kubeConfig: KubeConfigLike, options: LeaseRingStoreOptions) {
    validateOptions('LeaseRingStore', options, { namespace: 'string', ring: 'string', leaseDurationSeconds: 'positiveCount' });
    this.#options = options;
    this.#leases = newListWatch<Lease>(kubeConfig, resources.leases, { namespace: options.namespace, labelSelector: `${RING_LABEL}=${options.ring}`, logger: false });
    this.#client = newResourceClient<Lease>(kubeConfig, resources.leases, { fieldManager: 'kube-informer-shard-ring' });
  }

  async list(signal: AbortSignal = new AbortController().signal): Promise<RingLease[]> {
    const out: RingLease[] = [];
    let cont: string | undefined;
    do {
      const page = await this.#leases.list({ limit: 500, continue: cont }, signal);
      for (const lease of page.items) {
        const name = lease.metadata?.name ?? '';
        out.push({ name, holder: lease.spec?.holderIdentity ?? '', version: lease.metadata?.resourceVersion ?? '' });
      }
      cont = page.metadata.continue || undefined;
    } while (cont !== undefined);
    return out;
  }

  async write(name: string, holder: string, version: string | undefined, signal?: AbortSignal): Promise<void> {
    const { namespace, ring, leaseDurationSeconds } = this.#options;
    const spec = { holderIdentity: holder, leaseDurationSeconds, renewTime: new Date().toISOString().replace('Z', '000Z') };
    const metadata = { name, namespace, labels: { [RING_LABEL]: ring } };
    try {
      if (version === undefined) {
        await this.#client.create({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata, spec }, signal);
      } else {
        await this.#client.replace({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...metadata, resourceVersion: version }, spec }, signal);
      }
    } catch (err) {
      if (err instanceof ApiStatusError && (err.statusCode === 409 || (version !== undefined && err.statusCode === 404))) {
        throw new RingConflictError(`lease ${namespace}/${name} changed: ${err.message}`);
      }
      throw err;
    }
  }

  /**
   * What the store needs (see `HasPermissions`): `list`, `create` and `update` of Leases in its
   * namespace (member Leases are named after each replica's identity, so no name narrows them).
   */
  permissions(): Permission[] {
    return [{ group: 'coordination.k8s.io', resource: 'leases', namespace: this.#options.namespace, verbs: ['list', 'create', 'update'], reason: `shard ring ${this.#options.ring} (Lease store)` }];
  }

  /** Releases the pooled connections. */
  close(): void {
    this.#leases.close();
    this.#client.close();
  }
}
