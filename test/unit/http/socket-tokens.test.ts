import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  SocketTokens,
  TOKEN_INVALID_CLOSE_CODE,
  TOKEN_INVALID_CLOSE_REASON,
} from '../../../src/http/socket-tokens.js';

function socket() {
  return { close: vi.fn<(code: number, reason: string) => void>() };
}

/** Tokens valid until put in `invalid`; `broken` ones make the check reject. */
function registry(invalid = new Set<string>(), broken = new Set<string>()) {
  const checked: string[] = [];
  const tokens = new SocketTokens((token) => {
    checked.push(token);
    return broken.has(token)
      ? Promise.reject(new Error('database down'))
      : Promise.resolve(!invalid.has(token));
  });
  return { tokens, invalid, broken, checked };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('SocketTokens', () => {
  it('should close, on a recheck, exactly the sockets whose token is no longer valid', async () => {
    const { tokens, invalid } = registry();
    const [a, b, c] = [socket(), socket(), socket()];
    tokens.add(a, 'tok-a', 'id-a');
    tokens.add(b, 'tok-b', 'id-b');
    tokens.add(c, 'tok-a', 'id-a');
    invalid.add('tok-a');
    await tokens.recheck();
    expect(a.close).toHaveBeenCalledWith(TOKEN_INVALID_CLOSE_CODE, TOKEN_INVALID_CLOSE_REASON);
    expect(c.close).toHaveBeenCalledOnce();
    expect(b.close).not.toHaveBeenCalled();
  });

  it('should check a closed socket no more, and close each socket once', async () => {
    const { tokens, invalid, checked } = registry();
    const [a, b] = [socket(), socket()];
    tokens.add(a, 'tok-a', 'id-a');
    tokens.add(b, 'tok-b', 'id-b');
    tokens.delete(b);
    invalid.add('tok-a');
    await tokens.recheck();
    await tokens.recheck();
    expect(checked).toEqual(['tok-a']);
    expect(a.close).toHaveBeenCalledOnce();
  });

  it('should keep a socket whose check failed (the database, not the token)', async () => {
    const { tokens, broken } = registry();
    const a = socket();
    tokens.add(a, 'tok-a', 'id-a');
    broken.add('tok-a');
    await expect(tokens.recheck()).resolves.toBeUndefined();
    expect(a.close).not.toHaveBeenCalled();
  });

  it('should close the sockets of a revoked token id at once, and only those', () => {
    const { tokens, checked } = registry();
    const [a, b] = [socket(), socket()];
    tokens.add(a, 'tok-a', 'id-a');
    tokens.add(b, 'tok-b', 'id-b');
    tokens.revoked('id-a');
    expect(a.close).toHaveBeenCalledWith(TOKEN_INVALID_CLOSE_CODE, TOKEN_INVALID_CLOSE_REASON);
    expect(b.close).not.toHaveBeenCalled();
    expect(checked).toEqual([]);
  });

  it('should recheck every interval, and not after it is stopped', async () => {
    vi.useFakeTimers();
    const { tokens, invalid, checked } = registry();
    const a = socket();
    tokens.add(a, 'tok-a', 'id-a');
    const stop = tokens.recheckEvery(15_000);
    invalid.add('tok-a');
    await vi.advanceTimersByTimeAsync(14_999);
    expect(a.close).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(a.close).toHaveBeenCalledWith(TOKEN_INVALID_CLOSE_CODE, TOKEN_INVALID_CLOSE_REASON);

    const b = socket();
    tokens.add(b, 'tok-b', 'id-b');
    stop();
    invalid.add('tok-b');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(b.close).not.toHaveBeenCalled();
    expect(checked).toEqual(['tok-a']);
  });
});
