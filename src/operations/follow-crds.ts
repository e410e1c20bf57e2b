// The Manager's followCustomResources: its custom-resource informers turn absent when their CRD goes, and one CRD watch per resource wakes them when it is Established again.

import { isConditionTrue } from '../core/conditions.js';
import type { Clock } from '../core/clock.js';
import type { Logger, LoggerOption } from '../core/log.js';
import type { Permission } from '../core/permissions.js';
import { resources, type ResourceDescriptor } from '../core/resources.js';
import type { GroupVersionResource } from '../core/types.js';
import { SharedIndexInformer, type InformerState, type SharedInformerFactory } from '../informer/index.js';
import { newListWatch } from '../listwatch/index.js';

/** The built-in resources (`group/resource`), which no CRD defines: they are not followed. */
const BUILT_IN = new Set((Object.values(resources) as ResourceDescriptor[]).map((r) => `${r.group}/${r.resource}`));

/** The CRD name of a resource: `<plural>.<group>`. */
function crdNameOf(gvr: GroupVersionResource): string {
  return `${gvr.resource}.${gvr.group}`;
}

/** Whether a CRD may define `gvr`: a named group, and not one of the built-in resources. */
function isCustomResource(gvr: GroupVersionResource): boolean {
  return gvr.group !== '' && !BUILT_IN.has(`${gvr.group}/${gvr.resource}`);
}

/** What the follower needs of one informer of the factory (a `SharedIndexInformer`, or one built on them). */
interface Followed {
  setOnResourceMissing?(policy: 'retry' | 'absent'): void;
  isStarted?(): boolean;
  health(): { state: InformerState };
  relist?(signal?: AbortSignal): Promise<void>;
}

/** A custom resource the manager follows, and its informer. */
interface FollowedResource {
  readonly key: string;
  readonly crd: string;
  readonly informer: Followed;
}

/** The custom resources among `factory`'s informers (by resource key). */
function followedOf(factory: SharedInformerFactory): FollowedResource[] {
  const out: FollowedResource[] = [];
  for (const [key, informer] of Object.entries(factory.informers())) {
    const gvr = parseKey(key);
    if (gvr !== undefined && isCustomResource(gvr)) out.push({ key, crd: crdNameOf(gvr), informer });
  }
  return out;
}

/** `group/version/resource` back to its parts (a core-group key has two parts, and is never custom). */
function parseKey(key: string): GroupVersionResource | undefined {
  const parts = key.split('/');
  return parts.length === 3 ? { group: parts[0], version: parts[1], resource: parts[2] } : undefined;
}

/**
 * The `list` and `watch` of each followed resource's CRD, by name (a `metadata.name` field selector,
 * which kube-apiserver authorizes against `resourceNames`).
 */
export function followPermissions(factory: SharedInformerFactory): Permission[] {
  const names = [...new Set(followedOf(factory).map((f) => f.crd))].sort();
  if (names.length === 0) return [];
  const crd = resources.customresourcedefinitions;
  return [{
    group: crd.group,
    resource: crd.resource,
    verbs: ['list', 'watch'],
    resourceNames: names,
    reason: 'Manager followCustomResources: watches the CRD of each custom resource it caches, to list it again as soon as the CRD is Established again',
  }];
}

/** What {@link followCustomResources} is given by the manager. */
export interface FollowContext {
  readonly factory: SharedInformerFactory;
  readonly clock: Clock;
  readonly logger: LoggerOption | undefined;
  readonly log: Logger;
}

/**
 * Sets `onResourceMissing: 'absent'` on the factory's custom-resource informers not started yet, and
 * returns the runnable that watches their CRDs (one informer per CRD, by name): an Established CRD
 * whose informer is absent makes it list at once (`relist()`); the informer's own backoff re-check
 * stays the fallback (a factory without a kubeConfig, a CRD watch refused by RBAC). `undefined` when
 * there is nothing to follow.
 */
export function followCustomResources(ctx: FollowContext): ((signal: AbortSignal) => Promise<void>) | undefined {
  const followed = followedOf(ctx.factory);
  for (const f of followed) {
    if (f.informer.isStarted?.() === true) {
      ctx.log.warn(`manager: followCustomResources: informer ${f.key} was started before the manager ran; it keeps onResourceMissing 'retry' (a deleted CRD makes it unready)`);
    } else {
      f.informer.setOnResourceMissing?.('absent');
    }
  }
  if (followed.length === 0) {
    ctx.log.warn('manager: followCustomResources is set, but the factory caches no custom resource: nothing to follow');
    return undefined;
  }
  ctx.log.info(`manager: following the CRDs of ${followed.map((f) => f.key).join(', ')}: a deleted CRD makes its informer absent (ready, empty) until it is Established again`);
  const kubeConfig = ctx.factory.kubeConfig;
  if (kubeConfig === undefined) {
    ctx.log.info('manager: followCustomResources: the factory has no kubeConfig (listWatchFor), so CRDs are not watched; absent informers re-check on their backoff');
    return undefined;
  }
  return async (signal) => {
    const watchers = followed.map((f) => {
      const lw = newListWatch<unknown>(kubeConfig, resources.customresourcedefinitions, { fieldSelector: `metadata.name=${f.crd}`, logger: ctx.logger });
      const informer = new SharedIndexInformer<unknown>(lw, { name: `crd ${f.crd} (followCustomResources)`, clock: ctx.clock, logger: ctx.logger });
      const wake = (crd: unknown): void => {
        const conditions = (crd as { status?: { conditions?: { type: string; status: string }[] } } | null)?.status?.conditions;
        // A CRD being deleted stays Established (and Terminating) until its objects are gone.
        if (!isConditionTrue(conditions, 'Established') || isConditionTrue(conditions, 'Terminating') || f.informer.health().state !== 'absent') return;
        ctx.log.info(`manager: CustomResourceDefinition ${f.crd} is Established: informer ${f.key} lists again`);
        // A stop meanwhile (the manager stopping) is the informer's own to report.
        f.informer.relist?.(signal).catch(() => undefined);
      };
      informer.addEventHandler({ onAdd: wake, onUpdate: (_old, crd) => wake(crd) }, { name: `follow ${f.key}` });
      return informer.run(signal);
    });
    await Promise.all(watchers);
  };
}

