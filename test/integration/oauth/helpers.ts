/**
 * Shared steps of the OAuth integration tests: an app whose log lines are kept (to prove that no
 * secret reaches them), connections to a peer, and the whole sign-in as the operator does it.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { randomBytes } from 'node:crypto';
import type { App } from '../../../src/app.js';
import { Role } from '../../../src/auth/api-token.entity.js';
import { OAuthCredential } from '../../../src/oauth/oauth-credential.entity.js';
import { tokenAad } from '../../../src/oauth/sealing.js';
import {
  BeginSignInDocument,
  CreateConnectionDocument,
  CreateWorkspaceDocument,
} from '../../generated/graphql.js';
import { startTestApp, type GraphQLResult } from '../../support/app.js';
import type { OAuthPeer } from '../../support/oauth-server.js';

/** The public address the app believes it has; the tests deliver the browser's callback themselves. */
export const PUBLIC_URL = 'https://console.example.test';
export const REDIRECT_URI = `${PUBLIC_URL}/oauth/callback`;

export interface LoggedApp {
  app: App;
  /** The app's own origin, where `/oauth/callback` really listens. */
  origin: string;
  /** Every log line the app wrote, at debug level. */
  logs: string[];
  token(role: Role, label?: string, workspaceId?: string): Promise<string>;
  gql<T, V>(
    doc: TypedDocumentNode<T, V>,
    variables: V,
    token: string,
  ): Promise<GraphQLResult<T> & { raw: string }>;
  ok<T, V>(doc: TypedDocumentNode<T, V>, variables: V, token: string): Promise<T>;
  stop(): Promise<void>;
}

export async function startLoggedApp(): Promise<LoggedApp> {
  const t = await startTestApp({ captureLogs: true, env: { PUBLIC_URL } });
  const gql = async <T, V>(doc: TypedDocumentNode<T, V>, variables: V, token: string) => {
    const res = await fetch(t.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: print(doc), variables }),
    });
    const raw = await res.text();
    return { ...(JSON.parse(raw) as GraphQLResult<T>), raw };
  };
  return {
    app: t.app,
    origin: new URL(t.url).origin,
    logs: t.logs,
    token: (role, label, workspaceId) =>
      t.token(role, workspaceId ?? null, label ?? `oauth ${role.toLowerCase()}`),
    gql,
    ok: async (doc, variables, token) => {
      const result = await gql(doc, variables, token);
      if (result.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(result.errors)}`);
      return result.data!;
    },
    stop: () => t.stop(),
  };
}

export async function createWorkspace(t: LoggedApp, admin: string): Promise<string> {
  const ws = await t.ok(
    CreateWorkspaceDocument,
    { input: { name: `OAuth ${randomBytes(3).toString('hex')}` } },
    admin,
  );
  return ws.createWorkspace.workspace!.id;
}

/** Creates an MCP connection to the peer (its first discovery meets the 401). Returns the global id and the uuid. */
export async function createMcpConnection(
  t: LoggedApp,
  token: string,
  workspaceId: string,
  endpointUrl: string,
): Promise<{ id: string; uuid: string; status: string; discoveryErrorCode: string | null }> {
  const result = await t.ok(
    CreateConnectionDocument,
    {
      input: {
        workspaceId,
        kind: 'MCP',
        name: `Signed tools ${randomBytes(3).toString('hex')}`,
        endpointUrl,
      },
    },
    token,
  );
  const c = result.createConnection.connection!;
  return {
    id: c.id,
    uuid: Buffer.from(c.id, 'base64url').toString('utf8').split(':')[1]!,
    status: c.status,
    discoveryErrorCode: result.createConnection.discoveryRun?.errorCode ?? null,
  };
}

/** The callback address the browser would open, moved to where the app really listens. */
export function callbackOnApp(t: LoggedApp, redirect: URL): string {
  return `${t.origin}${redirect.pathname}${redirect.search}`;
}

/** beginSignIn → the provider's login and consent → our callback. Returns the page. */
export async function signIn(
  t: LoggedApp,
  peer: OAuthPeer,
  connectionId: string,
  token: string,
): Promise<{ status: number; html: string; authorizationUrl: string; redirect: URL }> {
  const begun = await t.ok(BeginSignInDocument, { input: { connectionId } }, token);
  const authorizationUrl = begun.beginSignIn.authorizationUrl;
  if (!authorizationUrl)
    throw new Error(`beginSignIn failed: ${JSON.stringify(begun.beginSignIn.userErrors)}`);
  const redirect = await peer.authorize(authorizationUrl, REDIRECT_URI);
  const res = await fetch(callbackOnApp(t, redirect));
  return { status: res.status, html: await res.text(), authorizationUrl, redirect };
}

/** The stored credential row and its tokens in clear (tests only). */
export async function storedTokens(
  t: LoggedApp,
  connectionUuid: string,
): Promise<{ row: OAuthCredential; accessToken: string | null; refreshToken: string | null }> {
  const row = await t.app.services.orm.em
    .fork()
    .findOneOrFail(OAuthCredential, { connection: connectionUuid });
  const { secrets } = t.app.services;
  return {
    row,
    accessToken:
      row.accessToken === null ? null : secrets.open(row.accessToken, tokenAad(connectionUuid, 'access')),
    refreshToken:
      row.refreshToken === null ? null : secrets.open(row.refreshToken, tokenAad(connectionUuid, 'refresh')),
  };
}

export { Role };
