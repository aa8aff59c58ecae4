/**
 * Bounds on a GraphQL document that hold before any validation rule runs (pure).
 *
 * graphql-js's validation is not linear in every shape: OverlappingFieldsCanBeMerged compares the
 * fields of one response name pairwise, so 16,000 repeated `label` fields kept the process busy for
 * more than a minute. Bounding the document's size, its lexical tokens (checked by the parser as it
 * goes, so a huge document is abandoned early) and its field selections keeps every rule's work
 * small. HTTP and graphql-ws both call parseBounded; Apollo's own parse gets the same maxTokens.
 */
import { GraphQLError, Kind, parse, type ASTNode, type DocumentNode } from 'graphql';

export interface DocumentLimits {
  /** Bytes of the document text (UTF-8). */
  maxDocumentBytes: number;
  /** Lexical tokens: punctuators, names, values. */
  maxTokens: number;
  /** Field selections as written (a fragment's fields count once, however often it is spread). */
  maxFields: number;
}

const refuse = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

/** Field nodes in the document, stopping as soon as the count passes `max`. */
export function countFields(document: DocumentNode, max = Infinity): number {
  let count = 0;
  const stack: ASTNode[] = [...document.definitions];
  while (stack.length > 0 && count <= max) {
    const node = stack.pop()!;
    if (node.kind === Kind.FIELD) count += 1;
    if ('selectionSet' in node && node.selectionSet) stack.push(...node.selectionSet.selections);
  }
  return count;
}

/** The document, or the one error saying which bound it exceeds. */
export function parseBounded(source: string, limits: DocumentLimits): DocumentNode | GraphQLError {
  // A UTF-8 byte count is at most three per UTF-16 unit: skip the exact count when clearly under.
  if (source.length * 3 > limits.maxDocumentBytes) {
    const bytes = Buffer.byteLength(source, 'utf8');
    if (bytes > limits.maxDocumentBytes) {
      return refuse(`the document is ${bytes} bytes; the limit is ${limits.maxDocumentBytes}`);
    }
  }
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens: limits.maxTokens });
  } catch (err) {
    if (err instanceof GraphQLError) {
      // graphql 16 says "more that N tokens"; match either spelling.
      if (/more tha[nt] \d+ tokens/.test(err.message)) {
        return refuse(
          `the document has more than ${limits.maxTokens} tokens; the limit is ${limits.maxTokens}`,
        );
      }
      return new GraphQLError(err.message, {
        source: err.source,
        positions: err.positions,
        extensions: { code: 'GRAPHQL_PARSE_FAILED' },
      });
    }
    throw err;
  }
  const fields = countFields(document, limits.maxFields);
  if (fields > limits.maxFields) {
    return refuse(
      `the document has more than ${limits.maxFields} field selections; the limit is ${limits.maxFields}`,
    );
  }
  return document;
}

/** Documents remembered by {@link BoundedDocuments}, and the longest text remembered. */
export const BOUNDED_DOCUMENTS_MAX_ENTRIES = 256;
export const BOUNDED_DOCUMENTS_MAX_CHARS = 4096;

/**
 * {@link parseBounded}, remembering the documents that passed: the runtime sends the same few
 * documents on every call, and parsing them again was a visible share of a call's CPU. Only short
 * texts are kept, the oldest dropped first, so a caller sending ever new documents gains nothing
 * and holds at most 256 × 4,096 characters (and their syntax trees). A refused text is never kept:
 * it is refused again, the same way, each time.
 */
export class BoundedDocuments {
  readonly #documents = new Map<string, DocumentNode>();

  constructor(
    private readonly limits: DocumentLimits,
    private readonly maxEntries = BOUNDED_DOCUMENTS_MAX_ENTRIES,
  ) {}

  get size(): number {
    return this.#documents.size;
  }

  parse(source: string): DocumentNode | GraphQLError {
    const known = this.#documents.get(source);
    if (known) return known;
    const document = parseBounded(source, this.limits);
    if (document instanceof GraphQLError || source.length > BOUNDED_DOCUMENTS_MAX_CHARS) return document;
    if (this.#documents.size >= this.maxEntries) this.#documents.delete(this.#documents.keys().next().value!);
    this.#documents.set(source, document);
    return document;
  }
}
