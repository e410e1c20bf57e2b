// The memory experiment's realistic pod population: replicas of Deployments, which share most values.
//
// `makePod(i)` gives every pod its own ReplicaSet (its own pod-template-hash, owner, generateName) and its
// own image tag mix, and a hostIP of its own: few of its long values repeat except the constants. A real
// cluster's pods are replicas: pods of one ReplicaSet share the hash, the owner reference, the images and
// their digests, the creation second of a rollout; pods on one node share its name and IP. This shape:
// 10 000 pods = 1 250 Deployments × 8 replicas over 50 namespaces and 200 nodes, cloud-style node names
// (`ip-10-0-….eu-west-1.compute.internal`, long enough that V8 does not already share them), one image per
// Deployment and one sidecar image per team, timestamps per rollout (replicas a few seconds apart).
// Unique per pod, as in a cluster: name, uid, pod IP, container IDs.

import { makePod, type BenchPod } from './pods.js';

/** Pods per Deployment. */
export const REPLICAS = 8;

function hex(n: number, width: number): string {
  return (n >>> 0).toString(16).padStart(width, '0').slice(-width);
}

/** FNV-1a of a string: a stand-in digest, equal for equal images. */
function fnv(s: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < s.length; k++) h = Math.imul(h ^ s.charCodeAt(k), 16777619);
  return h >>> 0;
}

/** A time `seconds` after 2026-11-01T12:00:00Z, as the API server writes it. */
function at(seconds: number): string {
  return new Date(Date.UTC(2026, 10, 1, 12) + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The i-th pod of the realistic population (see the file's comment): `makePod(i)` with replica-shared values. */
export function deploymentPod(i: number): BenchPod {
  const d = Math.floor(i / REPLICAS);
  const pod = makePod(i, `ns-${d % 50}-team-${d % 50 % 13}`); // 50 namespaces, names V8 does not already share
  const app = `app-${d}`;
  const hash = hex(d * 2654435761, 10);
  const rsUid = `${hex(d, 8)}-${hex(d * 7, 4)}-4${hex(d * 13, 3)}-8${hex(d * 17, 3)}-${hex(d * 31, 12)}`;
  const node = i % 200;
  const nodeName = `ip-10-0-${node >> 4}-${node & 15}.eu-west-1.compute.internal`;
  const rollout = d * 3600; // one rollout per Deployment, an hour apart
  const created = at(rollout + (i % REPLICAS));
  const ready = at(rollout + (i % REPLICAS) + 7);
  const image = `registry.example.com/team-${d % 13}/${app}:v1.${d % 40}.${d % 7}`;
  const sidecar = `registry.example.com/team-${d % 13}/sidecar:v1.${d % 13}.0`;
  const m = pod.metadata as BenchPod['metadata'] & { annotations: Record<string, string> };
  m.name = `${app}-${hash}-${hex(i, 5)}`;
  m.generateName = `${app}-${hash}-`;
  m.creationTimestamp = created;
  m.labels = { app, 'pod-template-hash': hash, tier: d % 3 === 0 ? 'frontend' : 'backend', team: `team-${d % 13}` };
  m.annotations = { ...m.annotations, 'kubectl.kubernetes.io/restartedAt': at(rollout) };
  m.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${hash}`, uid: rsUid, controller: true, blockOwnerDeletion: true }];
  for (const f of m.managedFields as Array<Record<string, unknown>>) f.time = f.manager === 'kubelet' ? ready : created;
  const containers = pod.spec.containers as Array<Record<string, unknown>>;
  containers[0].image = image;
  containers[1].image = sidecar;
  pod.spec.nodeName = nodeName;
  const s = pod.status as Record<string, unknown>;
  s.hostIP = `10.0.${node >> 4}.${node & 15}`;
  s.startTime = created;
  for (const c of s.conditions as Array<Record<string, unknown>>) c.lastTransitionTime = c.type === 'PodScheduled' ? created : ready;
  for (const c of s.containerStatuses as Array<Record<string, unknown>>) {
    const img = c.name === 'main' ? image : sidecar;
    c.image = img;
    c.imageID = `${img.split(':')[0]}@sha256:${hex(fnv(img), 8).repeat(8)}`; // one digest per image
    c.containerID = `containerd://${hex(i * 101 + (c.name === 'main' ? 0 : 7), 8).repeat(8)}`;
    c.state = { running: { startedAt: ready } };
  }
  return pod;
}
