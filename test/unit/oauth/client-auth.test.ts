import { randomBytes } from 'node:crypto';
import type * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../../src/connections/secrets.js';
import {
  formEncode,
  operatorClient,
  registeredAuthMethod,
  storedClient,
} from '../../../src/oauth/client-auth.js';
import { clientSecretAad, codeVerifierAad, tokenAad } from '../../../src/oauth/sealing.js';

describe('operatorClient', () => {
  it('should read empty strings and nulls as no client', () => {
    expect(operatorClient({})).toEqual({ clientId: null, clientSecret: null });
    expect(operatorClient({ clientId: '', clientSecret: null })).toEqual({
      clientId: null,
      clientSecret: null,
    });
  });

  it('should accept a printable id and secret', () => {
    expect(operatorClient({ clientId: 'pre-registered client', clientSecret: 's3cr3t' })).toEqual({
      clientId: 'pre-registered client',
      clientSecret: 's3cr3t',
    });
  });

  it.each([
    ['an id with a space around it', { clientId: ' abc' }, ['input', 'clientId']],
    ['an id with a control character', { clientId: 'a\nb' }, ['input', 'clientId']],
    ['an id over 512 characters', { clientId: 'a'.repeat(513) }, ['input', 'clientId']],
    ['a secret without an id', { clientSecret: 'x' }, ['input', 'clientId']],
    [
      'a secret over 2048 characters',
      { clientId: 'a', clientSecret: 's'.repeat(2049) },
      ['input', 'clientSecret'],
    ],
    ['a secret ending in a space', { clientId: 'a', clientSecret: 's ' }, ['input', 'clientSecret']],
  ])('should refuse %s, naming the field', (_name, input, field) => {
    expect(() => operatorClient(input)).toThrow(expect.objectContaining({ code: 'CLIENT_INVALID', field }));
  });

  it('should accept the longest values', () => {
    expect(
      operatorClient({ clientId: 'a'.repeat(512), clientSecret: 's'.repeat(2048) }).clientId,
    ).toHaveLength(512);
  });
});

describe('registeredAuthMethod', () => {
  it.each([
    [
      'no secret is a public client, whatever was granted',
      null,
      'client_secret_post',
      'client_secret_basic',
      'none',
    ],
    ['a granted basic is kept', 's', 'client_secret_basic', 'client_secret_post', 'client_secret_basic'],
    ['a granted post is kept', 's', 'client_secret_post', 'client_secret_basic', 'client_secret_post'],
    [
      'a method we cannot use falls back to what we asked',
      's',
      'private_key_jwt',
      'client_secret_post',
      'client_secret_post',
    ],
    [
      'nothing granted falls back to what we asked',
      's',
      undefined,
      'client_secret_basic',
      'client_secret_basic',
    ],
    [
      'a secret given to a client that asked for none is sent as basic',
      's',
      undefined,
      'none',
      'client_secret_basic',
    ],
  ] as const)('%s', (_name, secret, granted, requested, method) => {
    expect(registeredAuthMethod(secret, granted, requested)).toBe(method);
  });
});

describe('storedClient', () => {
  const box = new SecretBox(randomBytes(32));
  const server = { issuer: 'https://as.example' } as oauth.AuthorizationServer;

  function headersOf(row: Parameters<typeof storedClient>[0]): { headers: Headers; body: URLSearchParams } {
    const { client, auth } = storedClient(row, box);
    const headers = new Headers();
    const body = new URLSearchParams();
    void auth(server, client, body, headers);
    return { headers, body };
  }

  it('should send client_secret_basic with the WHATWG form encoding (no escaping of - . _ *)', () => {
    const row = {
      id: 'row-1',
      clientId: 'pre-registered-client',
      authMethod: 'client_secret_basic' as const,
      clientSecret: '',
    };
    row.clientSecret = box.seal('a b:c*', clientSecretAad('row-1'));
    const { headers, body } = headersOf(row);
    const pair = Buffer.from(headers.get('authorization')!.replace(/^Basic /, ''), 'base64').toString('utf8');
    expect(pair).toBe('pre-registered-client:a+b%3Ac*');
    expect(body.has('client_secret')).toBe(false);
  });

  it('should send client_secret_post in the body', () => {
    const row = { id: 'row-2', clientId: 'c', authMethod: 'client_secret_post' as const, clientSecret: '' };
    row.clientSecret = box.seal('s3cret', clientSecretAad('row-2'));
    const { headers, body } = headersOf(row);
    expect(body.get('client_id')).toBe('c');
    expect(body.get('client_secret')).toBe('s3cret');
    expect(headers.has('authorization')).toBe(false);
  });

  it('should send no secret for a public client', () => {
    const { headers, body } = headersOf({
      id: 'row-3',
      clientId: 'c',
      authMethod: 'none',
      clientSecret: null,
    });
    expect(body.get('client_id')).toBe('c');
    expect(body.has('client_secret')).toBe(false);
    expect(headers.has('authorization')).toBe(false);
  });

  it('should not open a secret sealed for another client row', () => {
    const row = {
      id: 'row-4',
      clientId: 'c',
      authMethod: 'client_secret_basic' as const,
      clientSecret: box.seal('s', clientSecretAad('row-5')),
    };
    expect(() => storedClient(row, box)).toThrow();
  });
});

describe('formEncode and the AADs', () => {
  it('should encode as application/x-www-form-urlencoded does', () => {
    expect(formEncode('a b&c=d/é-._*~')).toBe('a+b%26c%3Dd%2F%C3%A9-._*%7E');
  });

  it('should bind each sealed secret to its own row and kind', () => {
    const aads = [
      tokenAad('c1', 'access'),
      tokenAad('c1', 'refresh'),
      tokenAad('c2', 'access'),
      clientSecretAad('c1'),
      codeVerifierAad('c1'),
    ];
    expect(new Set(aads).size).toBe(aads.length);
  });
});
