/**
 * The additional authenticated data (AAD) under which OAuth secrets are sealed, pure. Each binds a
 * sealed blob to the row it belongs to: a blob copied into another row does not open there.
 */

/** The AAD that binds a sealed token to its connection. */
export function tokenAad(connectionId: string, kind: 'access' | 'refresh'): string {
  return `oauth:${connectionId}:${kind}`;
}

/** The AAD of a client secret, bound to its `OAuthClient` row. */
export function clientSecretAad(clientRowId: string): string {
  return `oauth-client:${clientRowId}:secret`;
}

/** The AAD of a PKCE verifier, bound to the sign-in's `state` hash. */
export function codeVerifierAad(stateHash: string): string {
  return `oauth-sign-in:${stateHash}:verifier`;
}
