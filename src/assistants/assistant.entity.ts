import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt, type Ref } from '@mikro-orm/core';
import { Field, ObjectType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { Workspace } from '../workspaces/workspace.entity.js';
import { MAX_NAME_CHARS } from '../names.js';

@Entity({ tableName: 'assistant' })
@ObjectType({ implements: Node })
export class Assistant extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Index()
  @ManyToOne(() => Workspace, { ref: true, deleteRule: 'cascade' })
  workspace: Ref<Workspace>;

  @Field(() => String)
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  name: string;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(workspace: Ref<Workspace>, name: string) {
    super();
    this.workspace = workspace;
    this.name = name;
  }

  override get nodeId(): string {
    return toGlobalId('Assistant', this.id);
  }
}
