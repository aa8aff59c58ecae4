/**
 * How we authenticate to an authorization server as an OAuth client, pure: the operator's client
 * values checked, a dynamic registration's answer read and its method settled, and the
 * oauth4webapi `ClientAuth` for a stored client.
 */
import * as oauth from 'oauth4webapi';
import type { SecretBox } from '../connections/secrets.js';
import { OAuthError, OAuthErrorCode } from './errors.js';
import type { TokenEndpointAuthMethod } from './metadata.js';
import type { OAuthClient } from './oauth-client.entity.js';
import { clientSecretAad } from './sealing.js';

type Registration = Awaited<ReturnType<typeof oauth.processDynamicClientRegistrationResponse>>;

/**
 * A dynamic registration answer, read tolerantly: a 200/201 with a `client_id` is a registration,
 * even when it leaves out fields RFC 7591 asks for (seen: no `client_secret_expires_at` next to a
 * secret, which oauth4webapi refuses). Anything else goes through oauth4webapi, which turns the
 * server's OAuth error into a ResponseBodyError.
 */
export async function readRegistration(res: Response): Promise<Registration> {
  if (res.status !== 200 && res.status !== 201) return oauth.processDynamicClientRegistrationResponse(res);
  const body: unknown = await res.json().catch(() => null);
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  if (typeof fields.client_id !== 'string' || fields.client_id === '') {
    throw new OAuthError(OAuthErrorCode.REGISTRATION_FAILED, 'the registration answer has no client_id');
  }
  return fields as Registration;
}

/**
 * The method a registered client authenticates with: none without a secret; with one, what the
 * server granted if we can use it, else what we asked for (`client_secret_basic` if we asked for
 * none but were given a secret anyway).
 */
export function registeredAuthMethod(
  secret: string | null,
  granted: unknown,
  requested: TokenEndpointAuthMethod,
): TokenEndpointAuthMethod {
  if (secret === null) return 'none';
  if (granted === 'client_secret_basic' || granted === 'client_secret_post') return granted;
  return requested === 'none' ? 'client_secret_basic' : requested;
}

/** The application/x-www-form-urlencoded form of one value (the WHATWG serializer). */
export function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/**
 * `client_secret_basic` (RFC 6749 §2.3.1): id and secret form-urlencoded, then Base64. The WHATWG
 * serializer leaves `-`, `.`, `_` and `*` as they are; oauth4webapi's own encoder escapes them too,
 * which is allowed but which servers that do not decode the header (seen: the MCP conformance
 * suite's, with the id `pre-registered-client`) refuse.
 */
function clientSecretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const pair = `${formEncode(client.client_id)}:${formEncode(secret)}`;
    headers.set('authorization', `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`);
  };
}

/** The oauth4webapi client authentication for a stored method and its secret (opened). */
function clientAuthFor(method: string, secret: string | null): oauth.ClientAuth {
  if (method === 'client_secret_basic' && secret !== null) return clientSecretBasic(secret);
  if (method === 'client_secret_post' && secret !== null) return oauth.ClientSecretPost(secret);
  return oauth.None();
}

/** A value an operator typed as a client id or secret: printable, no spaces around, bounded. */
function checkClientValue(value: string, max: number): boolean {
  return value.length > 0 && value.length <= max && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value);
}

export interface ClientInput {
  clientId?: string | null;
  clientSecret?: string | null;
}

/**
 * The operator's client id and secret, empty strings read as absent, checked. Throws `OAuthError`
 * CLIENT_INVALID naming the field to fix.
 */
export function operatorClient(input: ClientInput): { clientId: string | null; clientSecret: string | null } {
  const clientId = input.clientId == null || input.clientId === '' ? null : input.clientId;
  const clientSecret = input.clientSecret == null || input.clientSecret === '' ? null : input.clientSecret;
  if (clientId !== null && !checkClientValue(clientId, 512)) {
    throw new OAuthError(OAuthErrorCode.CLIENT_INVALID, 'the client id must be 1–512 printable characters', {
      field: ['input', 'clientId'],
    });
  }
  if (clientSecret !== null && clientId === null) {
    throw new OAuthError(OAuthErrorCode.CLIENT_INVALID, 'a client secret needs its client id', {
      field: ['input', 'clientId'],
    });
  }
  if (clientSecret !== null && !checkClientValue(clientSecret, 2048)) {
    throw new OAuthError(
      OAuthErrorCode.CLIENT_INVALID,
      'the client secret must be 1–2048 printable characters',
      { field: ['input', 'clientSecret'] },
    );
  }
  return { clientId, clientSecret };
}

/** A stored client as oauth4webapi takes it, with its secret opened. */
export function storedClient(
  row: Pick<OAuthClient, 'id' | 'clientId' | 'authMethod' | 'clientSecret'>,
  secrets: Pick<SecretBox, 'open'>,
): { client: oauth.Client; auth: oauth.ClientAuth } {
  const secret = row.clientSecret === null ? null : secrets.open(row.clientSecret, clientSecretAad(row.id));
  return {
    client: { client_id: row.clientId, token_endpoint_auth_method: row.authMethod },
    auth: clientAuthFor(row.authMethod, secret),
  };
}
