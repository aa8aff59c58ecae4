import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique, type Opt, type Ref } from '@mikro-orm/core';
import { Connection } from '../connections/connection.entity.js';
import { uuidv7 } from '../db/ids.js';
import { Assistant } from './assistant.entity.js';
import { MAX_NAME_CHARS } from '../names.js';

/** The customer's gate: this connection's tools are enabled on this assistant. */
@Entity({ tableName: 'assistant_connection' })
@Unique({ properties: ['assistant', 'connection'] })
export class AssistantConnection {
  @PrimaryKey({ type: 'uuid' })
  id: string = uuidv7();

  @ManyToOne(() => Assistant, { ref: true, deleteRule: 'cascade' })
  assistant: Ref<Assistant>;

  @Index()
  @ManyToOne(() => Connection, { ref: true, deleteRule: 'cascade' })
  connection: Ref<Connection>;

  @Property({ type: 'string', length: MAX_NAME_CHARS })
  enabledBy: string;

  @Property({ type: 'datetime' })
  createdAt: Date & Opt = new Date();

  constructor(assistant: Ref<Assistant>, connection: Ref<Connection>, enabledBy: string) {
    this.assistant = assistant;
    this.connection = connection;
    this.enabledBy = enabledBy;
  }
}
