/**
 * Pure checks of connection input, returning every problem with the input field it concerns.
 * The rules come from the tool contract page (credentials, OpenAPI size, base address).
 */
import { checkUrl, type UrlPolicy } from '../http/url-policy.js';
import { CredentialKind } from './connection.entity.js';
import { TRANSPORT_HEADER_NAMES } from './headers.js';
import { MAX_CALL_TIMEOUT_MS, MAX_DESCRIPTION_BYTES, MIN_CALL_TIMEOUT_MS } from '../limits.js';

export interface FieldProblem {
  field: string[];
  message: string;
  code: string;
}

export const MAX_KEY_LENGTH = 8192;
export const MIN_TIMEOUT_MS = MIN_CALL_TIMEOUT_MS;
export const MAX_TIMEOUT_MS = MAX_CALL_TIMEOUT_MS;

const HEADER_NAME = /^[A-Za-z0-9-]{1,128}$/;
const SLUG = /^[a-z0-9](?:[a-z0-9_]{0,62}[a-z0-9])?$/;

export function checkHeaderName(name: string, field: string[]): FieldProblem | null {
  if (!HEADER_NAME.test(name)) {
    return {
      field,
      code: 'HEADER_NAME_INVALID',
      message: 'a header name may contain only letters, digits and hyphens (1–128)',
    };
  }
  if (TRANSPORT_HEADER_NAMES.has(name.toLowerCase())) {
    return {
      field,
      code: 'HEADER_NAME_RESERVED',
      message: `"${name}" is set by the transport and cannot carry a credential`,
    };
  }
  return null;
}

export interface CredentialValue {
  kind: CredentialKind;
  key?: string | null;
  headerName?: string | null;
}

export function checkCredential(input: CredentialValue, field: string[]): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (input.kind === CredentialKind.OAUTH) {
    problems.push({
      field: [...field, 'kind'],
      code: 'CREDENTIAL_KIND_INVALID',
      message: 'OAuth is set up with beginSignIn, not here',
    });
    return problems;
  }
  if (input.kind === CredentialKind.NONE) {
    if (input.key || input.headerName) {
      problems.push({
        field: [...field, 'key'],
        code: 'CREDENTIAL_UNEXPECTED',
        message: 'kind NONE takes no key or header name',
      });
    }
    return problems;
  }
  const key = input.key ?? '';
  if (key.length === 0)
    problems.push({ field: [...field, 'key'], code: 'REQUIRED', message: 'a key is required' });
  else if (key.length > MAX_KEY_LENGTH)
    problems.push({
      field: [...field, 'key'],
      code: 'TOO_LONG',
      message: `must be at most ${MAX_KEY_LENGTH} characters`,
    });
  // eslint-disable-next-line no-control-regex
  else if (/[\u0000-\u001f\u007f]/.test(key))
    problems.push({
      field: [...field, 'key'],
      code: 'KEY_INVALID',
      message: 'must not contain control characters or line breaks',
    });
  if (input.kind === CredentialKind.HEADER) {
    const problem = checkHeaderName(input.headerName ?? '', [...field, 'headerName']);
    if (problem) problems.push(problem);
  } else if (input.headerName) {
    problems.push({
      field: [...field, 'headerName'],
      code: 'CREDENTIAL_UNEXPECTED',
      message: 'only kind HEADER takes a header name',
    });
  }
  return problems;
}

/** What may be shown of a key: its last 4 characters, only when that reveals at most half of it. */
export function last4(key: string): string | null {
  return key.length >= 8 ? key.slice(-4) : null;
}

export function checkSlug(slug: string, field: string[]): FieldProblem | null {
  if (!SLUG.test(slug)) {
    return {
      field,
      code: 'SLUG_INVALID',
      message: 'must be 1–64 lower-case letters, digits and underscores, not starting or ending with _',
    };
  }
  return null;
}

export function checkTimeout(timeoutMs: number, field: string[]): FieldProblem | null {
  if (!Number.isInteger(timeoutMs) || timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS) {
    return {
      field,
      code: 'TIMEOUT_INVALID',
      message: `must be between ${MIN_TIMEOUT_MS} and ${MAX_TIMEOUT_MS} ms`,
    };
  }
  return null;
}

export function checkSourceUrl(raw: string, policy: UrlPolicy, field: string[]): FieldProblem | null {
  const result = checkUrl(raw, policy);
  return result.ok ? null : { field, code: result.code, message: result.message };
}

export function checkBaseUrl(raw: string, policy: UrlPolicy, field: string[]): FieldProblem | null {
  const result = checkUrl(raw, policy, { httpsOnly: true });
  return result.ok ? null : { field, code: result.code, message: result.message };
}

export function checkDescriptionText(text: string, field: string[]): FieldProblem | null {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_DESCRIPTION_BYTES) {
    return {
      field,
      code: 'DESCRIPTION_TOO_LARGE',
      message: `the description is ${bytes} bytes; the limit is ${MAX_DESCRIPTION_BYTES} bytes (5 MiB)`,
    };
  }
  if (text.trim().length === 0) return { field, code: 'REQUIRED', message: 'the description is empty' };
  return null;
}
