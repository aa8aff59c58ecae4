import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const DB = 'postgres://svc@db:6432/app';

describe('call-path settings', () => {
  it('should take a direct LISTEN URL beside DATABASE_URL, and refuse it without one', () => {
    const config = loadConfig({ DATABASE_URL: DB, LISTEN_DATABASE_URL: 'postgres://svc@db:5432/app' });
    expect(config.listenDatabaseUrl).toBe('postgres://svc@db:5432/app');
    expect(loadConfig({ DATABASE_URL: DB }).listenDatabaseUrl).toBeNull();
    expect(() => loadConfig({ LISTEN_DATABASE_URL: 'postgres://svc@db:5432/app' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_URL: DB, LISTEN_DATABASE_URL: 'http://db' })).toThrow(
      /LISTEN_DATABASE_URL must start with postgres/,
    );
  });

  it('should space live progress events 0.2 s apart unless PROGRESS_INTERVAL_MS says otherwise', () => {
    expect(loadConfig({}).progressMinIntervalMs).toBe(200);
    expect(loadConfig({ PROGRESS_INTERVAL_MS: '0' }).progressMinIntervalMs).toBe(0);
    expect(() => loadConfig({ PROGRESS_INTERVAL_MS: '-1' })).toThrow(/PROGRESS_INTERVAL_MS/);
  });

  it("should commit a quick READ's record without waiting for the disk unless READ_RECORD_COMMIT=sync", () => {
    expect(loadConfig({}).readRecordCommit).toBe('async');
    expect(loadConfig({ READ_RECORD_COMMIT: 'sync' }).readRecordCommit).toBe('sync');
    expect(loadConfig({ READ_RECORD_COMMIT: ' SYNC ' }).readRecordCommit).toBe('sync');
    expect(loadConfig({ READ_RECORD_COMMIT: 'async' }).readRecordCommit).toBe('async');
    expect(() => loadConfig({ READ_RECORD_COMMIT: 'off' })).toThrow(
      /READ_RECORD_COMMIT must be async or sync/,
    );
  });

  it('should bound the group commit settings, with 1 turning batching off', () => {
    expect(loadConfig({}).recordBatch).toEqual({ maxBatch: 64, inFlight: 2 });
    expect(loadConfig({ RECORD_BATCH_MAX: '1' }).recordBatch.maxBatch).toBe(1);
    expect(() => loadConfig({ RECORD_BATCH_MAX: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ RECORD_BATCH_IN_FLIGHT: '9' })).toThrow(/RECORD_BATCH_IN_FLIGHT/);
  });

  it('should keep turns for good unless TURN_RETENTION_DAYS is set, and refuse a retention the ledger sweep could outrun', () => {
    expect(loadConfig({}).turnRetentionDays).toBe(0);
    expect(loadConfig({ TURN_RETENTION_DAYS: '30' }).turnRetentionDays).toBe(30);
    expect(loadConfig({ TURN_RETENTION_DAYS: '2' }).turnRetentionDays).toBe(2);
    // The sweep closes calls 10 minutes old by default; a day's margin beyond LEDGER_SWEEP_AFTER_MS.
    expect(() => loadConfig({ TURN_RETENTION_DAYS: '1' })).toThrow(/TURN_RETENTION_DAYS/);
    expect(() =>
      loadConfig({ TURN_RETENTION_DAYS: '3', LEDGER_SWEEP_AFTER_MS: String(3 * 86_400_000) }),
    ).toThrow(/TURN_RETENTION_DAYS/);
    expect(() => loadConfig({ TURN_RETENTION_DAYS: '-1' })).toThrow(ConfigError);
  });
});
