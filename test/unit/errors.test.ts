import { describe, expect, it } from 'vitest';
import { AppError, isAppError } from '../../src/errors.js';

describe('AppError', () => {
  it('should keep its code and cause', () => {
    const cause = new Error('inner');
    const err = new AppError('SOME_CODE', 'outer', { cause });
    expect(err.code).toBe('SOME_CODE');
    expect(err.cause).toBe(cause);
    expect(isAppError(err)).toBe(true);
    expect(isAppError(cause)).toBe(false);
  });
});
