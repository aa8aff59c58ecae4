import {
  getNamedType,
  GraphQLError,
  isInterfaceType,
  isObjectType,
  Kind,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './relay.js';

/**
 * Query cost: every field costs 1, times the page sizes of the lists it sits in. A list field's
 * size is its `first` argument: the literal, or the largest allowed when it is a variable (the
 * value is not known at validation), or the default page size when absent. So
 * `connections(first: 50) { operations(first: 100) { id } }` costs about 50 × 100.
 */
export function costLimitRule(maxCost: number): ValidationRule {
  return (context) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const schema = context.getSchema();

    const cost = (
      set: SelectionSetNode,
      type: GraphQLNamedType | undefined,
      multiplier: number,
      seen: Set<string>,
    ): number => {
      let total = 0;
      for (const sel of set.selections) {
        if (total > maxCost) return total;
        if (sel.kind === Kind.FIELD) {
          if (sel.name.value.startsWith('__')) continue;
          const fieldDef =
            type && (isObjectType(type) || isInterfaceType(type))
              ? type.getFields()[sel.name.value]
              : undefined;
          let size = 1;
          if (fieldDef?.args.some((a) => a.name === 'first')) {
            const arg = sel.arguments?.find((a) => a.name.value === 'first');
            if (!arg) size = DEFAULT_PAGE_SIZE;
            else if (arg.value.kind === Kind.INT) size = Math.max(1, Number(arg.value.value));
            else size = MAX_PAGE_SIZE;
          }
          total += multiplier;
          if (sel.selectionSet) {
            total += cost(
              sel.selectionSet,
              fieldDef ? getNamedType(fieldDef.type) : undefined,
              multiplier * size,
              seen,
            );
          }
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          const cond = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type;
          total += cost(sel.selectionSet, cond ?? type, multiplier, seen);
        } else {
          const name = sel.name.value;
          const fragment = fragments.get(name);
          if (!fragment || seen.has(name)) continue; // cycles are reported by NoFragmentCycles
          const next = new Set(seen).add(name);
          total += cost(
            fragment.selectionSet,
            schema.getType(fragment.typeCondition.name.value) ?? type,
            multiplier,
            next,
          );
        }
      }
      return total;
    };

    return {
      OperationDefinition(node) {
        const root =
          node.operation === 'query'
            ? schema.getQueryType()
            : node.operation === 'mutation'
              ? schema.getMutationType()
              : schema.getSubscriptionType();
        const total = cost(node.selectionSet, root ?? undefined, 1, new Set());
        if (total > maxCost) {
          context.reportError(
            new GraphQLError(
              `Query cost limit of ${maxCost} exceeded, found more than ${Math.floor(total)}.`,
              {
                nodes: [node],
                extensions: { code: 'BAD_USER_INPUT' },
              },
            ),
          );
        }
      },
    };
  };
}
