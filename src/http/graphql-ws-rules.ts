/**
 * The rules of GraphQL over WebSocket, pure: which token a socket offers, how a document is
 * validated there (as over HTTP), and the quota's refusal.
 */
import {
  GraphQLError,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import { bearerToken } from '../auth/tokens.js';
import type { QuotaRefusal, SubscriptionQuota } from '../graphql/subscription-quota.js';

/**
 * The API token a socket offers: `connection_init`'s `authorization` (or `Authorization`, or
 * `token`), else the upgrade's `Authorization` header; `Bearer ` is optional. Null when none is a
 * string.
 */
export function connectionToken(
  params: Readonly<Record<string, unknown>> | undefined,
  header: string | undefined,
): string | null {
  const raw = params?.authorization ?? params?.Authorization ?? params?.token ?? header;
  return typeof raw === 'string' ? (bearerToken(raw) ?? raw) : null;
}

/**
 * Apollo's validationRules do not reach graphql-ws: the same limits, applied here. Coded as Apollo
 * codes them over HTTP, so that the mask shows them rather than INTERNAL.
 */
export function validateForSocket(
  schema: GraphQLSchema,
  document: DocumentNode,
  rules: readonly ValidationRule[],
): GraphQLError[] {
  return validate(schema, document, [...specifiedRules, ...rules]).map((e) =>
    e.extensions.code
      ? e
      : new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }),
  );
}

export function tooManySubscriptions(refused: QuotaRefusal, quota: SubscriptionQuota<object>): GraphQLError {
  const message =
    refused === 'PER_SOCKET'
      ? `this socket already has ${quota.perSocket} subscriptions open; complete one first`
      : `this API token already has ${quota.perToken} subscriptions open; complete one first`;
  return new GraphQLError(message, { extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } });
}
