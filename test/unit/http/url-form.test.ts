/**
 * The form of an address field, decided once (`urlForm`), as the save-time check and the
 * conversion of a description word it: each problem with its own code and message.
 */
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors.js';
import { checkUrl, urlForm } from '../../../src/http/url-policy.js';
import { normalizeBaseUrl } from '../../../src/openapi/servers.js';

const POLICY = { allowHosts: ['plain.example.com'], allowLoopback: false };

function conversionError(baseUrl: string): { code: string; message: string } {
  try {
    normalizeBaseUrl(baseUrl);
  } catch (e) {
    if (e instanceof AppError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error(`${baseUrl} was accepted`);
}

describe('urlForm', () => {
  it.each([
    ['api.example.com', 'INVALID'],
    ['ftp://api.example.com', 'SCHEME'],
    ['https://user:pw@api.example.com', 'CREDENTIALS'],
    ['https://api.example.com/#top', 'FRAGMENT'],
    ['http://plain.example.com', 'HTTP'],
  ])('should find %s of the baseUrl form %s', (text, problem) => {
    expect(urlForm(text, { httpsOnly: true })).toEqual({ ok: false, problem });
  });

  it('should take plain http where https is not required, and an https address anywhere', () => {
    expect(urlForm('http://plain.example.com').ok).toBe(true);
    expect(urlForm('https://api.example.com/v1', { httpsOnly: true }).ok).toBe(true);
  });
});

describe('the baseUrl override, at save time and at conversion alike', () => {
  it.each([
    [
      'http://plain.example.com',
      'URL_REFUSED',
      'must be an https:// address',
      'baseUrl must be an https:// address; got "http://plain.example.com".',
    ],
    [
      'https://api.example.com/#top',
      'URL_INVALID',
      'must not contain a #fragment',
      'baseUrl must not contain credentials or a fragment.',
    ],
    [
      'https://user:pw@api.example.com',
      'URL_INVALID',
      'must not contain a user name or password; use a credential',
      'baseUrl must not contain credentials or a fragment.',
    ],
  ])('should refuse %s when saved (%s) and when converted', (text, code, message, converted) => {
    expect(checkUrl(text, POLICY, { httpsOnly: true })).toEqual({ ok: false, code, message });
    expect(conversionError(text)).toEqual({ code: 'BASE_URL_INVALID', message: converted });
  });

  it('should keep an https override, without its trailing slash', () => {
    expect(checkUrl('https://api.example.com/v1/', POLICY, { httpsOnly: true }).ok).toBe(true);
    expect(normalizeBaseUrl('https://api.example.com/v1/')).toBe('https://api.example.com/v1');
  });
});
