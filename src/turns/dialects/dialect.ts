/** The model APIs a turn's tools can be declared for (issue 26). */
export const TOOL_DIALECTS = [
  'GENERIC',
  'OPENAI',
  'OPENAI_STRICT',
  'ANTHROPIC',
  'GEMINI',
  'GEMINI_JSON_SCHEMA',
] as const;
export type ToolDialect = (typeof TOOL_DIALECTS)[number];
