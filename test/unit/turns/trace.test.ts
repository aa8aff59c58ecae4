import { describe, expect, it } from 'vitest';
import { parseTraceContext, TRACESTATE_MAX_CHARS } from '../../../src/turns/trace.js';

const good = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('W3C trace context from the runtime request', () => {
  it.each([
    ['a valid version-00 traceparent', good, { traceparent: good }],
    ['surrounding spaces trimmed', `  ${good} `, { traceparent: good }],
    [
      'a later version with an extra field',
      `01-${good.slice(3)}-what`,
      { traceparent: `01-${good.slice(3)}-what` },
    ],
  ])('should keep %s', (_name, header, expected) => {
    expect(parseTraceContext(header, undefined)).toEqual(expected);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['uppercase hex', good.toUpperCase()],
    ['version ff', `ff-${good.slice(3)}`],
    ['version 00 with an extra field', `${good}-x`],
    ['an all-zero trace id', '00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
    ['an all-zero parent id', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
    ['a short trace id', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01'],
    ['a NUL byte', `${good.slice(0, 10)}\u0000${good.slice(11)}`],
    ['a CR LF injection', `${good}\r\nx-evil: 1`],
    ['sent twice', [good, good]],
  ])('should ignore %s', (_name, header) => {
    expect(parseTraceContext(header, 'a=b')).toBeNull();
  });

  it('should keep a printable tracestate and drop one that is too long or not printable', () => {
    expect(parseTraceContext(good, 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE')).toEqual({
      traceparent: good,
      tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    });
    expect(parseTraceContext(good, 'a'.repeat(TRACESTATE_MAX_CHARS + 1))).toEqual({ traceparent: good });
    expect(parseTraceContext(good, 'a=b\u0000')).toEqual({ traceparent: good });
    expect(parseTraceContext(good, ['a=b', 'c=d'])).toEqual({ traceparent: good });
  });
});
