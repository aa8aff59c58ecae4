/**
 * Why a request to an authorization server failed, pure: the server's refusal (the sign-in is
 * over) apart from a transport problem (try again later), with a message safe to show.
 */
import * as oauth from 'oauth4webapi';
import { isOutboundError } from '../http/outbound.js';
import { safeOAuthCode } from './errors.js';

/** Why a token request failed, with a message safe to show. */
export interface TokenFailure {
  /** The authorization server refused: the sign-in is over. Otherwise a transport problem. */
  permanent: boolean;
  code: string;
  message: string;
}

/**
 * Classifies an error of an oauth4webapi token request. OAuth error bodies (`invalid_grant`…) and
 * client-authentication challenges are the server's answer; transport failures and 5xx are not.
 * The original error is never kept: its `cause` may hold the response body.
 */
export function classifyTokenFailure(err: unknown): TokenFailure {
  if (err instanceof oauth.ResponseBodyError) {
    const code = safeOAuthCode(err.error);
    return {
      permanent: err.status < 500,
      code,
      message: `the authorization server answered HTTP ${err.status} (${code})`,
    };
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    return {
      permanent: true,
      code: 'invalid_client',
      message: `the authorization server refused our client (HTTP ${err.status})`,
    };
  }
  if (isOutboundError(err)) {
    return { permanent: false, code: err.code, message: err.message };
  }
  if (err instanceof oauth.OperationProcessingError && err.cause instanceof Response) {
    const status = err.cause.status;
    return {
      permanent: status >= 400 && status < 500,
      code: `http_${status}`,
      message: `the authorization server answered HTTP ${status}`,
    };
  }
  return {
    permanent: false,
    code: 'invalid_response',
    message: 'the authorization server gave an answer we could not use',
  };
}
