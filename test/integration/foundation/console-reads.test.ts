/**
 * What a console needs from the API's reads: nullable root lookups (one NOT_FOUND does not erase
 * the rest of the answer), nodes(ids), and the first admin token kept apart from DATA_DIR when the
 * database is not the embedded one.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role } from '../../../src/auth/api-token.entity.js';
import { toGlobalId } from '../../../src/graphql/node.js';
import { CreateAssistantDocument, CreateWorkspaceDocument } from '../../generated/graphql.js';
import { createEmptyDatabase, startTestApp, type TestApp } from '../../support/app.js';
import { tempDirForTest } from '../../support/temp.js';

let t: TestApp;
let admin: string;
let workspaceId: string;
let otherWorkspaceId: string;
let assistantId: string;
let customer: string;

beforeAll(async () => {
  t = await startTestApp();
  admin = await t.token(Role.ADMIN);
  workspaceId = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Reads' } }, admin)).createWorkspace
    .workspace!.id;
  otherWorkspaceId = (await t.ok(CreateWorkspaceDocument, { input: { name: 'Other' } }, admin))
    .createWorkspace.workspace!.id;
  assistantId = (await t.ok(CreateAssistantDocument, { input: { workspaceId, name: 'Ada' } }, admin))
    .createAssistant.assistant!.id;
  const raw = Buffer.from(workspaceId, 'base64url').toString('utf8').split(':')[1]!;
  customer = await t.token(Role.CUSTOMER, raw);
});

afterAll(async () => {
  await t.stop();
});

const MISSING = toGlobalId('Workspace', '00000000-0000-7000-8000-000000000000');

describe('nullable root lookups', () => {
  it('should answer the rest of a query when one lookup is NOT_FOUND', async () => {
    const res = await t.gql(
      `query($id: ID!, $a: ID!) { viewer { role } workspace(id: $id) { name } assistant(id: $a) { name } }`,
      { id: MISSING, a: assistantId },
      admin,
    );
    expect(res.data).toEqual({ viewer: { role: 'ADMIN' }, workspace: null, assistant: { name: 'Ada' } });
    expect(res.errors).toEqual([
      expect.objectContaining({ path: ['workspace'], extensions: { code: 'NOT_FOUND' } }),
    ]);
  });

  it.each(['connection', 'operation', 'turn', 'assistant', 'workspace'])(
    'should give null and NOT_FOUND for %s of a malformed ID, keeping viewer',
    async (field) => {
      const res = await t.gql(`{ viewer { role } ${field}(id: "nope") { id } }`, {}, admin);
      expect(res.data).toEqual({ viewer: { role: 'ADMIN' }, [field]: null });
      expect(res.errors?.[0]).toMatchObject({ path: [field], extensions: { code: 'NOT_FOUND' } });
    },
  );
});

describe('nodes(ids)', () => {
  it('should answer in the order asked, with null and an indexed NOT_FOUND for what is missing', async () => {
    const res = await t.gql<{ nodes: unknown[] }, unknown>(
      `query($ids: [ID!]!) { nodes(ids: $ids) { id __typename ... on Workspace { name } } }`,
      { ids: [assistantId, MISSING, workspaceId, 'garbage'] },
      admin,
    );
    expect(res.data?.nodes).toEqual([
      { id: assistantId, __typename: 'Assistant' },
      null,
      { id: workspaceId, __typename: 'Workspace', name: 'Reads' },
      null,
    ]);
    expect(res.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([
      [['nodes', 1], 'NOT_FOUND'],
      [['nodes', 3], 'NOT_FOUND'],
    ]);
  });

  it("should hide another workspace's objects from a customer exactly as missing ones", async () => {
    const res = await t.gql<{ nodes: unknown[] }, unknown>(
      `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
      { ids: [workspaceId, otherWorkspaceId] },
      customer,
    );
    expect(res.data?.nodes).toEqual([{ id: workspaceId }, null]);
    expect(res.errors?.map((e) => [e.path, e.extensions?.code, e.message])).toEqual([
      [['nodes', 1], 'NOT_FOUND', 'node not found'],
    ]);
  });

  it('should refuse more than 100 IDs', async () => {
    const res = await t.gql(
      `query($ids: [ID!]!) { nodes(ids: $ids) { id } }`,
      { ids: Array(101).fill(MISSING) },
      admin,
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('the first admin token', () => {
  it("should not overwrite the embedded database's admin-token file on a start with DATABASE_URL", async () => {
    const dataDir = await tempDirForTest('ct-admin-file-');
    const file = join(dataDir, 'admin-token');
    await writeFile(file, 'ctk_embedded-one\n');
    const fresh = await startTestApp({
      databaseUrl: await createEmptyDatabase(),
      bootstrapAdmin: true,
      env: { DATA_DIR: dataDir },
    });
    try {
      const minted = fresh.app.firstAdminToken;
      expect(minted).toMatch(/^ctk_/);
      expect(await readFile(file, 'utf8')).toBe('ctk_embedded-one\n');
      const viewer = await fresh.ok('{ viewer { role label } }', {}, minted);
      expect(viewer).toEqual({ viewer: { role: 'ADMIN', label: 'first admin' } });
    } finally {
      await fresh.stop();
    }
  });
});
