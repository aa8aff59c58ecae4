import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { readRegistration } from '../../../src/oauth/client-auth.js';

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('readRegistration', () => {
  it('should accept a registration with a secret but no client_secret_expires_at (seen in the MCP conformance suite)', async () => {
    const reg = await readRegistration(
      json(201, { client_id: 'abc', client_secret: 's3cret', redirect_uris: ['http://x/cb'] }),
    );
    expect(reg.client_id).toBe('abc');
    expect(reg.client_secret).toBe('s3cret');
  });

  it('should accept a 200 answer too', async () => {
    expect((await readRegistration(json(200, { client_id: 'abc' }))).client_id).toBe('abc');
  });

  it('should refuse an answer without a client_id', async () => {
    await expect(readRegistration(json(201, { client_secret: 'x' }))).rejects.toMatchObject({
      code: 'REGISTRATION_FAILED',
    });
    await expect(readRegistration(new Response('not json', { status: 201 }))).rejects.toMatchObject({
      code: 'REGISTRATION_FAILED',
    });
  });

  it("should turn the server's OAuth error into a ResponseBodyError", async () => {
    const err = await readRegistration(
      json(400, { error: 'invalid_redirect_uri', error_description: 'no' }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(oauth.ResponseBodyError);
    expect((err as oauth.ResponseBodyError).error).toBe('invalid_redirect_uri');
  });
});
