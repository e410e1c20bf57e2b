// kubeconfigSecrets on kube-apiserver (issue 51): the SelfSubjectReview check held to the real server — credentials it accepts engaged, a token it does not know refused (401).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Secret } from 'kubernetes-types/core/v1.js';
import { resources, type ClusterRefusedError } from '../../src/core/index.js';
import { SharedInformerFactory } from '../../src/index.js';
import { newResourceClient, type KubeConfigLike } from '../../src/listwatch/index.js';
import { kubeconfigSecrets, KUBECONFIG_SECRET_LABEL, type ClusterSink } from '../../src/operations/index.js';
import { until } from '../examples/helpers.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { kubeconfigText } from '../helpers/kubeconfig.js';

describe('kubeconfigSecrets on kube-apiserver', () => {
  let server: RealApiServer;
  let namespace: string;
  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = await freshNamespace(server, 'ki-kubeconfig-secrets');
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** A kubeconfig (as a Secret holds it) for the real server: its CA inline, `token` as the user's. */
  const kubeconfig = (token: string): string => kubeconfigText({ server: server.server, ca: server.ca, user: token, name: 'real' });

  it('engages a cluster whose credentials the server accepts, and refuses one whose token it does not know (401), never engaging it', async () => {
    const events: string[] = [];
    const engaged = new Map<string, KubeConfigLike>();
    const refused: ClusterRefusedError[] = [];
    const sink: ClusterSink = {
      engage: (name, kc, source) => (engaged.set(name, kc), events.push(`engage ${name} from ${source}`)),
      disengage: (name, reason) => (engaged.delete(name), events.push(`disengage ${name}: ${reason}`)),
      refuse: (name, error, source) => (refused.push(error as ClusterRefusedError), events.push(`refuse ${name} from ${source}`)),
    };
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const stop = new AbortController();
    const done = kubeconfigSecrets({ factory, namespace }).run(stop.signal, sink);
    const secrets = newResourceClient(server.kubeConfig, resources.secrets);
    try {
      const secret = (name: string, token: string): Secret => ({
        metadata: { name, namespace, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } },
        data: { kubeconfig: Buffer.from(kubeconfig(token)).toString('base64') },
      });
      await secrets.create(secret('good', server.token));
      await secrets.create(secret('bad', 'not-a-token-this-server-knows'));
      await until(() => events.length >= 2, 'both Secrets handled');
      expect(events.sort()).toEqual([`engage good from secret ${namespace}/good`, `refuse bad from secret ${namespace}/bad`]);
      expect(refused[0]).toMatchObject({ reason: 'unauthorized' });
      expect(refused[0].message).toContain(`the server ${server.server} refused its credentials (401 Unauthorized)`);
      // The engaged kubeconfig reaches the server: it reads the Secret that described it.
      const read = newResourceClient(engaged.get('good')!, resources.secrets);
      expect((await read.get('good', namespace)).metadata?.name).toBe('good');
      read.close();
      await secrets.delete('good', namespace);
      await until(() => events.length >= 3, 'the disengage');
      expect(events[2]).toBe(`disengage good: secret ${namespace}/good was deleted`);
    } finally {
      secrets.close();
      stop.abort();
      await done;
      await factory.shutdown();
    }
  });
});
