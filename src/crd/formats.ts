// The string formats kube-apiserver validates in a custom resource (kube-openapi's strfmt registry, as apiextensions keeps it), each with the server's rule.

/*
 * apiextensions-apiserver keeps a `format` only where it knows it (validation/formats.go): on a string
 * (or a node without a type) the registry's names below, compared without dashes (`date-time` is
 * `datetime`); on an integer `int32`/`int64`, on a number `float`/`double`; anything else is dropped
 * with the warning `unrecognized format "…"`. Every rule here follows the Go function the registry
 * calls (kube-openapi strfmt, its govalidator fork, Go's net, net/url, net/mail and time packages).
 */

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined): boolean => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const MAX_INT64 = (1n << 63n) - 1n;

/** A `yyyy-mm-dd` calendar date (Go's `time.Parse("2006-01-02", s)`): four digits of year, two of month and day, a day the month has. */
function isDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days;
}

/** strfmt's `IsDateTime`: a date, a `t`, `hh:mm:ss`, an optional fraction, then `z` or `±hh:mm` (compared lower-cased). */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const parts = s.toLowerCase().split('t');
  if (parts.length < 2 || !isDate(parts[0])) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u.exec(parts[1]);
  return m !== null && m[1] <= '23' && m[2] <= '59' && m[3] <= '59';
}

const GO_UNITS: Record<string, bigint> = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1_000_000n, s: 1_000_000_000n, m: 60_000_000_000n, h: 3_600_000_000_000n };

/** Go's `time.ParseDuration`: `[-+]` then one or more `<decimal><unit>` (`1h30m`, `.5s`), or `0`; at most 2^63-1 ns. */
function isGoDuration(input: string): boolean {
  let s = input;
  if (s.startsWith('-') || s.startsWith('+')) s = s.slice(1);
  if (s === '0') return true;
  if (s === '') return false;
  let total = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) return false;
    const m = /^(\d*)(?:\.(\d*))?/.exec(s) as RegExpExecArray;
    const [whole, int, frac] = [m[0], m[1], m[2] ?? ''];
    if (int === '' && frac === '') return false;
    s = s.slice(whole.length);
    let i = 0;
    while (i < s.length && s[i] !== '.' && !isDigit(s[i])) i++;
    const unit = GO_UNITS[s.slice(0, i)];
    if (unit === undefined) return false;
    s = s.slice(i);
    const value = BigInt(int === '' ? 0 : int) * unit + (frac === '' ? 0n : (BigInt(frac) * unit) / 10n ** BigInt(frac.length));
    total += value;
    if (total > MAX_INT64 + (input.startsWith('-') ? 1n : 0n)) return false;
  }
  return true;
}

/** The unit words of strfmt's second, Scala-like syntax: the last of each row also matches as a prefix (`minutes`). */
const SCALA_UNITS = [['ns', 'nano'], ['us', 'µs', 'micro'], ['ms', 'milli'], ['s', 'sec'], ['m', 'min'], ['h', 'hr', 'hour'], ['d', 'day'], ['w', 'wk', 'week']];

/** strfmt's `IsDuration`: Go's syntax, or anywhere in the text a number and a unit word (`5 minutes`, `3 days`). */
function isDuration(s: string): boolean {
  if (isGoDuration(s)) return true;
  let ok = false;
  for (const m of s.matchAll(/(\d+)[\t\n\f\r ]*([A-Za-zµ]+)/g)) {
    if (BigInt(m[1]) > MAX_INT64) return false;
    const unit = m[2].toLowerCase();
    for (const row of SCALA_UNITS) if (row.some((v, i) => (i === row.length - 1 && unit.startsWith(v)) || v === unit)) ok = true;
  }
  return ok;
}

/** Decimal digits as Go's forked `dtoi`: at least one; the value stays below 2^24. */
function dtoi(s: string): [number, number] | undefined {
  let i = 0;
  let n = 0;
  while (isDigit(s[i])) {
    n = n * 10 + Number(s[i]);
    if (n >= 0xffffff) return undefined;
    i++;
  }
  return i === 0 ? undefined : [n, i];
}

/** An IPv4 address in dotted decimal; `strict` (Go's `net.ParseIP`) refuses leading zeros, the sloppy form (`ParseIPSloppy`) reads them as decimal. */
function isIPv4(s: string, strict: boolean): boolean {
  const parts = s.split('.');
  if (parts.length !== 4) return false;
  return parts.every((p) => /^\d+$/.test(p) && Number(p) <= 255 && (!strict || p === '0' || !p.startsWith('0')));
}

/** An IPv6 address (`::` once, an IPv4 tail allowed); `strict` limits a group to four hex digits, as `net.ParseIP` does. */
function isIPv6(s: string, strict: boolean): boolean {
  let rest = s;
  let groups = 0;
  let ellipsis = false;
  if (rest.startsWith('::')) {
    ellipsis = true;
    rest = rest.slice(2);
    if (rest === '') return true;
  }
  while (groups < 8) {
    const m = /^[0-9a-fA-F]+/.exec(rest);
    if (m === null || (strict && m[0].length > 4) || parseInt(m[0], 16) > 0xffff) return false;
    if (rest[m[0].length] === '.') {
      if ((!ellipsis && groups !== 6) || groups + 2 > 8) return false;
      if (!isIPv4(rest, strict)) return false;
      groups += 2;
      rest = '';
      break;
    }
    groups++;
    rest = rest.slice(m[0].length);
    if (rest === '') break;
    if (rest[0] !== ':' || rest.length === 1) return false;
    rest = rest.slice(1);
    if (rest[0] === ':') {
      if (ellipsis) return false;
      ellipsis = true;
      rest = rest.slice(1);
      if (rest === '') break;
    }
  }
  if (rest !== '') return false;
  return groups < 8 ? ellipsis : !ellipsis;
}

/** Go's `net.ParseIP` family dispatch: the first `.` or `:` decides between IPv4 and IPv6. */
function parseIP(s: string, strict: boolean): boolean {
  for (const c of s) {
    if (c === '.') return isIPv4(s, strict);
    if (c === ':') return isIPv6(s, strict);
  }
  return false;
}

/** `ParseCIDRSloppy`: an address, `/`, a prefix length within the family's bits. */
function isCIDR(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const [addr, mask] = [s.slice(0, slash), s.slice(slash + 1)];
  const bits = isIPv4(addr, false) ? 32 : isIPv6(addr, false) ? 128 : 0;
  const n = dtoi(mask);
  return bits > 0 && n !== undefined && n[1] === mask.length && n[0] <= bits;
}

/** Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx:…`, `xx-xx-…` or `xxxx.xxxx.…`. */
function isMAC(s: string): boolean {
  const octets = (n: number): boolean => n === 6 || n === 8 || n === 20;
  const m = /^[0-9a-fA-F]{2}([:-])/.exec(s);
  if (m !== null) {
    const sep = m[1];
    const groups = s.split(sep);
    return octets(groups.length) && groups.every((g) => /^[0-9a-fA-F]{2}$/.test(g));
  }
  const groups = s.split('.');
  return s[4] === '.' && octets(groups.length * 2) && groups.every((g) => /^[0-9a-fA-F]{4}$/.test(g));
}

const HOSTNAME = /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** strfmt's `IsHostname`: the RFC 1034 pattern (letters and symbols of any script), at most 255 bytes, labels at most 63. */
function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && bytes(s) <= 255 && s.split('.').every((p) => bytes(p) <= 63);
}

/** Characters a URL host may hold unescaped (Go's `shouldEscape(c, encodeHost)` is false). */
const HOST_CHARS = /^[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"\u0080-\u{10FFFF}%]*$/u;

/** Percent escapes are `%` and two hex digits; in a host only non-ASCII bytes and `%25` may be escaped. */
function escapesOk(s: string, host: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') continue;
    if (!isHex(s[i + 1]) || !isHex(s[i + 2])) return false;
    if (host && parseInt(s[i + 1], 16) < 8 && s.slice(i, i + 3) !== '%25') return false;
    i += 2;
  }
  return true;
}

const validPort = (p: string): boolean => p === '' || /^:[0-9]*$/.test(p);

/** Go's `url.parseHost` for the host of an authority. */
function isUrlHost(scheme: string, host: string): boolean {
  const open = host.lastIndexOf('[');
  if (open > 0) return false;
  if (open === 0) {
    const close = host.lastIndexOf(']');
    if (close < 0 || !validPort(host.slice(close + 1))) return false;
    const inner = host.slice(1, close);
    const zone = inner.indexOf('%25');
    const address = zone >= 0 ? inner.slice(0, zone) : inner;
    return escapesOk(address, true) && isIPv6(decodeURIComponentSafe(address), true);
  }
  const first = host.indexOf(':');
  if (first >= 0) {
    const at = scheme === 'http' || scheme === 'https' ? first : host.lastIndexOf(':');
    if (!validPort(host.slice(at))) return false;
  }
  return HOST_CHARS.test(host) && escapesOk(host, true);
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Go's `url.ParseRequestURI`: an absolute URI (`https://host/path`, `mailto:x`) or an absolute path (`/x`). */
function isRequestURI(s: string): boolean {
  if (s === '' || /[\u0000-\u001f\u007f]/.test(s)) return false;
  if (s === '*') return true;
  const sm = /^([A-Za-z][A-Za-z0-9+\-.]*):/.exec(s);
  if (s.startsWith(':')) return false;
  const scheme = sm === null ? '' : sm[1].toLowerCase();
  let rest = sm === null ? s : s.slice(sm[0].length);
  rest = rest.endsWith('?') && rest.split('?').length === 2 ? rest.slice(0, -1) : rest.split('?')[0];
  if (!rest.startsWith('/')) return scheme !== '';
  if (scheme !== '' && rest.startsWith('//')) {
    let authority = rest.slice(2);
    const slash = authority.indexOf('/');
    rest = slash >= 0 ? authority.slice(slash) : '';
    if (slash >= 0) authority = authority.slice(0, slash);
    const at = authority.lastIndexOf('@');
    if (!isUrlHost(scheme, authority.slice(at + 1))) return false;
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo) || !escapesOk(userinfo, false)) return false;
    }
  }
  return escapesOk(rest, false);
}

/** RFC 5322 atext (Go's `isAtext` without dots): printable ASCII but the specials, or any non-ASCII character. */
const ATOM = /^[^\s()<>[\]:;@\\,".\u0000-\u001f\u007f]+$/u;
const dotAtom = (s: string): boolean => s.split('.').every((part) => ATOM.test(part));

/**
 * Go's `mail.ParseAddress` for the plain `local@domain` form, exactly; an address with a display name,
 * a comment, quotes, brackets or a group (`Name <a@b.c>`) is only checked for its `@` (Go parses those
 * further: such a value may pass here and still be refused by the server).
 */
function isEmail(s: string): boolean {
  if (/[\s"()<>[\]:;\\,]/.test(s)) return s.includes('@');
  const at = s.indexOf('@');
  if (at < 0 || at !== s.lastIndexOf('@')) return false;
  return dotAtom(s.slice(0, at)) && dotAtom(s.slice(at + 1));
}

function isISBN10(s: string): boolean {
  const d = s.replace(/[\s-]+/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
  sum += 10 * (d[9] === 'X' ? 10 : Number(d[9]));
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const d = s.replace(/[\s-]+/g, '');
  if (!/^[0-9]{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 === 0 ? 1 : 3) * Number(d[i]);
  return Number(d[12]) === (10 - (sum % 10)) % 10;
}

/** govalidator's `IsCreditCard`: the digits (everything else removed) match a card pattern and the Luhn sum. */
function isCreditCard(s: string): boolean {
  const d = s.replace(/[^0-9]+/g, '');
  if (!/^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(d)) return false;
  let sum = 0;
  for (let i = d.length - 1, double = false; i >= 0; i--, double = !double) {
    const n = Number(d[i]) * (double ? 2 : 1);
    sum += n >= 10 ? (n % 10) + 1 : n;
  }
  return sum % 10 === 0;
}

const SHORT_NAME = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const RGB_PART = '(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])';

/** The string formats the server validates, by name without dashes, each with its rule. */
const STRING_FORMATS: ReadonlyMap<string, (value: string) => boolean> = new Map([
  ['bsonobjectid', (s: string) => /^[0-9a-fA-F]{24}$/.test(s)],
  ['uri', isRequestURI],
  ['email', isEmail],
  ['hostname', isHostname],
  ['ipv4', (s: string) => parseIP(s, false) && s.includes('.')],
  ['ipv6', (s: string) => parseIP(s, true) && s.includes(':')],
  ['cidr', isCIDR],
  ['mac', isMAC],
  ['uuid', (s: string) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)],
  ['uuid3', (s: string) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s)],
  ['uuid4', (s: string) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s)],
  ['uuid5', (s: string) => /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i.test(s)],
  ['isbn', (s: string) => isISBN10(s) || isISBN13(s)],
  ['isbn10', isISBN10],
  ['isbn13', isISBN13],
  ['creditcard', isCreditCard],
  ['ssn', (s: string) => s.length === 11 && /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s)],
  ['hexcolor', (s: string) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s)],
  ['rgbcolor', (s: string) => new RegExp(`^rgb\\(\\s*${RGB_PART}\\s*,\\s*${RGB_PART}\\s*,\\s*${RGB_PART}\\s*\\)$`).test(s)],
  ['byte', (s: string) => /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/.test(s)],
  ['password', () => true],
  ['date', isDate],
  ['duration', isDuration],
  ['datetime', isDateTime],
  ['k8sshortname', (s: string) => s.length <= 63 && new RegExp(`^${SHORT_NAME}$`).test(s)],
  ['k8slongname', (s: string) => s.length <= 253 && new RegExp(`^${SHORT_NAME}(\\.${SHORT_NAME})*$`).test(s)],
]);

/** The formats the server knows, as they are usually written, by the type they sit on. */
export const KNOWN_FORMATS: Readonly<Record<'string' | 'integer' | 'number', readonly string[]>> = {
  string: [
    'date-time', 'date', 'duration', 'uuid', 'uuid3', 'uuid4', 'uuid5', 'email', 'hostname', 'ipv4', 'ipv6', 'cidr', 'mac', 'uri', 'byte',
    'password', 'bsonobjectid', 'isbn', 'isbn10', 'isbn13', 'creditcard', 'ssn', 'hexcolor', 'rgbcolor', 'k8s-short-name', 'k8s-long-name',
  ],
  integer: ['int32', 'int64'],
  number: ['float', 'double'],
};

/**
 * Whether the server keeps `format` on a node of this type (it drops the others): a string format
 * compared without dashes, `int32`/`int64` on an integer, `float`/`double` on a number.
 */
export function isKnownFormat(type: string | undefined, format: string): boolean {
  if (type === undefined || type === 'string') return STRING_FORMATS.has(format.replaceAll('-', ''));
  if (type === 'integer' || type === 'number') return KNOWN_FORMATS[type].includes(format);
  return false;
}

/** The rule of a string format the server checks, or `undefined` when it checks none (unknown, `int32`, …). */
export function stringFormatRule(format: string): ((value: string) => boolean) | undefined {
  return STRING_FORMATS.get(format.replaceAll('-', ''));
}
