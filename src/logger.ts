import { pino, type Logger } from 'pino';
import type { LogLevel } from './config.js';
import { serializeError } from './log-errors.js';

/** Field paths that may hold secrets; pino replaces their values before anything is written. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.authorization',
  '*.token',
  '*.key',
  '*.secret',
  '*.password',
  '*.accessToken',
  '*.refreshToken',
  '*.clientSecret',
  'credential',
];

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // Database errors carry their statement's values: logged as class, codes and shape only.
      serializers: { err: serializeError },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination as pino.DestinationStream | undefined,
  );
}

export type { Logger };
