import { describe, expect, it } from 'vitest';
import { requestLineLogger, type RequestLine } from '../../../src/http/request-log.js';
import { createLogger } from '../../../src/logger.js';

/** A logger at `level` whose lines are kept, parsed, without their time. */
function capture(level: 'info' | 'warn') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger(level, {
    write: (line: string) => {
      const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
      lines.push(rest);
      return true;
    },
  } as unknown as NodeJS.WritableStream);
  return { logger, lines };
}

/** A request line with every field filled. */
const line: RequestLine = {
  reqId: 'abc-123.def:9',
  actor: { tokenId: '019a1234-5678-7abc-8def-0123456789ab', role: 'RUNTIME', label: 'conversation runtime' },
  operation: 'CallTool',
  errors: ['BAD_USER_INPUT', 'FORBIDDEN'],
  method: 'POST',
  path: '/graphql',
  status: 400,
  ms: 1.5,
};

describe('requestLineLogger', () => {
  it('should write the request line exactly as the redacting logger writes it', () => {
    const { logger, lines } = capture('info');
    requestLineLogger(logger).info(line, 'request');
    logger.info(line, 'request');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toEqual(lines[1]);
    expect(lines[0]).toMatchObject({ msg: 'request', reqId: line.reqId, actor: line.actor, status: 400 });
  });

  it("should keep the logger's level and leave its redaction of other lines alone", () => {
    const { logger, lines } = capture('warn');
    requestLineLogger(logger).info(line, 'request');
    expect(lines).toHaveLength(0);
    logger.warn({ upstream: { authorization: 'Bearer secret-value' } }, 'other');
    expect(lines).toEqual([{ level: 40, upstream: { authorization: '[redacted]' }, msg: 'other' }]);
  });
});
