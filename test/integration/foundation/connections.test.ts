import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection } from '../../../src/connections/connection.entity.js';
import { AuditEvent } from '../../../src/audit/audit-event.entity.js';
import {
  ConnectionDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
  NodeDocument,
  UpdateConnectionDocument,
  WorkspaceConnectionsDocument,
  type CreateConnectionInput,
} from '../../generated/graphql.js';
import { Role, startTestApp, type TestApp } from '../../support/app.js';

let t: TestApp;
let admin: string;
let workspaceId: string;
const SECRET = 'sk_live_SUPERSECRET_value_0123456789';
const HEADER_SECRET = 'hdr-secret-ABCDEFGHIJKLMNOP-9876';

function rawId(globalId: string): string {
  return Buffer.from(globalId, 'base64url').toString().split(':')[1]!;
}

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  const ws = await t.ok(CreateWorkspaceDocument, { input: { name: 'Connections' } }, admin);
  workspaceId = ws.createWorkspace.workspace!.id;
});

afterAll(async () => {
  await t.stop();
});

const mcp = (over: Partial<CreateConnectionInput> = {}): CreateConnectionInput => ({
  workspaceId,
  kind: 'MCP',
  name: `Tools ${Math.random().toString(36).slice(2, 8)}`,
  endpointUrl: 'https://tools.example.com/mcp',
  ...over,
});

describe('createConnection input checks', () => {
  it.each([
    [
      'a header name with a space',
      { kind: 'HEADER', key: 'k'.repeat(10), headerName: 'X Api Key' },
      'HEADER_NAME_INVALID',
    ],
    [
      'a header name with an underscore',
      { kind: 'HEADER', key: 'k'.repeat(10), headerName: 'X_Api_Key' },
      'HEADER_NAME_INVALID',
    ],
    [
      'the transport header content-type',
      { kind: 'HEADER', key: 'k'.repeat(10), headerName: 'Content-Type' },
      'HEADER_NAME_RESERVED',
    ],
    [
      'the transport header Mcp-Session-Id',
      { kind: 'HEADER', key: 'k'.repeat(10), headerName: 'Mcp-Session-Id' },
      'HEADER_NAME_RESERVED',
    ],
    [
      'the transport header cookie',
      { kind: 'HEADER', key: 'k'.repeat(10), headerName: 'COOKIE' },
      'HEADER_NAME_RESERVED',
    ],
    ['a header name that is missing', { kind: 'HEADER', key: 'k'.repeat(10) }, 'HEADER_NAME_INVALID'],
  ] as const)('should refuse %s, naming the field', async (_label, credential, code) => {
    const result = await t.ok(CreateConnectionDocument, { input: mcp({ credential }) }, admin);
    expect(result.createConnection.connection).toBeNull();
    expect(result.createConnection.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'credential', 'headerName'], code }),
    ]);
  });

  it('should refuse a key with a line break', async () => {
    const result = await t.ok(
      CreateConnectionDocument,
      { input: mcp({ credential: { kind: 'BEARER', key: 'abc\r\nX-Evil: 1' } }) },
      admin,
    );
    expect(result.createConnection.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'credential', 'key'], code: 'KEY_INVALID' }),
    ]);
  });

  it.each([
    [
      'an http:// endpoint on a public host',
      { endpointUrl: 'http://tools.example.com/mcp' },
      ['input', 'endpointUrl'],
      'URL_REFUSED',
    ],
    ['a relative endpoint', { endpointUrl: '/mcp' }, ['input', 'endpointUrl'], 'URL_INVALID'],
    [
      'an ftp endpoint',
      { endpointUrl: 'ftp://tools.example.com/mcp' },
      ['input', 'endpointUrl'],
      'URL_INVALID',
    ],
    [
      'a URL with credentials in it',
      { endpointUrl: 'https://user:pw@tools.example.com/mcp' },
      ['input', 'endpointUrl'],
      'URL_INVALID',
    ],
    ['a missing endpoint', { endpointUrl: null }, ['input', 'endpointUrl'], 'REQUIRED'],
    ['a private address', { endpointUrl: 'https://10.1.2.3/mcp' }, ['input', 'endpointUrl'], 'URL_REFUSED'],
    [
      'the metadata address',
      { endpointUrl: 'https://169.254.169.254/latest' },
      ['input', 'endpointUrl'],
      'URL_REFUSED',
    ],
    [
      'an IPv4-mapped private address',
      { endpointUrl: 'https://[::ffff:192.168.0.1]/mcp' },
      ['input', 'endpointUrl'],
      'URL_REFUSED',
    ],
  ] as const)('should refuse %s', async (_label, over, field, code) => {
    const result = await t.ok(CreateConnectionDocument, { input: mcp(over) }, admin);
    expect(result.createConnection.userErrors).toEqual([
      expect.objectContaining({ field: [...field], code }),
    ]);
  });

  it('should accept http:// on loopback in test mode', async () => {
    const result = await t.ok(
      CreateConnectionDocument,
      { input: mcp({ endpointUrl: 'http://127.0.0.1:9/mcp' }) },
      admin,
    );
    expect(result.createConnection.userErrors).toEqual([]);
  });

  it('should refuse an http:// baseUrl even on loopback', async () => {
    const result = await t.ok(
      CreateConnectionDocument,
      {
        input: {
          workspaceId,
          kind: 'OPENAPI',
          name: 'Api',
          descriptionUrl: 'https://api.example.com/openapi.json',
          baseUrl: 'http://127.0.0.1/api',
          endpointUrl: null,
        },
      },
      admin,
    );
    expect(result.createConnection.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'baseUrl'], code: 'URL_REFUSED' }),
    ]);
  });

  it('should refuse a description text over 5 MiB with a clear error', async () => {
    const text = `{"openapi":"3.0.0","x":"${'a'.repeat(5 * 1024 * 1024)}"}`;
    const result = await t.ok(
      CreateConnectionDocument,
      { input: { workspaceId, kind: 'OPENAPI', name: 'Huge', descriptionText: text, endpointUrl: null } },
      admin,
    );
    expect(result.createConnection.connection).toBeNull();
    expect(result.createConnection.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'descriptionText'], code: 'DESCRIPTION_TOO_LARGE' }),
    ]);
    expect(result.createConnection.userErrors[0]!.message).toMatch(/5242880 bytes/);
  });

  it('should number a slug made from a name that another connection already has', async () => {
    const first = await t.ok(CreateConnectionDocument, { input: mcp({ name: 'Same Name' }) }, admin);
    expect(first.createConnection.connection?.slug).toBe('same_name');
    const second = await t.ok(CreateConnectionDocument, { input: mcp({ name: 'Same name' }) }, admin);
    expect(second.createConnection.userErrors).toEqual([]);
    expect(second.createConnection.connection?.slug).toBe('same_name_2');
    const third = await t.ok(CreateConnectionDocument, { input: mcp({ name: 'same-name!' }) }, admin);
    expect(third.createConnection.connection?.slug).toBe('same_name_3');
  });

  it('should number slugs of connections created at once, all different', async () => {
    const created = await Promise.all(
      Array.from({ length: 4 }, () =>
        t.ok(CreateConnectionDocument, { input: mcp({ name: 'Racing Name' }) }, admin),
      ),
    );
    const slugs = created.map((c) => c.createConnection.connection?.slug).sort();
    expect(slugs).toEqual(['racing_name', 'racing_name_2', 'racing_name_3', 'racing_name_4']);
  });

  it('should refuse a slug the user chose when the workspace already has it', async () => {
    await t.ok(CreateConnectionDocument, { input: mcp({ name: 'Chosen', slug: 'chosen_slug' }) }, admin);
    const second = await t.ok(
      CreateConnectionDocument,
      { input: mcp({ name: 'Other', slug: 'chosen_slug' }) },
      admin,
    );
    expect(second.createConnection.connection).toBeNull();
    expect(second.createConnection.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'slug'], code: 'SLUG_TAKEN' }),
    ]);
    expect(second.createConnection.userErrors[0]!.message).toMatch(/choose another slug/);
  });
});

describe('moving a connection', () => {
  it('should ask for the key again when a key-based connection is pointed at another host', async () => {
    const created = await t.ok(
      CreateConnectionDocument,
      { input: mcp({ name: 'Movable', credential: { kind: 'BEARER', key: SECRET } }) },
      admin,
    );
    const id = created.createConnection.connection!.id;
    const moved = await t.ok(
      UpdateConnectionDocument,
      { input: { connectionId: id, endpointUrl: 'https://evil.example.net/mcp' } },
      admin,
    );
    expect(moved.updateConnection.userErrors).toEqual([
      expect.objectContaining({ field: ['input', 'credential'], code: 'CREDENTIAL_REQUIRED' }),
    ]);
    const samePlace = await t.ok(
      UpdateConnectionDocument,
      { input: { connectionId: id, endpointUrl: 'https://tools.example.com/mcp/v2' } },
      admin,
    );
    expect(samePlace.updateConnection.userErrors).toEqual([]);
    const withKey = await t.ok(
      UpdateConnectionDocument,
      {
        input: {
          connectionId: id,
          endpointUrl: 'https://other.example.net/mcp',
          credential: { kind: 'BEARER', key: HEADER_SECRET },
        },
      },
      admin,
    );
    expect(withKey.updateConnection.userErrors).toEqual([]);
    expect(withKey.updateConnection.connection?.endpointUrl).toBe('https://other.example.net/mcp');
  });
});

describe('credentials', () => {
  it('should never return a secret in any response, and store it encrypted', async () => {
    const bodies: string[] = [];
    const capture = async <T>(p: Promise<T>): Promise<T> => {
      const v = await p;
      bodies.push(JSON.stringify(v));
      return v;
    };
    const created = await capture(
      t.gql(
        CreateConnectionDocument,
        { input: mcp({ name: 'Secret tools', credential: { kind: 'BEARER', key: SECRET } }) },
        admin,
      ),
    );
    const connection = created.data!.createConnection.connection!;
    expect(connection.credential).toEqual({ kind: 'BEARER', headerName: null, last4: '6789' });
    await capture(t.gql(ConnectionDocument, { id: connection.id }, admin));
    await capture(t.gql(NodeDocument, { id: connection.id }, admin));
    await capture(t.gql(WorkspaceConnectionsDocument, { id: workspaceId, first: 100 }, admin));
    const updated = await capture(
      t.gql(
        UpdateConnectionDocument,
        {
          input: {
            connectionId: connection.id,
            credential: { kind: 'HEADER', headerName: 'X-Api-Key', key: HEADER_SECRET },
          },
        },
        admin,
      ),
    );
    expect(updated.data!.updateConnection.connection!.credential).toEqual({
      kind: 'HEADER',
      headerName: 'X-Api-Key',
      last4: '9876',
    });
    // A bad update echoes nothing of the key either.
    await capture(
      t.gql(
        UpdateConnectionDocument,
        {
          input: {
            connectionId: connection.id,
            credential: { kind: 'HEADER', headerName: 'Host', key: SECRET },
          },
        },
        admin,
      ),
    );
    // Introspection: no field can expose it.
    await capture(t.gql('{ __type(name: "Connection") { fields { name } } }', {}, admin));
    for (const body of bodies) {
      expect(body).not.toContain(SECRET);
      expect(body).not.toContain(HEADER_SECRET);
      expect(body).not.toContain('SUPERSECRET');
      expect(body).not.toMatch(/credentialSecret/);
    }
    const em = t.app.services.orm.em.fork();
    const row = await em.findOneOrFail(Connection, { id: rawId(connection.id) });
    expect(row.credentialSecret).toMatch(/^v1\./);
    expect(row.credentialSecret).not.toContain(HEADER_SECRET);
    const raw = await em.getConnection().execute('select * from connection where id = ?', [row.id]);
    expect(JSON.stringify(raw)).not.toContain(HEADER_SECRET);
    const audits = await em.find(AuditEvent, { targetId: connection.id });
    expect(audits.map((a) => a.action)).toEqual(expect.arrayContaining(['CONNECT', 'UPDATE_CONNECTION']));
    expect(JSON.stringify(audits)).not.toContain(HEADER_SECRET);
    expect(JSON.stringify(audits)).not.toContain(SECRET);
  });
});
