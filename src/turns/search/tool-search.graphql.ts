/** beginTurn's `toolSearch` input and payload (issue 31), as GraphQL types. */
import { Field, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import {
  TOOL_SEARCH_MODES,
  TOOL_SEARCH_PROVIDERS,
  type SearchChoice,
  type ToolSearchMode,
  type ToolSearchProvider,
} from './declare-search.js';

export const ToolSearchModeEnum = Object.fromEntries(TOOL_SEARCH_MODES.map((m) => [m, m])) as {
  readonly [K in ToolSearchMode]: K;
};
export const ToolSearchProviderEnum = Object.fromEntries(TOOL_SEARCH_PROVIDERS.map((p) => [p, p])) as {
  readonly [K in ToolSearchProvider]: K;
};

registerEnumType(ToolSearchModeEnum, {
  name: 'ToolSearchMode',
  description: 'Whether a turn searches its tools instead of declaring them all (docs/tool-search.md).',
  valuesConfig: {
    OFF: { description: 'Declare every callable tool (the dialect may leave some out past its cap).' },
    ON: { description: 'Always search.' },
    AUTO: {
      description:
        "Search when the callable tools exceed the dialect's tool cap (or TOOL_SEARCH_AUTO_TOOLS) or their declared schemas exceed TOOL_SEARCH_AUTO_BYTES (the default).",
    },
  },
});

registerEnumType(ToolSearchProviderEnum, {
  name: 'ToolSearchProvider',
  description: 'Who searches.',
  valuesConfig: {
    SERVICE: {
      description:
        'The service: the turn declares search_tools; callTool answers it with the matching declarations, which become callable in the turn (the default; every dialect).',
    },
    ANTHROPIC: {
      description:
        "Anthropic's server-side tool search (dialect ANTHROPIC only): every tool is declared, the others with defer_loading: true, plus Anthropic's BM25 tool search tool. Needs the advanced-tool-use beta header.",
    },
  },
});

@InputType()
export class ToolSearchInputType {
  @Field(() => ToolSearchModeEnum, { defaultValue: 'AUTO' })
  mode!: ToolSearchMode;

  @Field(() => Int, {
    nullable: true,
    description:
      'How many connection tools to declare up front (0–1000): the operations marked "always declare", in declared order. Default TOOL_SEARCH_DECLARE (20).',
  })
  declare?: number | null;

  @Field(() => ToolSearchProviderEnum, { defaultValue: 'SERVICE' })
  provider!: ToolSearchProvider;
}

@ObjectType('ToolSearch', { description: 'Whether the turn searches its tools, and how.' })
export class ToolSearchType {
  @Field(() => Boolean)
  on!: boolean;

  @Field(() => ToolSearchProviderEnum, { nullable: true })
  provider!: ToolSearchProvider | null;

  @Field(() => Int, { nullable: true, description: 'The most connection tools declared up front.' })
  declare!: number | null;
}

export function toolSearchPayload(choice: SearchChoice): ToolSearchType {
  return choice.on
    ? { on: true, provider: choice.provider, declare: choice.declare }
    : { on: false, provider: null, declare: null };
}
