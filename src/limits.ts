/**
 * The platform's own limits, from its pages and DESIGN.md, each defined once (pure, a leaf module:
 * it imports nothing). Settings that an operator may change (environment variables) have their
 * defaults in `config.ts`, which takes them from here where the page fixes the value.
 */

/** At most this many operations (MCP tools or OpenAPI operations) per connection; DESIGN.md rule 3. */
export const MAX_OPERATIONS_PER_CONNECTION = 300;

/** The call budget: per-attempt deadline of every outbound request unless configured otherwise. */
export const CALL_TIMEOUT_MS = 10_000; // 10 seconds

/** Bytes read from any upstream response (MCP, OpenAPI, description fetch): cut while streaming. */
export const MAX_UPSTREAM_BODY_BYTES = 2 * 1024 * 1024; // 2 MiB

/** A description, fetched or pasted: the tool contract's "up to 5 MB", in UTF-8 bytes. */
export const MAX_DESCRIPTION_BYTES = 5 * 1024 * 1024; // 5 MiB

/** Header values never carry a line break or NUL (request splitting), wherever they come from. */
export const FORBIDDEN_HEADER_CHARS = /[\r\n\0]/;

/** Bounds of a connection's own per-attempt timeout (`timeoutMs` on a connection). */
export const MIN_CALL_TIMEOUT_MS = 100;
export const MAX_CALL_TIMEOUT_MS = 60_000;
