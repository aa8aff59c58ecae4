import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { OutboundError } from '../../../src/http/outbound.js';
import { escapeHtml, renderCallbackPage } from '../../../src/oauth/callback.js';
import { safeOAuthCode } from '../../../src/oauth/errors.js';
import { classifyTokenFailure } from '../../../src/oauth/token-failure.js';

describe('renderCallbackPage', () => {
  it('should escape every text it shows', () => {
    const html = renderCallbackPage({
      ok: false,
      title: 'Sign-in failed',
      message: 'The server said <script>alert("x")</script> & left',
      connectionName: `Tools "R" <b>Us</b>'`,
    });
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; left');
    expect(html).toContain('Sign-in failed: Tools &quot;R&quot; &lt;b&gt;Us&lt;/b&gt;&#39;');
    expect(html).toContain('class="failed"');
  });

  it('should mark a success as such', () => {
    const html = renderCallbackPage({ ok: true, title: 'Signed in', message: 'ok', connectionName: null });
    expect(html).toContain('<h1 class="ok">Signed in</h1>');
  });

  it('should escape the five HTML-special characters', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
  });
});

describe('safeOAuthCode', () => {
  it('should keep printable ASCII up to 64 characters', () => {
    expect(safeOAuthCode('invalid_grant')).toBe('invalid_grant');
    expect(safeOAuthCode('bad\r\ncode <x>')).toBe('badcode<x>');
    expect(safeOAuthCode('x'.repeat(100))).toHaveLength(64);
    expect(safeOAuthCode(42)).toBe('unknown_error');
    expect(safeOAuthCode('\n')).toBe('unknown_error');
  });
});

describe('classifyTokenFailure', () => {
  const response = (status: number) =>
    new Response('{}', { status, headers: { 'content-type': 'application/json' } });

  it('should take an OAuth error answer as the end of the sign-in, without its body', () => {
    const err = new oauth.ResponseBodyError('server responded with an error in the response body', {
      cause: { error: 'invalid_grant', error_description: 'refresh token REFRESH-SECRET revoked' },
      response: response(400),
    });
    const failure = classifyTokenFailure(err);
    expect(failure).toEqual({
      permanent: true,
      code: 'invalid_grant',
      message: 'the authorization server answered HTTP 400 (invalid_grant)',
    });
    expect(JSON.stringify(failure)).not.toContain('REFRESH-SECRET');
  });

  it('should take a 5xx error answer as transient', () => {
    const err = new oauth.ResponseBodyError('x', {
      cause: { error: 'temporarily_unavailable' },
      response: response(503),
    });
    expect(classifyTokenFailure(err).permanent).toBe(false);
  });

  it('should take a transport failure as transient, with its host-only message', () => {
    const err = new OutboundError('CONNECT_FAILED', 'could not connect to auth.example.com (ECONNREFUSED)', {
      reachedServer: false,
    });
    expect(classifyTokenFailure(err)).toEqual({
      permanent: false,
      code: 'CONNECT_FAILED',
      message: 'could not connect to auth.example.com (ECONNREFUSED)',
    });
  });

  it('should take anything else as transient and say nothing of it', () => {
    expect(classifyTokenFailure(new Error('access_token=SECRET'))).toEqual({
      permanent: false,
      code: 'invalid_response',
      message: 'the authorization server gave an answer we could not use',
    });
  });
});
