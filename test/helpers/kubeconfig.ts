// The text of a kubeconfig as a kubeconfig Secret holds it: one cluster, one user, one context; the CA inline
// (no file paths, which the Secret providers refuse). The multi-cluster tests write their Secrets with it.

/** What {@link kubeconfigText} writes. */
export interface KubeconfigTextOptions {
  /** The API server's URL. */
  server: string;
  /** The user's bearer token, or the whole user entry (JSON) for a test of other user kinds. Default `{ token: 'fake-token' }`. */
  user?: string | Record<string, unknown>;
  /** The server's CA certificate (PEM), written as `certificate-authority-data`. */
  ca?: string;
  /** The cluster's and context's name. Default `c`. */
  name?: string;
}

/** A kubeconfig's YAML text for one server and one user (see {@link KubeconfigTextOptions}). */
export function kubeconfigText({ server, user = { token: 'fake-token' }, ca, name = 'c' }: KubeconfigTextOptions): string {
  const entry = typeof user === 'string' ? { token: user } : user;
  const caLine = ca === undefined ? '' : `\n    certificate-authority-data: ${Buffer.from(ca).toString('base64')}`;
  return [
    'apiVersion: v1',
    'kind: Config',
    `clusters:\n- name: ${name}\n  cluster:\n    server: ${server}${caLine}`,
    `users:\n- name: u\n  user: ${JSON.stringify(entry)}`,
    `contexts:\n- name: ${name}\n  context:\n    cluster: ${name}\n    user: u`,
    `current-context: ${name}`,
    '',
  ].join('\n');
}
