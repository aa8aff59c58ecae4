/**
 * What the OAuth callback page says, pure: the outcome of a callback (`callback.service.ts` does
 * the I/O, `callback.ts` renders the page).
 */
import type { DiscoveryOutcome } from '../discovery/discovery-run.entity.js';
import type { StateProblem } from './state.js';

/** The callback route; the redirect URI is `${publicUrl}${OAUTH_CALLBACK_PATH}`. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback';

/** The discovery that runs after a sign-in, as the page reports it. */
export interface CallbackDiscovery {
  /** A `DiscoveryOutcome`, as its string: this module stays free of the entity module at run time. */
  outcome: `${DiscoveryOutcome}`;
  added: number;
  errorCode: string | null;
  errorMessage: string | null;
}

/** What the callback page shows. Every string is plain text; the page escapes it. */
export interface CallbackOutcome {
  ok: boolean;
  /** HTTP status of the page. */
  status: number;
  title: string;
  message: string;
  connectionName: string | null;
  /** Set when a discovery ran after the sign-in. */
  discovery: CallbackDiscovery | null;
  /** Set when the callback was refused because of its `state`. */
  stateProblem: StateProblem | null;
}

/** A discovery after sign-in that threw rather than recording its own failure. */
export const DISCOVERY_INTERNAL_FAILURE: CallbackDiscovery = {
  outcome: 'FAILED',
  added: 0,
  errorCode: 'INTERNAL',
  errorMessage: 'the discovery failed because of an internal error',
};

/** A callback that changed nothing (or, with status 500, failed inside). */
export function callbackFailure(
  status: number,
  message: string,
  connectionName: string | null,
  stateProblem: StateProblem | null = null,
): CallbackOutcome {
  return {
    ok: false,
    status,
    title: 'Sign-in failed',
    message,
    connectionName,
    discovery: null,
    stateProblem,
  };
}

/** A completed sign-in, and what the discovery after it found (null: none ran). */
export function signedIn(connectionName: string, discovery: CallbackDiscovery | null): CallbackOutcome {
  const message =
    discovery === null
      ? 'Signed in. The tools of this connection will be read at the next discovery.'
      : discovery.outcome === 'SUCCEEDED'
        ? `Signed in. Discovery succeeded: ${discovery.added} new ${discovery.added === 1 ? 'tool' : 'tools'}.`
        : `Signed in, but the discovery failed (${discovery.errorCode ?? 'unknown'}: ${discovery.errorMessage ?? 'no detail'}).`;
  return {
    ok: true,
    status: 200,
    title: 'Signed in',
    message,
    connectionName,
    discovery,
    stateProblem: null,
  };
}
