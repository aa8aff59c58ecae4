/**
 * What the compiler's modules share (pure: no I/O): the codes a tool is left out with, the
 * exception that leaves it out from deep in a schema, one compilation's running totals, and the
 * result of compiling one node.
 */
import type { JsonObject } from '../../../operations/types.js';
import type { Shape } from '../shape.js';
import type { Profile } from './profiles.js';

/** Why a tool cannot be declared in a dialect. */
export type LeftOutCode =
  'SCHEMA_TOO_LARGE' | 'UNSUPPORTED_SCHEMA' | 'IRREVERSIBLE' | 'RULE_VIOLATION' | 'TOOL_LIMIT';

/** Thrown deep in the compiler to leave the tool out; {@link compileSchema} catches it. */
export class LeaveOut extends Error {
  constructor(
    readonly code: LeftOutCode,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** One compilation: the dialect's profile and the running totals its caps count. */
export interface Ctx {
  profile: Profile;
  properties: number;
  enumValues: number;
  chars: number;
}

/** One compiled node. */
export interface Out {
  schema: JsonObject;
  shape: Shape | null;
  /** The compiled node allows any value (so an anyOf holding it allows any value too). */
  permissive: boolean;
}
