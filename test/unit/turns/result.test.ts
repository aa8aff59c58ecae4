import { describe, expect, it } from 'vitest';
import { capContent, normalizeContent, fromHttpAnswer, fromMcpOutcome } from '../../../src/turns/result.js';
import { makeScrubber, NO_SECRETS } from '../../../src/connections/scrub.js';
import { CallStatus } from '../../../src/turns/turn-call.entity.js';

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

describe('scrubbing before the cut', () => {
  const key = 'sk-super-secret-0123456789';
  const scrubber = makeScrubber([key]);

  it('should redact the key from content, structured content and the message of an MCP error', () => {
    const result = fromMcpOutcome(
      'x',
      {
        kind: 'tool_error',
        content: [{ type: 'text', text: `key rejected: Bearer ${key}` }],
        structuredContent: { echoed: { authorization: `Bearer ${key}` } },
        attempts: 1,
        resends: 0,
        durationMs: 1,
      },
      65_536,
      scrubber,
    );
    expect(JSON.stringify(result)).not.toContain(key.slice(0, 8));
    expect(result.message).toBe('The tool x reported an error: key rejected: Bearer [redacted]');
    expect(result.structuredContent).toEqual({ echoed: { authorization: 'Bearer [redacted]' } });
  });

  it.each([4, 8, 13, 20])(
    'should leave no 8-character fragment when the key straddles the 300-character message cut (%i chars before it)',
    (before) => {
      const text = `${'e'.repeat(300 - before)}${key} trailing`;
      const result = fromMcpOutcome(
        'x',
        {
          kind: 'tool_error',
          content: [{ type: 'text', text }],
          structuredContent: null,
          attempts: 1,
          resends: 0,
          durationMs: 1,
        },
        65_536,
        scrubber,
      );
      for (let i = 0; i + 8 <= key.length; i++)
        expect(JSON.stringify(result)).not.toContain(key.slice(i, i + 8));
    },
  );

  it.each([3, 8, 20])(
    'should leave no 8-character fragment when an API answer is cut at the result limit (%i chars of the key before it)',
    (before) => {
      const max = 1_000;
      // capContent keeps max - 200 characters of text; put the key across that point.
      const body = `${'b'.repeat(max - 200 - before)}${key}${'c'.repeat(500)}`;
      const result = fromHttpAnswer('x', { status: 500, contentType: 'text/plain', body }, max, scrubber);
      expect(result.truncated).toBe(true);
      for (let i = 0; i + 8 <= key.length; i++)
        expect(JSON.stringify(result)).not.toContain(key.slice(i, i + 8));
    },
  );

  it('should scrub a JSON body before parsing it into structured content', () => {
    const result = fromHttpAnswer(
      'x',
      { status: 200, contentType: 'application/json', body: JSON.stringify({ token: key, ok: true }) },
      65_536,
      scrubber,
    );
    expect(result.structuredContent).toEqual({ status: 200, body: { token: '[redacted]', ok: true } });
  });

  it('should return results unchanged without secrets', () => {
    const result = fromHttpAnswer(
      'x',
      { status: 200, contentType: 'text/plain', body: key },
      65_536,
      NO_SECRETS,
    );
    expect(result.content).toEqual([{ type: 'text', text: key }]);
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
      NO_SECRETS,
    );
    expect(result).toMatchObject({ status: CallStatus.TOOL_ERROR, ok: false, attempts: 1 });
    expect(result.message).toBe(
      'The tool crm__confirm needs an answer from the user before it can finish, and the platform cannot provide that inside a conversation. Nothing more will happen for this call; tell the customer this action must be done another way.',
    );
  });
});
