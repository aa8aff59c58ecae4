/**
 * The customer's gate under races (issue 11, finding 8): ten identical calls at once change the gate
 * once and write one audit row; the others answer `changed: false`. Both directions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SetConnectedToolsDocument } from '../../generated/graphql.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { rawId } from '../../support/ids.js';
import { startSdkServer, type SdkServerHandle } from '../../support/mcp-servers.js';
import { CRM_TOOLS, buildWorld, type World } from '../../support/turns.js';

let t: TestApp;
let peer: SdkServerHandle;
let w: World;

beforeAll(async () => {
  t = await startTestApp();
  peer = await startSdkServer({ stateful: false, json: true, tools: CRM_TOOLS });
  w = await buildWorld(t, peer.url);
});

afterAll(async () => {
  await t?.stop();
  await peer?.close();
});

async function auditRows(action: string): Promise<number> {
  const rows = await t.app.services.orm.em
    .getConnection()
    .execute<{ n: number }[]>(
      `select count(*)::int as n from audit_event where action = ? and workspace_id = ?`,
      [action, rawId(w.workspaceId)],
    );
  return rows[0]!.n;
}

async function gateTenTimes(enabled: boolean): Promise<boolean[]> {
  const results = await Promise.all(
    Array.from({ length: 10 }, () =>
      t.ok(
        SetConnectedToolsDocument,
        { input: { assistantId: w.assistantId, connectionId: w.connectionId, enabled } },
        w.customer,
      ),
    ),
  );
  for (const r of results) expect(r.setConnectedTools.userErrors).toEqual([]);
  return results.map((r) => r.setConnectedTools.changed);
}

describe("the customer's gate, ten identical calls at once", () => {
  it('should change the gate once and write one audit row, on and then off', async () => {
    for (let round = 1; round <= 3; round++) {
      const on = await gateTenTimes(true);
      expect(on.filter(Boolean)).toHaveLength(1);
      expect(await auditRows('CONNECT_TOOLS')).toBe(round);
      const off = await gateTenTimes(false);
      expect(off.filter(Boolean)).toHaveLength(1);
      expect(await auditRows('DISCONNECT_TOOLS')).toBe(round);
    }
    const links = await t.app.services.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int as n from assistant_connection where assistant_id = ?`,
        [rawId(w.assistantId)],
      );
    expect(links[0]!.n).toBe(0);
  });
});
