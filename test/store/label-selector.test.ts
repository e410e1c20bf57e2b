// Label selector table tests: parsing, canonical text, matching, validation, and the object forms.

import type { V1LabelSelector } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ErrorCodes, type DeepReadonly } from '../../src/core/index.js';
import {
  SelectorParseError,
  everythingSelector,
  labelSelectorFromObject,
  labelSelectorFromSet,
  nothingSelector,
  parseLabelSelector,
  toLabelSelector,
  type LabelSelectorObject,
} from '../../src/store/index.js';

function parseError(fn: () => unknown): SelectorParseError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(SelectorParseError);
    expect((e as SelectorParseError).code).toBe(ErrorCodes.INVALID_SELECTOR);
    return e as SelectorParseError;
  }
  throw new Error('expected a SelectorParseError');
}

describe('parseLabelSelector: valid selectors', () => {
  // [input, canonical text]
  const table: Array<[string, string]> = [
    ['', ''],
    ['   \t\n', ''],
    ['x=a', 'x=a'],
    ['x==a', 'x==a'],
    ['x!=a', 'x!=a'],
    ['x = a', 'x=a'],
    ['  x  !=  a  ,  y == b ', 'x!=a,y==b'],
    ['y=b,x=a', 'x=a,y=b'],
    ['x in (b,a)', 'x in (a,b)'],
    ['x in(a)', 'x in (a)'],
    ['x notin (a, b ,c)', 'x notin (a,b,c)'],
    ['x in (a,a)', 'x in (a)'],
    ['x', 'x'],
    ['!x', '!x'],
    ['! x', '!x'],
    ['x,!y', 'x,!y'],
    ['x=', 'x='],
    ['x=,y', 'x=,y'],
    ['x in ()', 'x in ()'],
    ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
    ['x in (,a)', 'x in (,a)'],
    ['x in (a,)', 'x in (,a)'],
    ['x in (in,notin)', 'x in (in,notin)'],
    ['x=in', 'x=in'],
    ['in', 'in'],
    ['x>1', 'x>1'],
    ['x < 10', 'x<10'],
    ['example.com/tier=web', 'example.com/tier=web'],
    ['app.kubernetes.io/name in (nginx)', 'app.kubernetes.io/name in (nginx)'],
    ['A_b.c-D=Ok_1.x-Y', 'A_b.c-D=Ok_1.x-Y'],
    [`k=${'v'.repeat(63)}`, `k=${'v'.repeat(63)}`],
    [`${'k'.repeat(63)}`, `${'k'.repeat(63)}`],
    ['x=a,x!=b', 'x=a,x!=b'],
  ];
  for (const [input, canonical] of table) {
    it(`parses ${JSON.stringify(input)} to ${JSON.stringify(canonical)} and back`, () => {
      const sel = parseLabelSelector(input);
      expect(sel.toString()).toBe(canonical);
      expect(parseLabelSelector(sel.toString()).toString()).toBe(canonical);
      expect(sel.empty()).toBe(canonical === '');
    });
  }
});

describe('parseLabelSelector: malformed selectors', () => {
  // [input, position, fragment of the reason]
  const table: Array<[string, number, RegExp]> = [
    [',', 0, /expected a label key/],
    ['x=a,', 4, /after ','.*end of input/],
    ['x=a,,y', 4, /after ','/],
    ['x y', 2, /expected an operator.*found 'y'/],
    ['x in (a', 7, /expected ',' or '\)'.*end of input/],
    ['x in a', 5, /expected '\('/],
    ['x in (a b)', 8, /expected ',' or '\)'/],
    ['x notin', 7, /expected '\('.*end of input/],
    ['x=(a)', 2, /expected a value after '='/],
    ['x=a b', 4, /expected ',' or end of input/],
    ['x=a=b', 3, /expected ',' or end of input/],
    ['!x=a', 2, /'!x' stands alone/],
    ['!', 1, /expected a label key after '!'.*end of input/],
    ['==', 0, /expected a label key/],
    ['x===a', 3, /expected a value after '=='/],
    ['x in (a,=)', 8, /expected a value or ','/],
    ['x>a', 2, /integer/],
    ['x>', 1, /integer/],
    ['x>99999999999999999999', 1, /integer/],
    ['-x', 0, /name part must consist/],
    ['x-', 0, /name part must consist/],
    ['Example.com/x', 0, /prefix.*DNS subdomain/],
    ['/x', 0, /prefix before '\/' must not be empty/],
    ['a.com/', 0, /name part must not be empty/],
    ['a/b/c', 0, /more than one '\/'/],
    [`${'k'.repeat(64)}`, 0, /longer than 63/],
    [`${'p'.repeat(254)}/x`, 0, /longer than 253/],
    [`x=${'v'.repeat(64)}`, 2, /longer than 63/],
    ['x=-a', 2, /value "-a" must be empty or/],
    ['x in (ok,b@d)', 9, /value "b@d"/],
    ['é=1', 0, /name part must consist/],
  ];
  for (const [input, position, reason] of table) {
    it(`rejects ${JSON.stringify(input)} at position ${position}`, () => {
      const err = parseError(() => parseLabelSelector(input));
      expect(err.position).toBe(position);
      expect(err.reason).toMatch(reason);
      expect(err.selector).toBe(input);
      expect(err.message).toContain(`at position ${position}`);
    });
  }

  it('rejects a value that is not a string instead of matching everything', () => {
    parseError(() => parseLabelSelector(undefined as unknown as string));
  });
});

describe('matching', () => {
  const labels = { app: 'web', tier: 'front', replicas: '3', empty: '' };
  // [selector, matches labels above]
  const table: Array<[string, boolean]> = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (db,web)', true],
    ['app in (db)', false],
    ['missing in (x)', false],
    ['app notin (db)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['empty=', true],
    ['empty', true],
    ['empty in ()', true],
    ['missing=', false],
    ['replicas>2', true],
    ['replicas>3', false],
    ['replicas<4', true],
    ['app>1', false],
    ['missing<4', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['app=web,app!=web', false],
  ];
  for (const [text, expected] of table) {
    it(`${expected ? 'matches' : 'does not match'} with ${JSON.stringify(text)}`, () => {
      expect(parseLabelSelector(text).matches(labels)).toBe(expected);
    });
  }

  it('treats missing labels as no labels', () => {
    expect(parseLabelSelector('!a').matches(undefined)).toBe(true);
    expect(parseLabelSelector('a').matches(null)).toBe(false);
    expect(parseLabelSelector('').matches(undefined)).toBe(true);
  });

  it('does not see inherited properties as labels', () => {
    expect(parseLabelSelector('constructor').matches({})).toBe(false);
    expect(parseLabelSelector('!toString').matches({})).toBe(true);
  });

  it('exposes the requirements sorted by key with sorted values', () => {
    expect(parseLabelSelector('z notin (b,a),a=1').requirements()).toEqual([
      { key: 'a', operator: '=', values: ['1'] },
      { key: 'z', operator: 'notin', values: ['a', 'b'] },
    ]);
  });
});

describe('everything and nothing', () => {
  it('has an everything selector that is empty and matches all', () => {
    expect(everythingSelector().empty()).toBe(true);
    expect(everythingSelector().matches({ a: 'b' })).toBe(true);
    expect(everythingSelector().toString()).toBe('');
  });

  it('has a nothing selector whose text also matches nothing on a server', () => {
    const nothing = nothingSelector();
    expect(nothing.empty()).toBe(false);
    expect(nothing.matches({})).toBe(false);
    expect(nothing.matches({ 'kube-informer.io/nothing': 'x' })).toBe(false);
    const reparsed = parseLabelSelector(nothing.toString());
    expect(reparsed.empty()).toBe(false);
    expect(reparsed.matches({})).toBe(false);
    expect(reparsed.matches({ 'kube-informer.io/nothing': '' })).toBe(false);
  });
});

describe('labelSelectorFromSet (matchLabels)', () => {
  it('matches labels that contain every pair', () => {
    const sel = labelSelectorFromSet({ tier: 'web', app: 'x' });
    expect(sel.toString()).toBe('app=x,tier=web');
    expect(sel.matches({ app: 'x', tier: 'web', extra: '1' })).toBe(true);
    expect(sel.matches({ app: 'x' })).toBe(false);
  });

  it('matches everything when empty', () => {
    expect(labelSelectorFromSet({}).empty()).toBe(true);
  });

  it('rejects an invalid key or value', () => {
    expect(parseError(() => labelSelectorFromSet({ 'bad key': 'x' })).reason).toMatch(/labels: key "bad key"/);
    expect(parseError(() => labelSelectorFromSet({ ok: 'bad value' })).reason).toMatch(/value "bad value"/);
    expect(parseError(() => labelSelectorFromSet({ ok: 3 as unknown as string })).reason).toMatch(/must be a string/);
  });
});

describe('labelSelectorFromObject (metav1.LabelSelector)', () => {
  it('matches nothing for an absent selector and everything for an empty one', () => {
    expect(labelSelectorFromObject(undefined).matches({})).toBe(false);
    expect(labelSelectorFromObject(null).matches({ a: 'b' })).toBe(false);
    expect(labelSelectorFromObject({}).empty()).toBe(true);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).matches({})).toBe(true);
  });

  it('combines matchLabels and every matchExpressions operator', () => {
    const sel = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'edge'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist', values: [] },
      ],
    });
    expect(sel.toString()).toBe('app=web,env notin (prod),!legacy,team,tier in (edge,front)');
    expect(sel.matches({ app: 'web', tier: 'edge', team: 'a' })).toBe(true);
    expect(sel.matches({ app: 'web', tier: 'edge', team: 'a', env: 'prod' })).toBe(false);
    expect(sel.matches({ app: 'web', tier: 'edge', team: 'a', legacy: '' })).toBe(false);
    expect(sel.matches({ app: 'web', tier: 'back', team: 'a' })).toBe(false);
  });

  const bad: Array<[string, unknown, RegExp]> = [
    ['an unknown operator', { matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }, /matchExpressions\[0\]: "Gt" is not a valid operator/],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }, /'in' needs at least one value/],
    ['NotIn with values missing', { matchExpressions: [{ key: 'a', operator: 'NotIn' }] }, /'notin' needs at least one value/],
    ['Exists with values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, /'exists' takes no values/],
    ['an invalid key', { matchExpressions: [{ key: 'a b', operator: 'Exists' }] }, /key "a b"/],
    ['an invalid value', { matchExpressions: [{ key: 'a', operator: 'In', values: ['ok', '!'] }] }, /value "!"/],
    ['a non-array of expressions', { matchExpressions: 'a=b' }, /must be an array/],
    ['a non-string key', { matchExpressions: [{ operator: 'Exists' }] }, /key must be a string/],
    ['a bad matchLabels value', { matchLabels: { a: 'x y' } }, /matchLabels: value "x y"/],
    ['a non-object', 'app=web', /must be an object/],
  ];
  for (const [what, input, reason] of bad) {
    it(`rejects ${what}`, () => {
      const err = parseError(() => labelSelectorFromObject(input as LabelSelectorObject));
      expect(err.reason).toMatch(reason);
      expect(err.position).toBeUndefined();
    });
  }
});

describe('toLabelSelector', () => {
  it('parses text, reads a record as matchLabels, and passes a selector through', () => {
    expect(toLabelSelector('a in (x)').toString()).toBe('a in (x)');
    expect(toLabelSelector({ a: 'x' }).toString()).toBe('a=x');
    const sel = parseLabelSelector('a');
    expect(toLabelSelector(sel)).toBe(sel);
    parseError(() => toLabelSelector('a in'));
  });
});

describe('labelSelectorFromObject with cached objects', () => {
  it('accepts a read-only selector taken from a cached object and client-node V1LabelSelector', () => {
    const fromApi: V1LabelSelector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] };
    const cached: DeepReadonly<{ spec: { selector: LabelSelectorObject } }> = { spec: { selector: fromApi } };
    expect(labelSelectorFromObject(cached.spec.selector).toString()).toBe('app=web,tier');
    expect(labelSelectorFromObject(fromApi).matches({ app: 'web', tier: 'x' })).toBe(true);
  });
});
