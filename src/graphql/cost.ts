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

/** Test seam: called once each time a fragment's own cost is computed (not on memo hits). */
export interface CostRuleOptions {
  onFragmentCost?: (name: string) => void;
}

/**
 * Query cost: every selection costs 1 (`__typename` too), times the page sizes of the lists it
 * sits in. A list field's size is its `first` argument: the literal, or the largest allowed when
 * it is a variable (the value is not known at validation), or the default page size when absent.
 * So `connections(first: 50) { operations(first: 100) { id } }` costs about 50 × 100.
 *
 * Cost is linear in the multiplier, so each fragment's cost is computed once, at multiplier 1,
 * and every spread reuses it: the rule's own work is linear in the document, however the
 * fragments spread one another.
 */
export function costLimitRule(maxCost: number, options: CostRuleOptions = {}): ValidationRule {
  return (context) => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) {
      if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
    }
    const schema = context.getSchema();
    const fragmentCost = new Map<string, number>();
    const inProgress = new Set<string>();

    const ofFragment = (name: string, type: GraphQLNamedType | undefined): number => {
      const known = fragmentCost.get(name);
      if (known !== undefined) return known;
      const fragment = fragments.get(name);
      // Unknown fragments and cycles are reported by their own rules.
      if (!fragment || inProgress.has(name)) return 0;
      inProgress.add(name);
      options.onFragmentCost?.(name);
      const value = cost(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? type);
      inProgress.delete(name);
      fragmentCost.set(name, value);
      return value;
    };

    /** The cost of a selection set at multiplier 1; capped just over maxCost (no need to count on). */
    const cost = (set: SelectionSetNode, type: GraphQLNamedType | undefined): number => {
      let total = 0;
      for (const sel of set.selections) {
        if (total > maxCost) return total;
        if (sel.kind === Kind.FIELD) {
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
          total += 1;
          if (sel.selectionSet) {
            total += size * cost(sel.selectionSet, fieldDef ? getNamedType(fieldDef.type) : undefined);
          }
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          const cond = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : type;
          total += cost(sel.selectionSet, cond ?? type);
        } else {
          total += ofFragment(sel.name.value, type);
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
        const total = cost(node.selectionSet, root ?? undefined);
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
