/**
 * The turn API's inputs and payloads (type-graphql, issue 30): what `TurnResolver` takes and returns.
 */
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { Assistant } from '../assistants/assistant.entity.js';
import { UserError } from '../graphql/user-error.js';
import type { JsonObject } from '../operations/types.js';
import { CallStatus } from './turn-call.entity.js';
import { ToolSearchInputType, ToolSearchType } from './search/tool-search.graphql.js';
import { ToolDialectEnum, type ToolDialect } from './dialects/dialect-enum.js';
import { MAX_NAME_CHARS } from '../names.js';
import type { LeftOutCode } from './dialects/compile.js';
import type { JsonValue } from '../operations/types.js';

/** The GraphQL shape of a built-in or connection tool as declared to the model. */
@ObjectType('DeclaredTool')
export class DeclaredToolType {
  @Field(() => String, {
    description: 'Matches ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$ (every model API takes it); unique in the turn.',
  })
  name!: string;

  @Field(() => String)
  description!: string;

  @Field(() => GraphQLJSONObject, { description: 'The canonical input schema (the same in every dialect).' })
  inputSchema!: JsonObject;

  @Field(() => GraphQLJSONObject, {
    description:
      "The tool exactly as the turn's dialect's request takes it: append it unchanged to that API's tools " +
      '(docs/declaring-tools.md). GENERIC: { name, description, inputSchema }.',
  })
  declaration!: JsonObject;
}

@ObjectType('LeftOutTool', {
  description: "A tool that passes both gates but could not be declared in the turn's dialect, and why.",
})
export class LeftOutToolType {
  @Field(() => String, { description: 'The name it would have been declared under.' })
  name!: string;

  @Field(() => String, { nullable: true, description: 'Null for built-ins and finish_turn.' })
  operationKey!: string | null;

  @Field(() => String, {
    description: 'SCHEMA_TOO_LARGE, UNSUPPORTED_SCHEMA, IRREVERSIBLE, RULE_VIOLATION or TOOL_LIMIT.',
  })
  code!: LeftOutCode;

  @Field(() => String)
  reason!: string;
}

@InputType()
export class SetConnectedToolsInput {
  @Field(() => ID)
  assistantId!: string;

  @Field(() => ID)
  connectionId!: string;

  @Field(() => Boolean)
  enabled!: boolean;
}

@ObjectType()
export class SetConnectedToolsPayload {
  @Field(() => Assistant, { nullable: true })
  assistant!: Assistant | null;

  @Field(() => Boolean, { description: 'False when the gate already was as asked.' })
  changed!: boolean;

  @Field(() => [UserError])
  userErrors!: UserError[];
}

@InputType()
export class BeginTurnInput {
  @Field(() => ID)
  assistantId!: string;

  @Field(() => String, { description: `The runtime's own conversation id (1–${MAX_NAME_CHARS} characters).` })
  conversationId!: string;

  @Field(() => ToolDialectEnum, {
    defaultValue: 'GENERIC',
    description:
      'The model API the tools are declared for; callTool then takes arguments and shapes results for it.',
  })
  dialect!: ToolDialect;

  @Field(() => ToolSearchInputType, {
    nullable: true,
    description: 'Tool search for assistants with many tools (docs/tool-search.md); default mode AUTO.',
  })
  toolSearch?: ToolSearchInputType | null;
}

@ObjectType()
export class BeginTurnPayload {
  @Field(() => ID)
  turnId!: string;

  @Field(() => [DeclaredToolType], {
    description: 'Built-ins first, connection tools next, finish_turn last.',
  })
  tools!: DeclaredToolType[];

  @Field(() => [LeftOutToolType], {
    description:
      "Callable tools that the dialect's API would refuse, left out of tools (never sent broken), with why.",
  })
  leftOut!: LeftOutToolType[];

  @Field(() => ToolSearchType, {
    description: 'Whether this turn searches its tools (docs/tool-search.md).',
  })
  toolSearch!: ToolSearchType;
}

@InputType()
export class CallToolInput {
  @Field(() => ID)
  turnId!: string;

  @Field(() => String, { description: 'The declared name the model called.' })
  name!: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  arguments?: JsonObject | null;
}

@ObjectType({
  description: 'What the model reads. Failures are results too: ok is false and message says why.',
})
export class CallToolPayload {
  @Field(() => Boolean)
  ok!: boolean;

  @Field(() => CallStatus)
  status!: CallStatus;

  @Field(() => [GraphQLJSONObject], { description: 'MCP-style content items.' })
  content!: JsonObject[];

  @Field(() => GraphQLJSONObject, { nullable: true })
  structuredContent!: JsonObject | null;

  @Field(() => String, { nullable: true, description: 'For failures: written for the model.' })
  message!: string | null;

  @Field(() => Boolean, { description: 'The result was cut to the size limit.' })
  truncated!: boolean;

  @Field(() => ID, { nullable: true })
  callId!: string | null;

  @Field(() => Int, { nullable: true })
  seq!: number | null;

  @Field(() => Boolean, {
    description:
      'True when the call is on record (its TurnCall and, for a WRITE, its ledger row) before this answer. ' +
      'False when the platform could not store the record, for example while its database is down: the ' +
      "result is still the tool's real result, and callId (when given) is the id its record will have. " +
      'A WRITE is sent only after its ledger intent is stored, so a WRITE that ran always has a ledger entry; ' +
      'its outcome is retried in the background, or closed as OUTCOME_UNKNOWN by the ledger sweep (docs/' +
      'ledger.md). Also false for calls refused without any record (the turn has finished, the tools ' +
      'could not be read).',
  })
  recorded!: boolean;

  @Field(() => Int, { description: 'Attempts at the call: 0, 1, or 2 after the one retry.' })
  attempts!: number;

  @Field(() => Int, {
    description: 'Refused requests sent again (new session, renewed token); not attempts.',
  })
  resends!: number;

  @Field(() => Int)
  durationMs!: number;

  @Field(() => GraphQLJSON, {
    description:
      "The result as the turn's dialect's next request takes it: OPENAI(_STRICT) the tool message's content (a string); " +
      "ANTHROPIC a tool_result's content blocks; GEMINI(_JSON_SCHEMA) functionResponse.response (an object); GENERIC " +
      "{ content, structuredContent?, isError }. Within the dialect's size budget.",
  })
  forModel!: JsonValue;
  @Field(() => Int, {
    nullable: true,
    description:
      'RATE_LIMITED, or UNAVAILABLE from an open circuit breaker: about when trying again may work, in ms (docs/limits.md, "Limits and breakers").',
  })
  retryAfterMs?: number | null;
}

@InputType()
export class FinishTurnInput {
  @Field(() => ID)
  turnId!: string;
}

@ObjectType()
export class FinishTurnPayload {
  @Field(() => Boolean, { description: 'False when the turn had already finished.' })
  finished!: boolean;
}
