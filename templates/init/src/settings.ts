// Where the operator runs: its name, its namespace, its ports, and how long it may take to stop — one place for the code, the manifests and the Deployment.

/** The operator's name: its Deployment, ServiceAccount, Lease and field manager. */
export const NAME = '{{name}}';

/**
 * The namespace the operator runs in: the pod's (`POD_NAMESPACE`, from the Downward API in
 * config/manager/deployment.yaml), else the one the manifests deploy to. Its Lease lives there.
 */
export const NAMESPACE = process.env.POD_NAMESPACE ?? '{{namespace}}';

/** This replica's identity in the leader election: the pod's name (`POD_NAME`), else host and process. */
export const IDENTITY = process.env.POD_NAME ?? `${process.env.HOSTNAME ?? 'local'}-${process.pid}`;

/** The port of `/livez`, `/readyz` and `/metrics` (the Deployment's probes point at it). */
export const PROBE_PORT = 8081;
// @if webhooks

/** The port of the webhook server (the Service `{{name}}-webhook` forwards 443 to it). */
export const WEBHOOK_PORT = 9443;

/** The Service the API server calls the webhooks through (config/webhook/service.yaml). */
export const WEBHOOK_SERVICE = { namespace: NAMESPACE, name: '{{name}}-webhook', port: 443 };
// @end
// @if certManager

/** Where the Deployment mounts the Secret cert-manager writes (config/webhook/certificate.yaml). */
export const CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

/** The Certificate whose CA cert-manager's CA injector writes into the webhook configurations and the CRD. */
export const CERTIFICATE = `${NAMESPACE}/{{name}}-serving-cert`;
// @end

/**
 * How long stopping may take, in ms, after SIGTERM: the reconciles drain, the Lease is released, the
 * webhook server finishes its reviews. Keep it below the Deployment's `terminationGracePeriodSeconds`
 * (30 s), so the kubelet never has to kill the process.
 */
export const STOP_GRACE_MS = 25_000;
