import type { McpAuth, McpEndpoint } from '../mcp/client.js';
import type { Services } from '../services.js';
import { type Connection, CredentialKind } from './connection.entity.js';
import { openCredential } from './connection.service.js';

/** The credential of a key-based connection as headers for an outbound request (OpenAPI calls). */
export function credentialHeaders(services: Services, connection: Connection): Record<string, string> {
  const secret = openCredential(services, connection);
  if (secret === null) return {};
  if (connection.credentialKind === CredentialKind.HEADER && connection.credentialHeaderName) {
    return { [connection.credentialHeaderName]: secret };
  }
  if (connection.credentialKind === CredentialKind.BEARER) return { authorization: `Bearer ${secret}` };
  return {};
}

/** How the MCP client reaches a connection: address, credential, timeout, session key. */
export function mcpEndpoint(services: Services, connection: Connection): McpEndpoint {
  let auth: McpAuth = { kind: 'none' };
  const secret =
    connection.credentialKind === CredentialKind.OAUTH ? null : openCredential(services, connection);
  if (secret !== null && connection.credentialKind === CredentialKind.BEARER)
    auth = { kind: 'bearer', token: secret };
  if (
    secret !== null &&
    connection.credentialKind === CredentialKind.HEADER &&
    connection.credentialHeaderName
  ) {
    auth = { kind: 'header', name: connection.credentialHeaderName, value: secret };
  }
  const endpoint: McpEndpoint = {
    id: connection.id,
    url: connection.endpointUrl!,
    auth,
    timeoutMs: connection.timeoutMs ?? undefined,
  };
  const oauth = services.oauth;
  if (connection.credentialKind === CredentialKind.OAUTH && oauth) {
    endpoint.getAuthHeaders = () => oauth.authHeaders(connection.id);
  }
  return endpoint;
}
