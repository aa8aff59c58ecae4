import { describe, expect, it } from 'vitest';
import { authorizationUrl } from '../../../src/oauth/authorization-request.js';
import {
  callbackFailure,
  DISCOVERY_INTERNAL_FAILURE,
  signedIn,
} from '../../../src/oauth/callback-outcome.js';

describe('signedIn', () => {
  it('should say that the tools will be read later when no discovery ran', () => {
    expect(signedIn('Linear', null)).toEqual({
      ok: true,
      status: 200,
      title: 'Signed in',
      message: 'Signed in. The tools of this connection will be read at the next discovery.',
      connectionName: 'Linear',
      discovery: null,
      stateProblem: null,
    });
  });

  it('should count the new tools of a discovery that succeeded, in the singular for one', () => {
    const run = { outcome: 'SUCCEEDED', added: 1, errorCode: null, errorMessage: null } as const;
    expect(signedIn('x', run).message).toBe('Signed in. Discovery succeeded: 1 new tool.');
    expect(signedIn('x', { ...run, added: 3 }).message).toBe('Signed in. Discovery succeeded: 3 new tools.');
    expect(signedIn('x', run).discovery).toBe(run);
  });

  it('should name the code and message of a discovery that failed', () => {
    expect(signedIn('x', DISCOVERY_INTERNAL_FAILURE)).toMatchObject({
      ok: true,
      message:
        'Signed in, but the discovery failed (INTERNAL: the discovery failed because of an internal error).',
    });
    const bare = { outcome: 'FAILED', added: 0, errorCode: null, errorMessage: null } as const;
    expect(signedIn('x', bare).message).toBe('Signed in, but the discovery failed (unknown: no detail).');
  });
});

describe('callbackFailure', () => {
  it('should be a failed outcome with no discovery', () => {
    expect(callbackFailure(400, 'no', null, 'USED')).toEqual({
      ok: false,
      status: 400,
      title: 'Sign-in failed',
      message: 'no',
      connectionName: null,
      discovery: null,
      stateProblem: 'USED',
    });
    expect(callbackFailure(502, 'bad', 'Linear').stateProblem).toBeNull();
  });
});

describe('authorizationUrl', () => {
  const request = {
    endpoint: 'https://as.example/authorize?tenant=a',
    clientId: 'client 1',
    redirectUri: 'https://svc.example/oauth/callback',
    state: 'st',
    codeChallenge: 'ch',
    resource: 'https://mcp.example/mcp',
    scope: 'read write',
  };

  it('should ask for a code with PKCE S256, the resource and the scopes, keeping the endpoint query', () => {
    const url = new URL(authorizationUrl(request));
    expect(url.origin + url.pathname).toBe('https://as.example/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: 'a',
      response_type: 'code',
      client_id: 'client 1',
      redirect_uri: 'https://svc.example/oauth/callback',
      state: 'st',
      code_challenge: 'ch',
      code_challenge_method: 'S256',
      resource: 'https://mcp.example/mcp',
      scope: 'read write',
    });
  });

  it("should leave out scope for the server's default", () => {
    expect(new URL(authorizationUrl({ ...request, scope: null })).searchParams.has('scope')).toBe(false);
  });
});
