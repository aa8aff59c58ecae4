import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Field, ObjectType } from 'type-graphql';
import type { LeftOutCode } from './dialects/compile.js';
import { ToolDialectEnum, type ToolDialect } from './dialects/dialect-enum.js';
import { Assistant } from '../assistants/assistant.entity.js';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { MAX_NAME_CHARS } from '../names.js';

/**
 * One declared tool: the name the model saw and what it maps to. Descriptions and schemas are not
 * copied into every turn; the operation (or the audit trail) has them.
 */
export interface DeclaredToolRecord {
  name: string;
  /** Null for built-ins and finish_turn. */
  operationId: string | null;
  operationKey: string | null;
  /** Set when the tool could not be declared in the turn's dialect (issue 26): never callable in it. */
  leftOut?: { code: LeftOutCode; reason: string };
  /** On `search_tools`: the turn searches its tools (issue 31); found tools are in turn_found_tool. */
  search?: 'SERVICE';
}

/** One turn of a conversation: the tools declared to the model, and the calls made. */
@Entity({ tableName: 'turn' })
@Index({ properties: ['assistant', 'conversationId'] })
@ObjectType({ implements: Node })
export class Turn extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Index()
  @ManyToOne(() => Workspace, { ref: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace>;

  @ManyToOne(() => Assistant, { ref: true, deleteRule: 'cascade' })
  assistant: Ref<Assistant>;

  @Field(() => String)
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  conversationId: string;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  startedAt: Date & Opt = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'datetime', nullable: true })
  finishedAt: Date | null = null;

  /**
   * The SHA-256 (hex) of the declared-tools record's JSON: with the workspace, its row in
   * `declared_tool_list` (stored once per tool list, not once per turn; read by
   * src/turns/declared-tool-list.ts).
   */
  @Property({ type: 'string', length: 64 })
  declaredToolsDigest: string;

  @Field(() => ToolDialectEnum, { description: "The model API the turn's tools were declared for." })
  @Property({ type: 'string', length: 24, default: 'GENERIC' })
  dialect: ToolDialect & Opt = 'GENERIC';

  /** The last call's `seq`: incremented atomically as each call starts. */
  @Property({ type: 'integer', default: 0 })
  callSeq: number & Opt = 0;

  constructor(
    workspace: Ref<Workspace>,
    assistant: Ref<Assistant>,
    conversationId: string,
    declaredToolsDigest: string,
  ) {
    super();
    this.workspace = workspace;
    this.assistant = assistant;
    this.conversationId = conversationId;
    this.declaredToolsDigest = declaredToolsDigest;
  }

  override get nodeId(): string {
    return toGlobalId('Turn', this.id);
  }
}
