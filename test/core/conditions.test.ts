// setCondition and friends, table tests after apimachinery's pkg/api/meta/conditions_test.go (our own cases and words).

import { describe, expect, it } from 'vitest';
import { findCondition, isConditionFalse, isConditionTrue, removeCondition, setCondition, type Condition } from '../../src/objects.js';

const T0 = '2026-11-24T09:00:00Z';
const T1 = '2026-11-24T10:00:00Z';
const now = () => new Date('2026-11-24T11:30:00.456Z');
const NOW = '2026-11-24T11:30:00Z';
const c = (type: string, status: Condition['status'], more: Partial<Condition> = {}): Condition => ({ type, status, reason: 'R', message: '', lastTransitionTime: T0, ...more });

describe('setCondition (meta.SetStatusCondition)', () => {
  it.each([
    {
      name: 'appends a new type, with the transition time now',
      start: [c('first', 'True'), c('third', 'True')],
      set: { type: 'second', status: 'True' as const, reason: 'R' },
      want: [c('first', 'True'), c('third', 'True'), c('second', 'True', { lastTransitionTime: NOW })],
      changed: true,
    },
    {
      name: 'appends a new type with the transition time given',
      start: [],
      set: { type: 'first', status: 'False' as const, reason: 'R', lastTransitionTime: T1 },
      want: [c('first', 'False', { lastTransitionTime: T1 })],
      changed: true,
    },
    {
      name: 'a status change takes the supplied transition time',
      start: [c('first', 'True'), c('second', 'False'), c('third', 'True')],
      set: { type: 'second', status: 'True' as const, reason: 'R', lastTransitionTime: T1 },
      want: [c('first', 'True'), c('second', 'True', { lastTransitionTime: T1 }), c('third', 'True')],
      changed: true,
    },
    {
      name: 'a status change without a time takes now',
      start: [c('first', 'True')],
      set: { type: 'first', status: 'Unknown' as const, reason: 'R' },
      want: [c('first', 'Unknown', { lastTransitionTime: NOW })],
      changed: true,
    },
    {
      name: 'reason, message and observedGeneration change; the same status keeps its transition time (even one supplied)',
      start: [c('first', 'True'), c('second', 'True', { observedGeneration: 3 })],
      set: { type: 'second', status: 'True' as const, reason: 'Other', message: 'more', observedGeneration: 4, lastTransitionTime: T1 },
      want: [c('first', 'True'), c('second', 'True', { reason: 'Other', message: 'more', observedGeneration: 4 })],
      changed: true,
    },
    {
      name: 'nothing differs: unchanged',
      start: [c('first', 'True', { observedGeneration: 2 })],
      set: { type: 'first', status: 'True' as const, reason: 'R', observedGeneration: 2 },
      want: [c('first', 'True', { observedGeneration: 2 })],
      changed: false,
    },
  ])('$name', ({ start, set, want, changed }) => {
    const frozen = Object.freeze(start.map((x) => Object.freeze({ ...x })));
    const result = setCondition(frozen, set, { now });
    expect(result.conditions).toEqual(want);
    expect(result.changed).toBe(changed);
    expect(frozen).toEqual(start); // the list given is never changed
  });

  it('takes undefined as an empty list', () => {
    expect(setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Done' }, { now }).conditions).toEqual([
      { type: 'Ready', status: 'True', reason: 'Done', message: '', lastTransitionTime: NOW },
    ]);
  });

  it.each([
    [{ type: '', status: 'True', reason: 'R' }, /needs a type/],
    [{ type: 'Ready', status: 'true', reason: 'R' }, /status must be 'True', 'False' or 'Unknown'/],
    [{ type: 'Ready', status: 'True', reason: '' }, /reason must be CamelCase/],
    [{ type: 'Ready', status: 'True', reason: 'has space' }, /reason must be CamelCase/],
  ])('refuses %j with INVALID_OPTION', (bad, message) => {
    expect(() => setCondition([], bad as never)).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringMatching(message) }));
  });
});

describe('findCondition, isConditionTrue, isConditionFalse, removeCondition', () => {
  const list = [c('first', 'True'), c('second', 'False'), c('third', 'Unknown')];
  it('finds by type', () => {
    expect(findCondition(list, 'second')).toBe(list[1]);
    expect(findCondition(list, 'fourth')).toBeUndefined();
    expect(findCondition(undefined, 'first')).toBeUndefined();
  });
  it.each([
    ['first', true, false],
    ['second', false, true],
    ['third', false, false],
    ['missing', false, false],
  ])('%s: true %s, false %s', (type, t, f) => {
    expect(isConditionTrue(list, type)).toBe(t);
    expect(isConditionFalse(list, type)).toBe(f);
  });
  it('removes by type, and says whether it was there', () => {
    expect(removeCondition(list, 'second')).toEqual({ conditions: [list[0], list[2]], removed: true });
    expect(removeCondition(list, 'fourth')).toEqual({ conditions: list, removed: false });
    expect(removeCondition(undefined, 'first')).toEqual({ conditions: [], removed: false });
    expect(list).toHaveLength(3);
  });
});
