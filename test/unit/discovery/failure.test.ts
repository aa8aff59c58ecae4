import { describe, expect, it } from 'vitest';
import { ConnectionStatus, CredentialKind } from '../../../src/connections/connection.entity.js';
import { describeFailure, statusAfterFailure } from '../../../src/discovery/run-failure.js';
import { AppError } from '../../../src/errors.js';
import { McpClientError } from '../../../src/mcp/client.js';
import { OAuthError } from '../../../src/oauth/errors.js';

describe('describeFailure', () => {
  it('should report a token endpoint outage as such, not as a lost sign-in', () => {
    const outage = new OAuthError(
      'TOKEN_ENDPOINT_UNAVAILABLE',
      'the token endpoint of auth.example.com did not answer',
    );
    const err = new McpClientError(
      'AUTH_REQUIRED',
      'initialize: credentials could not be obtained',
      { wwwAuthenticate: null },
      outage,
    );
    expect(describeFailure(err)).toEqual({
      code: 'TOKEN_ENDPOINT_UNAVAILABLE',
      message: 'the token endpoint of auth.example.com did not answer',
    });
  });

  it('should keep AUTH_REQUIRED when the server itself asks for a sign-in', () => {
    const err = new McpClientError('AUTH_REQUIRED', 'initialize: HTTP 401', { wwwAuthenticate: 'Bearer' });
    expect(describeFailure(err).code).toBe('AUTH_REQUIRED');
  });

  it('should pass our coded errors through and mask anything else', () => {
    expect(describeFailure(new AppError('EMPTY_TOOL_LIST', 'none'))).toEqual({
      code: 'EMPTY_TOOL_LIST',
      message: 'none',
    });
    const masked = describeFailure(new Error('relation "x" does not exist at character 15'));
    expect(masked.code).toBe('INTERNAL');
    expect(masked.message).not.toMatch(/relation/);
  });
});

describe('statusAfterFailure', () => {
  it.each([
    ['AUTH_REQUIRED', CredentialKind.NONE, ConnectionStatus.NEEDS_SIGN_IN],
    ['AUTH_REQUIRED', CredentialKind.OAUTH, ConnectionStatus.NEEDS_SIGN_IN],
    ['AUTH_REQUIRED', CredentialKind.BEARER, ConnectionStatus.FAILED],
    ['AUTH_REQUIRED', CredentialKind.HEADER, ConnectionStatus.FAILED],
    ['UPSTREAM_UNAVAILABLE', CredentialKind.NONE, ConnectionStatus.FAILED],
    ['TOKEN_ENDPOINT_UNAVAILABLE', CredentialKind.OAUTH, ConnectionStatus.FAILED],
  ])('%s with a %s credential → %s', (code, credential, status) => {
    expect(statusAfterFailure(code, credential)).toBe(status);
  });
});
