/**
 * Every string a caller gives, in literals and in variables, nested in input objects and lists,
 * refuses NUL and unpaired UTF-16 surrogates (pure). PostgreSQL cannot store NUL in text or jsonb,
 * and a lone surrogate cannot become UTF-8, so such a string would fail deep inside a resolver as
 * an INTERNAL error; here it is a BAD_USER_INPUT naming the field.
 *
 * JSON scalars are exempt: callTool's `arguments` are the model's, passed to the tool unchanged
 * (the turn path makes them storable itself).
 */
import {
  getNamedType,
  GraphQLError,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  TypeInfo,
  typeFromAST,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type ValueNode,
} from 'graphql';

/** Scalars whose values are opaque JSON, never checked here. */
export const EXEMPT_SCALARS: ReadonlySet<string> = new Set(['JSON', 'JSONObject']);

// Without the `u` flag, a regex sees UTF-16 code units, which is what a lone surrogate is.
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for
const BAD = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function isStorableString(value: string): boolean {
  return !BAD.test(value);
}

const refuse = (where: string) =>
  new GraphQLError(`${where} must not contain NUL characters or unpaired UTF-16 surrogates`, {
    extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
  });

function checkedScalar(type: GraphQLInputType): boolean {
  const named = getNamedType(type);
  return isScalarType(named) && !EXEMPT_SCALARS.has(named.name);
}

/** A variable's (JSON) value against its input type: the first bad string's place, or null. */
function badInValue(value: unknown, type: GraphQLInputType, where: string): string | null {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return badInValue(value, type.ofType, where);
  if (isListType(type)) {
    const items: unknown[] = Array.isArray(value) ? value : [value];
    for (const [i, item] of items.entries()) {
      const bad = badInValue(item, type.ofType, Array.isArray(value) ? `${where}[${i}]` : where);
      if (bad) return bad;
    }
    return null;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value)) return null;
    const fields = type.getFields();
    for (const [name, item] of Object.entries(value)) {
      const field = fields[name];
      if (!field) continue; // unknown fields are refused by coercion
      const bad = badInValue(item, field.type, `${where}.${name}`);
      if (bad) return bad;
    }
    return null;
  }
  return checkedScalar(type) && typeof value === 'string' && !isStorableString(value) ? where : null;
}

/** A literal against its input type, reading variables where it names them. */
function badInLiteral(
  node: ValueNode,
  type: GraphQLInputType,
  where: string,
  variables: Record<string, unknown>,
): string | null {
  switch (node.kind) {
    case Kind.VARIABLE:
      return badInValue(variables[node.name.value], type, where);
    case Kind.STRING:
      return checkedScalar(type) && !isStorableString(node.value) ? where : null;
    case Kind.LIST: {
      const itemType = isNonNullType(type) ? type.ofType : type;
      const inner = isListType(itemType) ? itemType.ofType : itemType;
      for (const [i, item] of node.values.entries()) {
        const bad = badInLiteral(item, inner, `${where}[${i}]`, variables);
        if (bad) return bad;
      }
      return null;
    }
    case Kind.OBJECT: {
      const named = getNamedType(type);
      if (!isInputObjectType(named)) return null; // a JSON scalar's literal, or refused by validation
      const fields = named.getFields();
      for (const field of node.fields) {
        const def = fields[field.name.value];
        if (!def) continue;
        const bad = badInLiteral(field.value, def.type, `${where}.${field.name.value}`, variables);
        if (bad) return bad;
      }
      return null;
    }
    default:
      return null;
  }
}

/** One place of a document where a caller's strings arrive: a literal, or variables it names. */
interface Check {
  node: ValueNode;
  type: GraphQLInputType;
  where: string;
  /** Argument values read the variables; a variable's default value cannot. */
  readsVariables: boolean;
  /** Closes the place's name in the message: `)` after an argument. */
  suffix: string;
}

/**
 * The checks of one document, in document order. Finding them walks the document with its types;
 * the runtime sends the same few documents again and again (Apollo hands back the same parsed
 * document for the same text), so that walk is done once per document.
 */
const plans = new WeakMap<DocumentNode, { schema: GraphQLSchema; checks: readonly Check[] }>();

function checksOf(schema: GraphQLSchema, document: DocumentNode): readonly Check[] {
  const known = plans.get(document);
  if (known?.schema === schema) return known.checks;
  const checks: Check[] = [];
  const typeInfo = new TypeInfo(schema);
  const owners: string[] = [];
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field: { enter: (node) => void owners.push(node.name.value), leave: () => void owners.pop() },
      Directive: { enter: (node) => void owners.push(`@${node.name.value}`), leave: () => void owners.pop() },
      VariableDefinition(node) {
        const type = typeFromAST(schema, node.type);
        if (node.defaultValue && type)
          checks.push({
            node: node.defaultValue,
            type: type as GraphQLInputType,
            where: `$${node.variable.name.value}`,
            readsVariables: false,
            suffix: '',
          });
        return false;
      },
      Argument(node) {
        const arg = typeInfo.getArgument();
        if (arg)
          checks.push({
            node: node.value,
            type: arg.type,
            where: `${owners.at(-1) ?? ''}(${node.name.value}`,
            readsVariables: true,
            suffix: ')',
          });
        return false;
      },
    }),
  );
  plans.set(document, { schema, checks });
  return checks;
}

/**
 * The first string in the document's arguments (and variable defaults), or in the variables they
 * use, that PostgreSQL could not store; null when there is none. Call it on a validated document.
 */
export function checkInputStrings(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | null | undefined,
): GraphQLError | null {
  const values = variables ?? {};
  for (const check of checksOf(schema, document)) {
    const bad = badInLiteral(check.node, check.type, check.where, check.readsVariables ? values : {});
    if (bad) return refuse(`${bad}${check.suffix}`);
  }
  return null;
}
