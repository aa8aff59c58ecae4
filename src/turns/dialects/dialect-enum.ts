/** {@link ToolDialect} as a GraphQL enum (`ToolDialect`), for beginTurn's input and the Turn. */
import { registerEnumType } from 'type-graphql';
import { TOOL_DIALECTS, type ToolDialect } from './dialect.js';

export type { ToolDialect };

/** The same values as {@link TOOL_DIALECTS}, as the enum-like object type-graphql needs. */
export const ToolDialectEnum = Object.fromEntries(TOOL_DIALECTS.map((d) => [d, d])) as {
  readonly [K in ToolDialect]: K;
};

registerEnumType(ToolDialectEnum, {
  name: 'ToolDialect',
  description: 'The model API a turn declares its tools for (docs/declaring-tools.md).',
  valuesConfig: {
    GENERIC: {
      description: 'The canonical tools, as before dialects: name, description, inputSchema (the default).',
    },
    OPENAI: { description: 'OpenAI function tools (the Chat Completions shape), non-strict.' },
    OPENAI_STRICT: { description: 'OpenAI function tools with strict: true (Structured Outputs).' },
    ANTHROPIC: { description: 'Anthropic Messages API tools (input_schema).' },
    GEMINI: { description: 'Gemini function declarations with parameters (the OpenAPI 3.0 Schema subset).' },
    GEMINI_JSON_SCHEMA: { description: 'Gemini function declarations with parametersJsonSchema.' },
  },
});
