// The Backup operator's webhooks (docs/operator-guide.md): a validating webhook, a conversion webhook between v1 and v2, and the CRD that names the conversion webhook.

import type { KubeConfig } from '@kubernetes/client-node';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { FieldError } from '../../src/crd/index.js';
import { conversionWebhook, crdConversion, validatingWebhookConfiguration, validationWebhook, WebhookServer } from '../../src/webhook/index.js';
import { backups, type Backup, type BackupV2 } from './crd.js';

/**
 * Validates a Backup at v1 (the API server converts a v2 request first: the rule below names v1 only).
 * `validationWebhook` runs the definition's schema first, then this function: what a schema cannot say.
 */
export const validateBackup = validationWebhook(
  backups,
  (req) => {
    const backup = req.object as Backup;
    const errors: FieldError[] = [];
    const fields = backup.spec.schedule.trim().split(/\s+/);
    if (fields.length !== 5) errors.push({ field: 'spec.schedule', type: 'FieldValueInvalid', message: `a cron expression has 5 fields, got ${fields.length}` });
    return errors;
  },
  { name: 'vbackup.backup.example.com' },
);

/** Converts Backups between v1 (the hub, the stored version) and v2, lossless both ways. */
export const convertBackup = conversionWebhook<{ v1: Backup; v2: BackupV2 }, 'v1'>({
  name: 'backups.backup.example.com',
  group: 'backup.example.com',
  hub: 'v1',
  spokes: {
    v2: {
      toHub: (v2) => ({ ...v2, spec: { schedule: v2.spec.schedule, bucket: v2.spec.storage.bucket, keep: v2.spec.retention?.count } }),
      fromHub: (v1) => ({
        ...v1,
        spec: { schedule: v1.spec.schedule, storage: { bucket: v1.spec.bucket }, retention: v1.spec.keep === undefined ? undefined : { count: v1.spec.keep } },
      }),
    },
  },
  servedVersions: ['v1', 'v2'],
});

/** The Backup CRD with its `spec.conversion`: the API server converts v1 ↔ v2 by calling `url` + `/convert-backups`. */
export function backupCrd(url: string, caBundle: string | undefined): CustomResourceDefinition {
  const conversion = crdConversion({ endpoint: { url }, path: '/convert-backups', caBundle });
  return { ...backups.crd, spec: { ...backups.crd.spec, conversion } };
}

/** Options of {@link backupWebhookServer}. */
export interface BackupWebhookServerOptions {
  /** The port to listen on. Default 9443. */
  port?: number;
  /** Where the API server reaches this server. Default `https://127.0.0.1:<port>`. */
  url?: string;
  /** Apply the ValidatingWebhookConfiguration to this cluster when the server starts. Default: not applied. */
  kubeConfig?: KubeConfig;
}

/**
 * The webhook server: `/validate-backups` and `/convert-backups` over HTTPS with a self-signed CA (its
 * `caBundle()` goes into the configurations). Run it, or give it to a Manager (`webhookServer`).
 */
export function backupWebhookServer(options: BackupWebhookServerOptions = {}): WebhookServer {
  const port = options.port ?? 9443;
  const url = options.url ?? `https://127.0.0.1:${port}`;
  const validating = validatingWebhookConfiguration({
    name: 'backups.backup.example.com',
    endpoint: { url },
    webhooks: [
      {
        name: validateBackup.name,
        path: '/validate-backups',
        rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['backup.example.com'], apiVersions: ['v1'], resources: ['backups'] }],
      },
    ],
  });
  const server = new WebhookServer({
    tls: { selfSigned: { hosts: ['127.0.0.1', 'localhost'] } },
    host: '127.0.0.1',
    port,
    configurations: options.kubeConfig === undefined ? undefined : { objects: [validating], kubeConfig: options.kubeConfig },
  });
  server.register('/validate-backups', validateBackup);
  server.register('/convert-backups', convertBackup);
  return server;
}
