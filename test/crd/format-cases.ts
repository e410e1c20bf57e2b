// A definition with a field per string format kube-apiserver validates and an embedded resource, and the objects both the unit tests and the real-apiserver test check.

import { EmbeddedResource, Type, defineCustomResource } from '../../src/crd/index.js';

const text = (format: string) => Type.Optional(Type.String({ format }));

/** One field per format the server validates, the two numeric formats, and an embedded object. */
export const stamps = defineCustomResource({
  group: 'crdfmt.kube-informer.dev',
  names: { kind: 'Stamp' },
  versions: {
    v1: {
      spec: Type.Object({
        when: text('date-time'),
        day: text('date'),
        every: text('duration'),
        id: text('uuid'),
        id4: text('uuid4'),
        mail: text('email'),
        host: text('hostname'),
        ip4: text('ipv4'),
        ip6: text('ipv6'),
        net: text('cidr'),
        mac: text('mac'),
        link: text('uri'),
        data: text('byte'),
        short: text('k8s-short-name'),
        long: text('k8s-long-name'),
        hex: text('hexcolor'),
        rgb: text('rgbcolor'),
        isbn: text('isbn'),
        card: text('creditcard'),
        ssn: text('ssn'),
        oid: text('bsonobjectid'),
        secret: text('password'),
        limited: Type.Optional(Type.String({ format: 'date', maxLength: 5 })),
        count: Type.Optional(Type.Integer({ format: 'int32' })),
        ratio: Type.Optional(Type.Number({ format: 'float' })),
        template: Type.Optional(EmbeddedResource()),
      }),
    },
  },
});

/** One object: its spec, and whether the server stores it (`true`) or refuses it (`false`). */
export interface FormatCase {
  readonly spec: Record<string, unknown>;
  readonly valid: boolean;
}

const cases = (field: string, valid: unknown[], invalid: unknown[]): FormatCase[] => [
  ...valid.map((v) => ({ spec: { [field]: v }, valid: true })),
  ...invalid.map((v) => ({ spec: { [field]: v }, valid: false })),
];

export const formatCases: FormatCase[] = [
  ...cases('when', ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.123+02:00', '2024-01-02t03:04:05z'], ['yesterday', '2024-01-02', '2024-02-30T00:00:00Z', '2024-01-02T24:00:00Z', '2024-01-02T03:04:05', '2024-01-02 03:04:05Z', 5, true, {}]),
  ...cases('when', [['not', 'a', 'string']], []),
  ...cases('day', ['2024-02-29', '0000-01-01'], ['2023-02-29', '2024-1-02', '20240102', '2024-13-01']),
  ...cases('every', ['1h30m', '1.5h', '-5s', '0', '5 minutes', '3 days', 'P1D', '2 weeks'], ['soon', '10', '1 fortnight', '']),
  ...cases('id', ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'], ['not-a-uuid', '123e4567-e89b-12d3-a456-42661417400']),
  ...cases('id4', ['123e4567-e89b-42d3-a456-426614174000'], ['123e4567-e89b-12d3-a456-426614174000']),
  ...cases('mail', ['a@example.com', 'first.last+tag@example.co.uk', 'Jane Doe <jane@example.com>'], ['no-at-sign', 'a@@b', 'a..b@c', '.a@b', 'a@b.', '']),
  ...cases('host', ['example.com', 'localhost', 'bücher.de', 'a-b.example'], ['a_b.com', '-bad.com', 'bad-.com', 'a..b', '']),
  ...cases('ip4', ['10.0.0.1', '010.0.0.1', '::ffff:1.2.3.4'], ['256.1.1.1', '1.2.3', '::1', 'x']),
  ...cases('ip6', ['::1', '2001:db8::', '::ffff:1.2.3.4', '1:2:3:4:5:6:7:8'], ['fe80::1%eth0', '1.2.3.4', '::ffff:010.0.0.1', '1:2:3:4:5:6:7:8:9', '00001::']),
  ...cases('net', ['10.0.0.0/8', '2001:db8::/32', '010.0.0.0/8'], ['10.0.0.0/33', '10.0.0.1', '2001:db8::/129']),
  ...cases('mac', ['01:23:45:67:89:ab', '01-23-45-67-89-AB', '0123.4567.89ab', '01:23:45:67:89:ab:cd:ef'], ['01:23:45:67:89', '01:23-45:67:89:ab', '0123.4567.89']),
  ...cases('link', ['https://example.com/a?b=c', '/relative/path', 'mailto:a@b.c', 'http://[::1]:8080/', 'http://user:pw@host:80/p#frag', '*'], ['example.com/x', 'http://exa mple.com/', 'http://host:port/', 'http://a/%zz', 'http://a:1:2/', '', ':x']),
  ...cases('data', ['aGVsbG8=', 'aGVsbG8h'], ['hello!', '', 'aGVsbG8']),
  ...cases('short', ['my-name', '0a'], ['My-Name', 'a.b', '-a', 'a'.repeat(64)]),
  ...cases('long', ['a.b-c.d', 'x'], ['a..b', 'A.b', '.a']),
  ...cases('hex', ['#fff', 'ffffff'], ['#ffff', 'red']),
  ...cases('rgb', ['rgb(255, 0, 10)', 'rgb(0,0,0)'], ['rgb(256,0,0)', 'rgba(0,0,0,1)']),
  ...cases('isbn', ['0321751043', '978-0321751041', '0-8044-2957-X'], ['1234567890', '978-0321751042']),
  ...cases('card', ['4111 1111 1111 1111', '5500-0000-0000-0004'], ['4111111111111112', '1234']),
  ...cases('ssn', ['123-45-6789', '123 45 6789'], ['123456789', '123-45-678']),
  ...cases('oid', ['507f1f77bcf86cd799439011'], ['507f1f77bcf86cd79943901', 'xyz']),
  ...cases('secret', ['anything at all'], []),
  ...cases('limited', [], ['2024', '2024-01-01', 'nope-nope']),
  ...cases('count', [5, -2147483648], [2147483648, 1.5, 'x', true]),
  ...cases('ratio', [1.5, 3], [1e39, 'x']),
  ...cases('template', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', bogus: 1 }, data: { a: 'b' } }, { apiVersion: 'apps/v1', kind: 'Deployment' }], [
    { apiVersion: 'v1', metadata: {} },
    { kind: 'ConfigMap' },
    {},
    { apiVersion: 'a/b/c', kind: 'X' },
    { apiVersion: 'v1', kind: 'Bad_Kind' },
    { apiVersion: 5, kind: 'X' },
    { apiVersion: '', kind: '' },
  ]),
];
