// The {{Kind}} webhooks in process: each review answered as the API server would receive it.

import { describe, expect, it } from 'vitest';
// @if admission
import { reviewAdmission } from 'kube-informer/webhook';
// @end
import { {{plural}}, type {{Kind}} } from '../../src/crd.js';
// @if validating
import { validate{{Kind}} } from '../../src/webhooks.js';
// @end
// @if defaulting
import { default{{Kind}} } from '../../src/webhooks.js';
// @end
// @if conversion
import { convert{{Kind}} } from '../../src/webhooks.js';
// @end

const sample: {{Kind}} = {
  apiVersion: '{{group}}/v1',
  kind: '{{Kind}}',
  metadata: { name: 'sample', namespace: 'default' },
  spec: { message: 'hello' },
};

describe('the {{Kind}} webhooks', () => {
  it('serve the {{Kind}} resource', () => {
    expect({{plural}}.descriptor.resource).toBe('{{plural}}');
  });
// @if validating

  it('refuse a blank message, naming the field, and admit a good one', async () => {
    const refused = await reviewAdmission(validate{{Kind}}, { resource: {{plural}}.descriptor, object: { ...sample, spec: { message: '   ' } } });
    expect(refused.allowed).toBe(false);
    expect(refused.status?.details?.causes).toEqual([expect.objectContaining({ field: 'spec.message' })]);
    expect((await reviewAdmission(validate{{Kind}}, { resource: {{plural}}.descriptor, object: sample })).allowed).toBe(true);
  });
// @end
// @if defaulting

  it('trim the message', async () => {
    const result = await reviewAdmission(default{{Kind}}, { resource: {{plural}}.descriptor, object: { ...sample, spec: { message: '  hello  ' } } });
    expect(result.allowed).toBe(true);
    expect((result.object as {{Kind}} | undefined)?.spec.message).toBe('hello');
  });
// @end
// @if conversion

  it('convert v1 -> v1alpha1 -> v1 without losing a field', () => {
    const old = convert{{Kind}}.convert({ ...sample }, '{{group}}/v1alpha1');
    expect(old).toMatchObject({ apiVersion: '{{group}}/v1alpha1', spec: { text: 'hello' } });
    expect(convert{{Kind}}.convert(old, '{{group}}/v1')).toEqual(sample);
  });
// @end
});
