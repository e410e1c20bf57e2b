// Realistic pod objects for benchmarks and soaks: about 4.5 KB of JSON each, with managedFields.

/** A pod as the API server serves it, without a resourceVersion (the server stamps one). */
export interface BenchPod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: Record<string, unknown> & { name: string; namespace: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
  status: Record<string, unknown>;
}

function hex(n: number, width: number): string {
  return (n >>> 0).toString(16).padStart(width, '0').slice(-width);
}

/**
 * The `i`-th pod of a deterministic population: same `i`, same pod. Names, labels, IPs and container
 * images vary; the shape is a Deployment-owned pod as kube-apiserver returns it, including the
 * `managedFields` that `stripManagedFields` removes (about a third of the bytes).
 */
export function makePod(i: number, namespace = `ns-${i % 50}`): BenchPod {
  const app = `app-${i % 97}`;
  const hash = hex(i * 2654435761, 10);
  const uid = `${hex(i, 8)}-${hex(i * 7, 4)}-4${hex(i * 13, 3)}-8${hex(i * 17, 3)}-${hex(i * 31, 12)}`;
  const ts = '2026-11-01T12:00:00Z';
  const container = (name: string, port: number): Record<string, unknown> => ({
    name,
    image: `registry.example.com/team-${i % 13}/${name}:v1.${i % 40}.${i % 7}`,
    imagePullPolicy: 'IfNotPresent',
    ports: [{ containerPort: port, name: 'http', protocol: 'TCP' }],
    env: [
      { name: 'APP_NAME', value: app },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
      { name: 'LOG_LEVEL', value: 'info' },
    ],
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
    readinessProbe: { httpGet: { path: '/healthz', port, scheme: 'HTTP' }, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
    volumeMounts: [{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${app}-${hash}-${hex(i, 5)}`,
      namespace,
      uid,
      generateName: `${app}-${hash}-`,
      creationTimestamp: ts,
      labels: { app, 'pod-template-hash': hash, tier: i % 3 === 0 ? 'frontend' : 'backend', team: `team-${i % 13}` },
      annotations: { 'kubectl.kubernetes.io/restartedAt': ts, 'prometheus.io/scrape': 'true', 'prometheus.io/port': '8080' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-${hash}`, uid, controller: true, blockOwnerDeletion: true }],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: ts,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {}, 'f:tier': {}, 'f:team': {} }, 'f:ownerReferences': { '.': {}, [`k:{"uid":"${uid}"}`]: {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"main"}': { '.': {}, 'f:env': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:ports': {}, 'f:readinessProbe': {}, 'f:resources': {} }, 'k:{"name":"sidecar"}': { '.': {}, 'f:image': {}, 'f:name': {} } }, 'f:dnsPolicy': {}, 'f:enableServiceLinks': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {} },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: ts,
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:phase': {}, 'f:podIP': {}, 'f:podIPs': { '.': {}, [`k:{"ip":"10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}"}`]: { '.': {}, 'f:ip': {} } }, 'f:startTime': {} } },
        },
      ],
    },
    spec: {
      containers: [
        container('main', 8080),
        { name: 'sidecar', image: `registry.example.com/team-${i % 13}/sidecar:v1.${i % 40}.${i % 7}`, imagePullPolicy: 'IfNotPresent', resources: { requests: { cpu: '10m', memory: '16Mi' } }, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File' },
      ],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      nodeName: `node-${i % 200}`,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 0,
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      tolerations: [
        { effect: 'NoExecute', key: 'node.kubernetes.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
        { effect: 'NoExecute', key: 'node.kubernetes.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
      ],
      volumes: [{ name: 'kube-api-access', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }] } }],
    },
    status: {
      phase: 'Running',
      hostIP: `192.168.${(i >> 8) & 255}.${i & 255}`,
      podIP: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      podIPs: [{ ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }],
      qosClass: 'Burstable',
      startTime: ts,
      conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: ts })),
      containerStatuses: ['main', 'sidecar'].map((name) => ({
        name,
        ready: true,
        restartCount: i % 3,
        started: true,
        image: `registry.example.com/team-${i % 13}/${name}:v1.${i % 40}.${i % 7}`,
        imageID: `registry.example.com/team-${i % 13}/${name}@sha256:${hex(i * 97, 8).repeat(8)}`,
        containerID: `containerd://${hex(i * 101, 8).repeat(8)}`,
        state: { running: { startedAt: ts } },
        lastState: {},
      })),
    },
  };
}

/** The i-th pod of the independent phase's shape (issue 29's outside harness): `makePod(i)` less its tolerations and readiness probe, ~4.6 KB of JSON with managedFields. */
export function indepPod(i: number): BenchPod {
  const pod = makePod(i);
  delete pod.spec.tolerations;
  for (const c of pod.spec.containers as Array<Record<string, unknown>>) delete c.readinessProbe;
  return pod;
}
