import { describe, expect, it } from 'vitest';
import {
  failureOfOutboundCode,
  mayRetry,
  type FailureKind,
  type RetryDecision,
  type RetryQuestion,
} from '../../../src/operations/retry.js';
import type { Risk } from '../../../src/operations/types.js';

const retry = (reason: string): RetryDecision =>
  ({ retry: true, counts: 'attempt', reason }) as RetryDecision;
const resend: RetryDecision = { retry: true, counts: 'resend', reason: 'REFUSED_BEFORE_ACTING' };
const stop = (reason: string): RetryDecision => ({ retry: false, reason }) as RetryDecision;

describe('mayRetry', () => {
  // failure, attempts, resends, reachedServer, risk, idempotent → decision
  it.each<[FailureKind, number, number, boolean, Risk, boolean, RetryDecision]>([
    // A timeout or broken connection: repeat only what is safe to repeat.
    ['timeout', 1, 0, true, 'READ', false, retry('SAFE_TO_REPEAT')],
    ['timeout', 1, 0, true, 'WRITE', true, retry('SAFE_TO_REPEAT')],
    ['timeout', 1, 0, true, 'WRITE', false, stop('MAY_HAVE_ACTED')],
    ['timeout', 2, 0, true, 'READ', false, stop('LIMIT_REACHED')],
    ['timeout', 1, 1, true, 'READ', false, retry('SAFE_TO_REPEAT')],
    ['connection_broken', 1, 0, true, 'READ', false, retry('SAFE_TO_REPEAT')],
    ['connection_broken', 1, 0, true, 'WRITE', true, retry('SAFE_TO_REPEAT')],
    ['connection_broken', 1, 0, true, 'WRITE', false, stop('MAY_HAVE_ACTED')],
    ['connection_broken', 2, 0, true, 'WRITE', true, stop('LIMIT_REACHED')],
    // Never reached the server: any operation, once.
    ['connect_failed', 1, 0, false, 'WRITE', false, retry('NEVER_REACHED')],
    ['connect_failed', 1, 0, false, 'READ', false, retry('NEVER_REACHED')],
    ['connect_failed', 2, 0, false, 'WRITE', false, stop('LIMIT_REACHED')],
    ['connection_broken', 1, 0, false, 'WRITE', false, retry('NEVER_REACHED')],
    // A connect failure is never "maybe reached", but the rule reads the flag, not the kind.
    ['connect_failed', 1, 0, true, 'WRITE', false, stop('MAY_HAVE_ACTED')],
    // Refused before acting (session wanted or expired, legacy server): one re-send, any risk.
    ['refused_before_acting', 1, 0, true, 'WRITE', false, resend],
    ['refused_before_acting', 2, 0, true, 'WRITE', false, resend],
    ['refused_before_acting', 1, 1, true, 'READ', false, stop('LIMIT_REACHED')],
    // The OAuth token rejected (401) before acting: one send with a renewed token, any risk.
    [
      'credential_rejected',
      1,
      0,
      true,
      'WRITE',
      false,
      { retry: true, counts: 'renewal', reason: 'CREDENTIAL_RENEWED' },
    ],
    [
      'credential_rejected',
      1,
      1,
      true,
      'WRITE',
      false,
      { retry: true, counts: 'renewal', reason: 'CREDENTIAL_RENEWED' },
    ],
    // Never again.
    ['cancelled', 1, 0, true, 'READ', true, stop('CANCELLED')],
    ['cancelled', 1, 0, false, 'READ', true, stop('CANCELLED')],
    ['refused', 1, 0, false, 'READ', true, stop('NOT_TRANSIENT')],
    ['answered', 1, 0, true, 'READ', true, stop('NOT_TRANSIENT')],
  ])(
    '%s after %i attempt(s), %i re-send(s), reached %s, %s, idempotent %s',
    (failure, attempts, resends, reachedServer, risk, idempotent, expected) => {
      expect(mayRetry({ failure, attempts, resends, reachedServer, risk, idempotent })).toEqual(expected);
    },
  );

  const kinds: FailureKind[] = [
    'timeout',
    'connect_failed',
    'connection_broken',
    'cancelled',
    'refused',
    'answered',
    'refused_before_acting',
    'credential_rejected',
  ];
  const every: RetryQuestion[] = kinds.flatMap((failure) =>
    [1, 2].flatMap((attempts) =>
      [0, 1].flatMap((resends) =>
        [true, false].flatMap((reachedServer) =>
          (['READ', 'WRITE'] as const).flatMap((risk) =>
            [true, false].map((idempotent) => ({
              failure,
              attempts,
              resends,
              reachedServer,
              risk,
              idempotent,
            })),
          ),
        ),
      ),
    ),
  );

  it('should never repeat a WRITE that may have reached the server as a new attempt', () => {
    for (const q of every.filter((q) => q.risk === 'WRITE' && !q.idempotent && q.reachedServer)) {
      const d = mayRetry(q);
      expect(d.retry && d.counts === 'attempt', JSON.stringify(q)).toBe(false);
    }
  });

  it('should send with a renewed token at most once per call', () => {
    expect(
      mayRetry({
        failure: 'credential_rejected',
        attempts: 1,
        resends: 0,
        renewals: 1,
        reachedServer: true,
        risk: 'READ',
        idempotent: true,
      }),
    ).toEqual(stop('LIMIT_REACHED'));
  });

  it('should allow at most one retry and one re-send per call', () => {
    for (const q of every) {
      const d = mayRetry(q);
      if (q.attempts >= 2) expect(d.retry && d.counts === 'attempt', JSON.stringify(q)).toBe(false);
      if (q.resends >= 1) expect(d.retry && d.counts === 'resend', JSON.stringify(q)).toBe(false);
    }
  });
});

describe('failureOfOutboundCode', () => {
  it.each<[string, FailureKind]>([
    ['TIMEOUT', 'timeout'],
    ['CONNECT_FAILED', 'connect_failed'],
    ['TRANSPORT_ERROR', 'connection_broken'],
    ['ABORTED', 'cancelled'],
    ['BODY_TOO_LARGE', 'answered'],
    ['HTTP_STATUS', 'answered'],
    ['INVALID_JSON', 'answered'],
    ['URL_REFUSED', 'refused'],
    ['ADDRESS_REFUSED', 'refused'],
    ['HEADER_INVALID', 'refused'],
    ['REDIRECT_REFUSED', 'refused'],
    ['SOMETHING_NEW', 'refused'],
  ])('%s is %s', (code, kind) => {
    expect(failureOfOutboundCode(code)).toBe(kind);
  });
});
