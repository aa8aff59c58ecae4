import { describe, expect, it } from 'vitest';
import {
  isRiskRaise,
  ON_BY_DEFAULT_RISK,
  riskFromAnnotations,
  riskFromMethod,
  startsOn,
} from '../../../src/operations/risk.js';
import { type JsonObject, type Risk } from '../../../src/operations/types.js';

describe('riskFromAnnotations', () => {
  it.each<[string, JsonObject | null | undefined, Risk]>([
    ['no annotations', null, 'WRITE'],
    ['undefined annotations', undefined, 'WRITE'],
    ['empty annotations', {}, 'WRITE'],
    ['readOnlyHint true', { readOnlyHint: true }, 'READ'],
    ['readOnlyHint true, destructiveHint false', { readOnlyHint: true, destructiveHint: false }, 'READ'],
    ['readOnlyHint true, destructiveHint true', { readOnlyHint: true, destructiveHint: true }, 'WRITE'],
    ['readOnlyHint true, destructiveHint null', { readOnlyHint: true, destructiveHint: null }, 'READ'],
    ['readOnlyHint true, destructiveHint "true"', { readOnlyHint: true, destructiveHint: 'true' }, 'READ'],
    ['readOnlyHint false', { readOnlyHint: false }, 'WRITE'],
    ['readOnlyHint "true" (a string)', { readOnlyHint: 'true' }, 'WRITE'],
    ['readOnlyHint 1', { readOnlyHint: 1 }, 'WRITE'],
    ['only destructiveHint false', { destructiveHint: false }, 'WRITE'],
    ['only idempotentHint', { idempotentHint: true }, 'WRITE'],
    ['readOnlyHint with a title', { title: 'List', readOnlyHint: true }, 'READ'],
  ])('should give %s → %s', (_label, annotations, expected) => {
    expect(riskFromAnnotations(annotations)).toBe(expected);
  });
});

describe('riskFromMethod', () => {
  it.each<[string, Risk]>([
    ['GET', 'READ'],
    ['HEAD', 'READ'],
    ['get', 'READ'],
    ['head', 'READ'],
    ['POST', 'WRITE'],
    ['PUT', 'WRITE'],
    ['PATCH', 'WRITE'],
    ['DELETE', 'WRITE'],
    ['OPTIONS', 'WRITE'],
    ['delete', 'WRITE'],
    ['', 'WRITE'],
  ])('should give %j → %s', (method, expected) => {
    expect(riskFromMethod(method)).toBe(expected);
  });
});

describe('isRiskRaise', () => {
  it.each<[Risk, Risk, boolean]>([
    ['READ', 'WRITE', true],
    ['READ', 'READ', false],
    ['WRITE', 'WRITE', false],
    ['WRITE', 'READ', false],
  ])('should say %s → %s is a raise: %s', (before, after, expected) => {
    expect(isRiskRaise(before, after)).toBe(expected);
  });
});

describe('startsOn', () => {
  it('should start only READ operations on', () => {
    expect(startsOn('READ')).toBe(true);
    expect(startsOn('WRITE')).toBe(false);
    expect(ON_BY_DEFAULT_RISK).toBe('READ');
  });
});
