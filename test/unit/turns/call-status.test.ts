import { describe, expect, it } from 'vitest';
import { CallStatus, ERROR_STATUSES, isErrorStatus } from '../../../src/turns/call-status.js';
import { ERROR_STATUSES_SQL } from '../../../src/usage/sql.js';

describe('which call statuses are errors', () => {
  it('should count every final status but SUCCEEDED', () => {
    expect([...ERROR_STATUSES].sort()).toEqual(
      [
        'OUTCOME_UNKNOWN',
        'RATE_LIMITED',
        'REJECTED',
        'TIMEOUT',
        'TOOL_ERROR',
        'UNAVAILABLE',
        'UPSTREAM_ERROR',
      ].sort(),
    );
    expect(isErrorStatus(CallStatus.SUCCEEDED)).toBe(false);
    expect(isErrorStatus(CallStatus.RUNNING)).toBe(false);
    expect(isErrorStatus(CallStatus.TIMEOUT)).toBe(true);
  });

  it('should give usage the same list as SQL', () => {
    expect(ERROR_STATUSES_SQL).toBe(
      "('TOOL_ERROR','UPSTREAM_ERROR','TIMEOUT','REJECTED','UNAVAILABLE','RATE_LIMITED','OUTCOME_UNKNOWN')",
    );
  });
});
