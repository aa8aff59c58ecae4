import { Entity, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { Field, ObjectType } from 'type-graphql';
import { uuidv7 } from '../db/ids.js';
import { Node, toGlobalId } from '../graphql/node.js';
import { MAX_NAME_CHARS } from '../names.js';

/** A customer's tenant. Everything a customer can see belongs to exactly one workspace. */
@Entity({ tableName: 'workspace' })
@ObjectType({ implements: Node })
export class Workspace extends Node {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @Field(() => String)
  @Property({ type: 'string', length: MAX_NAME_CHARS })
  name: string;

  @Field(() => Date)
  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(name: string) {
    super();
    this.name = name;
  }

  override get nodeId(): string {
    return toGlobalId('Workspace', this.id);
  }
}
