import { costLimitRule } from '@escape.tech/graphql-armor-cost-limit';
import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import type { ValidationRule } from 'graphql';

/** Query limits. They are validation rules, so HTTP (Apollo) and WebSocket (graphql-ws) share them. */
export const DEFAULT_MAX_DEPTH = 12;
export const DEFAULT_MAX_ALIASES = 15;
export const DEFAULT_MAX_COST = 10_000;

export function limitRules(
  { maxDepth = DEFAULT_MAX_DEPTH, maxAliases = DEFAULT_MAX_ALIASES, maxCost = DEFAULT_MAX_COST } = {},
): ValidationRule[] {
  return [
    maxDepthRule({ n: maxDepth, ignoreIntrospection: true, flattenFragments: true }),
    maxAliasesRule({ n: maxAliases }),
    costLimitRule({ maxCost, ignoreIntrospection: true }),
  ] as unknown as ValidationRule[];
}
