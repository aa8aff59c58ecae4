import { describe, expect, it } from 'vitest';
import {
  capContent,
  failure,
  fromMcpOutcome,
  normalizeContent,
  scrubSecrets,
  type CallResult,
} from '../../../src/turns/result.js';
import { CallStatus } from '../../../src/turns/turn-call.entity.js';

const ok = (
  content: CallResult['content'],
  structuredContent: CallResult['structuredContent'] = null,
): CallResult => ({
  status: CallStatus.SUCCEEDED,
  ok: true,
  content,
  structuredContent,
  message: null,
  attempts: 1,
  resends: 0,
  durationMs: 1,
  truncated: false,
});

describe('normalizeContent', () => {
  it.each([
    ['a bare string', 'plain', { type: 'text', text: 'plain' }],
    ['a number', 42, { type: 'text', text: '42' }],
    ['null', null, { type: 'text', text: 'null' }],
    ['an array', [1], { type: 'text', text: '[1]' }],
    ['an object', { type: 'image', data: 'x' }, { type: 'image', data: 'x' }],
  ])('should turn %s into a content object', (_label, item, expected) => {
    expect(normalizeContent([item])).toEqual([expected]);
  });
});

describe('scrubSecrets', () => {
  const key = 'sk-super-secret-0123456789';

  it('should redact the key from content, structured content and the message', () => {
    const result = {
      ...failure(CallStatus.TOOL_ERROR, `The tool x reported an error: key rejected: Bearer ${key}`),
      content: [{ type: 'text', text: `key rejected: Bearer ${key}` }],
      structuredContent: { echoed: { authorization: `Bearer ${key}` } },
    };
    const scrubbed = scrubSecrets(result, [key]);
    expect(JSON.stringify(scrubbed)).not.toContain(key);
    expect(scrubbed.message).toBe('The tool x reported an error: key rejected: Bearer [redacted]');
    expect(scrubbed.structuredContent).toEqual({ echoed: { authorization: 'Bearer [redacted]' } });
  });

  it('should also find a secret that JSON escapes', () => {
    const odd = 'pa"ss\\word';
    const scrubbed = scrubSecrets(ok([{ type: 'text', text: `got ${odd}` }]), [odd]);
    expect(scrubbed.content).toEqual([{ type: 'text', text: 'got [redacted]' }]);
  });

  it('should return the very same result when no secret appears, and ignore very short secrets', () => {
    const result = ok([{ type: 'text', text: 'hello abc' }]);
    expect(scrubSecrets(result, ['not-there-123'])).toBe(result);
    expect(scrubSecrets(result, ['abc'])).toBe(result);
  });
});

describe('capContent', () => {
  it('should keep a small result as it is and cut a large one with a note', () => {
    const small = capContent([{ type: 'text', text: 'x' }], null, 100);
    expect(small.truncated).toBe(false);
    const big = capContent([{ type: 'text', text: 'y'.repeat(5_000) }], { a: 1 }, 1_000);
    expect(big.truncated).toBe(true);
    expect(JSON.stringify(big.content).length).toBeLessThanOrEqual(1_000 + 200);
    expect(JSON.stringify(big.content)).toMatch(/The result was cut/);
    expect(big.structuredContent).toBeNull();
  });
});

describe('fromMcpOutcome', () => {
  it('should tell the model a tool that asks for more input cannot finish here', () => {
    const result = fromMcpOutcome(
      'crm__confirm',
      {
        kind: 'input_required',
        needs: 'an answer from the user',
        message: 'x',
        attempts: 1,
        resends: 0,
        durationMs: 3,
      },
      64_000,
    );
    expect(result).toMatchObject({ status: CallStatus.TOOL_ERROR, ok: false, attempts: 1 });
    expect(result.message).toBe(
      'The tool crm__confirm needs an answer from the user before it can finish, and the platform cannot provide that inside a conversation. Nothing more will happen for this call; tell the customer this action must be done another way.',
    );
  });
});
