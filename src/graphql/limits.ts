import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';
import { costLimitRule } from './cost.js';

/** Query limits. They are validation rules, so HTTP (Apollo) and WebSocket (graphql-ws) share them. */
export const DEFAULT_MAX_DEPTH = 12;
export const DEFAULT_MAX_ALIASES = 15;
/** Fields × page sizes: two nested full pages (100 × 100) of a dozen fields fit, three do not. */
export const DEFAULT_MAX_COST = 250_000;

/**
 * graphql-armor throws by default, which servers treat as an internal failure. Report the
 * rejection as an ordinary validation error instead, with the limit in the message.
 */
const reportInstead = {
  exposeLimits: true,
  propagateOnRejection: false,
  onReject: [
    (ctx: ValidationContext | null, err: GraphQLError) => {
      ctx?.reportError(
        new GraphQLError(err.message.replace(/^Syntax Error: /, ''), {
          extensions: { code: 'BAD_USER_INPUT' },
        }),
      );
    },
  ],
};

export function limitRules({
  maxDepth = DEFAULT_MAX_DEPTH,
  maxAliases = DEFAULT_MAX_ALIASES,
  maxCost = DEFAULT_MAX_COST,
} = {}): ValidationRule[] {
  return [
    maxDepthRule({
      n: maxDepth,
      ignoreIntrospection: true,
      flattenFragments: true,
      ...reportInstead,
    }),
    maxAliasesRule({ n: maxAliases, ...reportInstead }),
    costLimitRule(maxCost),
  ];
}
