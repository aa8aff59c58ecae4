import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { GraphQLError, type ValidationContext, type ValidationRule } from 'graphql';
import {
  DEFAULT_GRAPHQL_MAX_ALIASES as DEFAULT_MAX_ALIASES,
  DEFAULT_GRAPHQL_MAX_COST as DEFAULT_MAX_COST,
  DEFAULT_GRAPHQL_MAX_DEPTH as DEFAULT_MAX_DEPTH,
} from '../config.js';
import { costLimitRule } from './cost.js';

/**
 * Query limits. They are validation rules, so HTTP (Apollo) and WebSocket (graphql-ws) share them;
 * the defaults (and their variables) live in config.ts.
 */

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
