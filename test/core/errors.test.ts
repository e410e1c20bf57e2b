import { describe, expect, it } from 'vitest';
import { ApiStatusError, ErrorCodes, KubeInformerError, isExpiredError, preview, toError } from '../../src/core/index.js';

describe('errors', () => {
  it('gives every library error a stable code, its class name and the cause', () => {
    const cause = new Error('root');
    const err = new KubeInformerError(ErrorCodes.NETWORK, 'down', { cause });
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('NETWORK');
    expect(err.name).toBe('KubeInformerError');
    expect(err.cause).toBe(cause);
  });

  it('gives a 410 Status the EXPIRED code and any other status API_STATUS', () => {
    const gone = new ApiStatusError(410, 'too old resource version', { reason: 'Expired' });
    expect(gone.code).toBe('EXPIRED');
    expect(isExpiredError(gone)).toBe(true);
    const denied = new ApiStatusError(403, 'forbidden', { reason: 'Forbidden' });
    expect(denied.code).toBe('API_STATUS');
    expect(isExpiredError(denied)).toBe(false);
  });

  it('recognises 410 on foreign errors by statusCode or code', () => {
    expect(isExpiredError({ statusCode: 410 })).toBe(true);
    expect(isExpiredError({ code: 410 })).toBe(true);
    expect(isExpiredError({ code: 500 })).toBe(false);
    expect(isExpiredError(null)).toBe(false);
    expect(isExpiredError('410')).toBe(false);
  });

  it('wraps non-Error throwables readably and keeps them as the cause', () => {
    const e = toError('boom');
    expect(e.message).toContain('boom');
    expect(e.cause).toBe('boom');
    expect(toError({ a: 1 }).message).toContain('{"a":1}');
    const original = new TypeError('t');
    expect(toError(original)).toBe(original);
  });
});

describe('preview', () => {
  it('never throws, whatever the value', () => {
    const hostile = {
      get boom(): never {
        throw new Error('getter');
      },
    };
    expect(() => preview(hostile)).not.toThrow();
    expect(preview(10n)).toBe('"10n"');
    expect(preview(undefined)).toBe('undefined');
  });

  it('cuts long output to the limit', () => {
    expect(preview('y'.repeat(1000), 50)).toHaveLength(50);
  });
});
