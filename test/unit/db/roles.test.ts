import { describe, expect, it } from 'vitest';
import {
  ensureRoleStatements,
  quoteIdent,
  quoteLiteral,
  roleWarning,
  serviceGrantStatements,
} from '../../../src/db/roles.js';

describe('quoting', () => {
  it('should double quotes inside identifiers and literals, and refuse NUL and empty names', () => {
    expect(quoteIdent('svc')).toBe('"svc"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
    expect(quoteLiteral("it's")).toBe("'it''s'");
    expect(() => quoteIdent('')).toThrow(TypeError);
    expect(() => quoteIdent('a\u0000b')).toThrow(TypeError);
    expect(() => quoteLiteral('a\u0000b')).toThrow(TypeError);
  });
});

describe('serviceGrantStatements', () => {
  it('should grant DML on every table, then take UPDATE, DELETE and TRUNCATE back from the append-only ones', () => {
    const sql = serviceGrantStatements('svc', ['ledger_outcome', 'ledger_entry', 'ledger_entry']);
    const revokeAll = sql.findIndex((s) => s.startsWith('revoke all on all tables'));
    const grant = sql.findIndex((s) => s.startsWith('grant select, insert, update, delete on all tables'));
    const revokeLedger = sql.findIndex((s) => s.includes('"ledger_entry", "ledger_outcome"'));
    expect(revokeAll).toBeGreaterThanOrEqual(0);
    expect(grant).toBeGreaterThan(revokeAll);
    expect(revokeLedger).toBeGreaterThan(grant);
    expect(sql[revokeLedger]).toBe(
      'revoke update, delete, truncate, references, trigger on "ledger_entry", "ledger_outcome" from "svc", public',
    );
    expect(sql).toContain('revoke insert, update, delete on "mikro_orm_migrations" from "svc"');
    expect(sql).toContain('grant usage, select on all sequences in schema public to "svc"');
    expect(sql.some((s) => s.startsWith('grant update on sequence'))).toBe(false);
  });

  it('should let the service move only the sequences named writable, after taking every sequence back', () => {
    const sql = serviceGrantStatements('svc', [], ['turn_event_watch_until', 'turn_event_watch_until']);
    const revoke = sql.indexOf('revoke all on all sequences in schema public from "svc"');
    const update = sql.indexOf('grant update on sequence "turn_event_watch_until" to "svc"');
    expect(revoke).toBeGreaterThanOrEqual(0);
    expect(update).toBeGreaterThan(revoke);
  });

  it('should quote a hostile role name', () => {
    const sql = serviceGrantStatements('x"; drop table ledger_entry; --', []);
    for (const s of sql) expect(s).toContain('"x""; drop table ledger_entry; --"');
  });
});

describe('ensureRoleStatements', () => {
  it('should create or alter a bare login role with its password quoted', () => {
    expect(ensureRoleStatements('svc', "p'w", false)).toBe(
      `create role "svc" login nosuperuser nocreatedb nocreaterole noinherit noreplication nobypassrls password 'p''w'`,
    );
    expect(ensureRoleStatements('svc', 'pw', true)).toMatch(/^alter role "svc" login nosuperuser /);
  });
});

describe('roleWarning', () => {
  const fine = { role: 'svc', superuser: false, ownsLedger: false, canRewriteLedger: false };
  it('should say nothing for a role that can only insert and read the ledger', () => {
    expect(roleWarning(fine)).toBeNull();
  });
  it('should name each problem and point at the two-role setup', () => {
    expect(roleWarning({ ...fine, superuser: true, ownsLedger: true })).toMatch(
      /as a superuser and the ledger tables' owner \(role "svc"\).*MIGRATION_DATABASE_URL/,
    );
    expect(roleWarning({ ...fine, canRewriteLedger: true })).toContain(
      'a role with UPDATE, DELETE or TRUNCATE on the ledger',
    );
  });
});
